package org.jetbrains.plugins.terminal;
public abstract class LocalTerminalCustomizer {
  public String[] customizeCommandAndEnvironment(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project,
                                                 @org.jetbrains.annotations.Nullable String workingDirectory,
                                                 @org.jetbrains.annotations.NotNull String[] command,
                                                 @org.jetbrains.annotations.NotNull java.util.Map<String, String> envs) {
    return command;
  }
}

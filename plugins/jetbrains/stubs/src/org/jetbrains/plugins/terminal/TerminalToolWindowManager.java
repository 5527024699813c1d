package org.jetbrains.plugins.terminal;
public final class TerminalToolWindowManager {
  public static TerminalToolWindowManager getInstance(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project) { throw new UnsupportedOperationException("compile-only stub"); }
  public @org.jetbrains.annotations.NotNull com.intellij.terminal.ui.TerminalWidget createShellWidget(@org.jetbrains.annotations.Nullable String workingDirectory,
                                                   @org.jetbrains.annotations.Nullable String tabName,
                                                   boolean requestFocus,
                                                   boolean deferSessionStartUntilUiShown) { throw new UnsupportedOperationException(); }
}

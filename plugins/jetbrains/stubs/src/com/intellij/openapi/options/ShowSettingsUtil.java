package com.intellij.openapi.options;
public abstract class ShowSettingsUtil {
  public static ShowSettingsUtil getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract <T extends Configurable> void showSettingsDialog(@org.jetbrains.annotations.Nullable com.intellij.openapi.project.Project project, @org.jetbrains.annotations.NotNull Class<T> configurableClass);
}

package com.intellij.openapi.wm;
public abstract class WindowManager {
  public static WindowManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.Nullable StatusBar getStatusBar(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project);
}

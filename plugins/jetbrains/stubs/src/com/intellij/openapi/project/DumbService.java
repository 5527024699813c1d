package com.intellij.openapi.project;
public abstract class DumbService {
  public static boolean isDumb(@org.jetbrains.annotations.NotNull Project project) { throw new UnsupportedOperationException("compile-only stub"); }
}

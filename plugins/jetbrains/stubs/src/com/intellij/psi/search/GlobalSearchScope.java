package com.intellij.psi.search;
public abstract class GlobalSearchScope extends SearchScope {
  public static @org.jetbrains.annotations.NotNull GlobalSearchScope projectScope(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project) { throw new UnsupportedOperationException("compile-only stub"); }
}

package com.intellij.openapi.util;
public final class Disposer {
  public static void dispose(@org.jetbrains.annotations.NotNull com.intellij.openapi.Disposable disposable) { throw new UnsupportedOperationException("compile-only stub"); }
}

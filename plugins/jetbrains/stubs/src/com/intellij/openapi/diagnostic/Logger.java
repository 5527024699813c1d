package com.intellij.openapi.diagnostic;
public abstract class Logger {
  public static @org.jetbrains.annotations.NotNull Logger getInstance(@org.jetbrains.annotations.NotNull Class<?> cl) { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract void info(String message);
  public abstract void warn(String message);
}

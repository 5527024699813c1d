package com.intellij.openapi.application;
public abstract class ReadAction<T> {
  public static <T> @org.jetbrains.annotations.NotNull NonBlockingReadAction<T> nonBlocking(@org.jetbrains.annotations.NotNull java.util.concurrent.Callable<? extends T> task) { throw new UnsupportedOperationException(); }
}

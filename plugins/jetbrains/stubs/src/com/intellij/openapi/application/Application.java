package com.intellij.openapi.application;
public interface Application extends com.intellij.openapi.components.ComponentManager {
  void invokeLater(@org.jetbrains.annotations.NotNull Runnable runnable);
  void invokeAndWait(@org.jetbrains.annotations.NotNull Runnable runnable);
  void runReadAction(@org.jetbrains.annotations.NotNull Runnable action);
  <T> T runReadAction(@org.jetbrains.annotations.NotNull com.intellij.openapi.util.Computable<T> computation);
  <T, E extends Throwable> T runReadAction(@org.jetbrains.annotations.NotNull com.intellij.openapi.util.ThrowableComputable<T, E> computation) throws E;
  void runWriteAction(@org.jetbrains.annotations.NotNull Runnable action);
  <T> T runWriteAction(@org.jetbrains.annotations.NotNull com.intellij.openapi.util.Computable<T> computation);
  <T, E extends Throwable> T runWriteAction(@org.jetbrains.annotations.NotNull com.intellij.openapi.util.ThrowableComputable<T, E> computation) throws E;
  @org.jetbrains.annotations.NotNull java.util.concurrent.Future<?> executeOnPooledThread(@org.jetbrains.annotations.NotNull Runnable action);
  <T> @org.jetbrains.annotations.NotNull java.util.concurrent.Future<T> executeOnPooledThread(@org.jetbrains.annotations.NotNull java.util.concurrent.Callable<T> action);
}

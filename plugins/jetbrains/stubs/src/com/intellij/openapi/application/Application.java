package com.intellij.openapi.application;
public interface Application extends com.intellij.openapi.components.ComponentManager {
  void invokeLater(@org.jetbrains.annotations.NotNull Runnable runnable);
  void runWriteAction(@org.jetbrains.annotations.NotNull Runnable action);
  void invokeAndWait(@org.jetbrains.annotations.NotNull Runnable runnable);
  @org.jetbrains.annotations.NotNull java.util.concurrent.Future<?> executeOnPooledThread(@org.jetbrains.annotations.NotNull Runnable action);
}

package com.intellij.openapi.components;
public interface PersistentStateComponent<T> {
  @org.jetbrains.annotations.Nullable T getState();
  void loadState(@org.jetbrains.annotations.NotNull T state);
}

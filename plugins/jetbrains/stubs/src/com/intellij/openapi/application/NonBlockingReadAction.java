package com.intellij.openapi.application;
public interface NonBlockingReadAction<T> {
  @org.jetbrains.annotations.NotNull NonBlockingReadAction<T> expireWith(@org.jetbrains.annotations.NotNull com.intellij.openapi.Disposable parentDisposable);
  T executeSynchronously();
}

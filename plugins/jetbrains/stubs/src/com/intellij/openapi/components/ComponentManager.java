package com.intellij.openapi.components;
public interface ComponentManager extends com.intellij.openapi.Disposable {
  <T> T getService(@org.jetbrains.annotations.NotNull Class<T> serviceClass);
  @org.jetbrains.annotations.NotNull com.intellij.util.messages.MessageBus getMessageBus();
  boolean isDisposed();
}

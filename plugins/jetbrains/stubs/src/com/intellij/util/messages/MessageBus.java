package com.intellij.util.messages;
public interface MessageBus {
  @org.jetbrains.annotations.NotNull MessageBusConnection connect(@org.jetbrains.annotations.NotNull com.intellij.openapi.Disposable parentDisposable);
}

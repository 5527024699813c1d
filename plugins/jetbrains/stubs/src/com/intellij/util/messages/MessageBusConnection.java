package com.intellij.util.messages;
public interface MessageBusConnection {
  <L> void subscribe(@org.jetbrains.annotations.NotNull Topic<L> topic, @org.jetbrains.annotations.NotNull L handler);
}

package com.intellij.openapi.roots;
public interface ModuleRootListener extends java.util.EventListener {
  com.intellij.util.messages.Topic<ModuleRootListener> TOPIC = new com.intellij.util.messages.Topic<>();
  default void rootsChanged(@org.jetbrains.annotations.NotNull ModuleRootEvent event) {}
}

package com.intellij.openapi.wm;
public interface StatusBar {
  void updateWidget(@org.jetbrains.annotations.NotNull String id);
}

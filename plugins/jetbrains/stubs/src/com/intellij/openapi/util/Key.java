package com.intellij.openapi.util;
public class Key<T> {
  public Key(@org.jetbrains.annotations.NotNull String name) {}
  public static <T> @org.jetbrains.annotations.NotNull Key<T> create(@org.jetbrains.annotations.NotNull String name) { return new Key<>(name); }
}

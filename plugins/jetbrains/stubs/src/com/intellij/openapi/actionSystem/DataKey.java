package com.intellij.openapi.actionSystem;
public class DataKey<T> {
  private DataKey() {}
  public static <T> @org.jetbrains.annotations.NotNull DataKey<T> create(@org.jetbrains.annotations.NotNull String name) { return new DataKey<>(); }
}

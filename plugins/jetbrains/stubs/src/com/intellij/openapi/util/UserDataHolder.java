package com.intellij.openapi.util;
public interface UserDataHolder {
  <T> void putUserData(@org.jetbrains.annotations.NotNull Key<T> key, @org.jetbrains.annotations.Nullable T value);
}

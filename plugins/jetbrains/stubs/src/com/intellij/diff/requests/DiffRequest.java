package com.intellij.diff.requests;
public abstract class DiffRequest implements com.intellij.openapi.util.UserDataHolder {
  @Override public <T> void putUserData(@org.jetbrains.annotations.NotNull com.intellij.openapi.util.Key<T> key, @org.jetbrains.annotations.Nullable T value) {}
}

package com.intellij.openapi.util;
public class UserDataHolderBase implements UserDataHolder {
  @Override public <T> void putUserData(Key<T> key, T value) {}
}

package com.intellij.openapi.vfs;
public abstract class VirtualFile extends com.intellij.openapi.util.UserDataHolderBase {
  public static final String PROP_NAME = "name";
  public abstract @org.jetbrains.annotations.NotNull String getPath();
  public abstract @org.jetbrains.annotations.NotNull VirtualFileSystem getFileSystem();
  public abstract boolean isDirectory();
}

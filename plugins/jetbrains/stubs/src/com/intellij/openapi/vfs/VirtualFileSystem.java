package com.intellij.openapi.vfs;
public abstract class VirtualFileSystem {
  public abstract @org.jetbrains.annotations.NotNull String getProtocol();
}

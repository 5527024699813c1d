package com.intellij.testFramework;
public class LightVirtualFile extends com.intellij.openapi.vfs.VirtualFile {
  public LightVirtualFile(@org.jetbrains.annotations.NotNull String name, @org.jetbrains.annotations.NotNull CharSequence content) {}
  @Override public @org.jetbrains.annotations.NotNull String getPath() { throw new UnsupportedOperationException(); }
  @Override public @org.jetbrains.annotations.NotNull com.intellij.openapi.vfs.VirtualFileSystem getFileSystem() { throw new UnsupportedOperationException(); }
  @Override public boolean isDirectory() { throw new UnsupportedOperationException(); }
}

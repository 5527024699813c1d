package com.intellij.openapi.vfs;
public abstract class VirtualFileManager {
  public static final com.intellij.util.messages.Topic<com.intellij.openapi.vfs.newvfs.BulkFileListener> VFS_CHANGES = new com.intellij.util.messages.Topic<>();
  public static @org.jetbrains.annotations.NotNull VirtualFileManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.Nullable VirtualFile findFileByUrl(@org.jetbrains.annotations.NotNull String url);
}

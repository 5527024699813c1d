package com.intellij.openapi.vfs;
public abstract class VirtualFileManager {
  public static final com.intellij.util.messages.Topic<com.intellij.openapi.vfs.newvfs.BulkFileListener> VFS_CHANGES = new com.intellij.util.messages.Topic<>();
}

package com.intellij.openapi.vfs.newvfs.events;
public abstract class VFileEvent {
  public abstract @org.jetbrains.annotations.NotNull String getPath();
}

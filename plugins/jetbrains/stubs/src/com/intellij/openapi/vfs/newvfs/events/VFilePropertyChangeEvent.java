package com.intellij.openapi.vfs.newvfs.events;
public final class VFilePropertyChangeEvent extends VFileEvent {
  public @org.jetbrains.annotations.NotNull String getPath() { return ""; }
  public @org.jetbrains.annotations.NotNull String getPropertyName() { return ""; }
  public @org.jetbrains.annotations.NotNull String getOldPath() { return ""; }
  public @org.jetbrains.annotations.NotNull String getNewPath() { return ""; }
}

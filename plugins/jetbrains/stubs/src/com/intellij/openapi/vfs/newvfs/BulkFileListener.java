package com.intellij.openapi.vfs.newvfs;
public interface BulkFileListener {
  default void after(@org.jetbrains.annotations.NotNull java.util.List<? extends com.intellij.openapi.vfs.newvfs.events.VFileEvent> events) {}
}

package com.intellij.openapi.fileEditor;
public final class FileEditorManagerEvent extends java.util.EventObject {
  public FileEditorManagerEvent(Object source) { super(source); }
  public @org.jetbrains.annotations.Nullable com.intellij.openapi.vfs.VirtualFile getNewFile() { return null; }
}

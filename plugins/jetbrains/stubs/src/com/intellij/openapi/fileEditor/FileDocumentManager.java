package com.intellij.openapi.fileEditor;
public abstract class FileDocumentManager {
  public static @org.jetbrains.annotations.NotNull FileDocumentManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.Nullable com.intellij.openapi.vfs.VirtualFile getFile(@org.jetbrains.annotations.NotNull com.intellij.openapi.editor.Document document);
  public abstract @org.jetbrains.annotations.Nullable com.intellij.openapi.editor.Document getDocument(@org.jetbrains.annotations.NotNull com.intellij.openapi.vfs.VirtualFile file);
  public abstract boolean isFileModified(@org.jetbrains.annotations.NotNull com.intellij.openapi.vfs.VirtualFile file);
}

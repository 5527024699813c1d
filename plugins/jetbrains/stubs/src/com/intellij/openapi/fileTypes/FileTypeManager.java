package com.intellij.openapi.fileTypes;
public abstract class FileTypeManager {
  public static @org.jetbrains.annotations.NotNull FileTypeManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.NotNull FileType getFileTypeByFileName(@org.jetbrains.annotations.NotNull String fileName);
}

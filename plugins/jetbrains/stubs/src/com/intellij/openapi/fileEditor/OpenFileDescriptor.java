package com.intellij.openapi.fileEditor;
public class OpenFileDescriptor {
  public OpenFileDescriptor(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project, @org.jetbrains.annotations.NotNull com.intellij.openapi.vfs.VirtualFile file, int logicalLine, int logicalColumn) { throw new UnsupportedOperationException("compile-only stub"); }
}

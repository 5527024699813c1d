package com.intellij.diff;
import com.intellij.diff.contents.DocumentContent;
import com.intellij.diff.contents.EmptyContent;
public abstract class DiffContentFactory {
  public static @org.jetbrains.annotations.NotNull DiffContentFactory getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.NotNull EmptyContent createEmpty();
  public abstract @org.jetbrains.annotations.NotNull DocumentContent create(@org.jetbrains.annotations.Nullable com.intellij.openapi.project.Project project, @org.jetbrains.annotations.NotNull com.intellij.openapi.editor.Document document, @org.jetbrains.annotations.Nullable com.intellij.openapi.fileTypes.FileType fileType);
}

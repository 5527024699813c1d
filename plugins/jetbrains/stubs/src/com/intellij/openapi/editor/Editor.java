package com.intellij.openapi.editor;
public interface Editor {
  @org.jetbrains.annotations.NotNull Document getDocument();
  @org.jetbrains.annotations.NotNull CaretModel getCaretModel();
  @org.jetbrains.annotations.NotNull SelectionModel getSelectionModel();
  @org.jetbrains.annotations.Nullable com.intellij.openapi.project.Project getProject();
}

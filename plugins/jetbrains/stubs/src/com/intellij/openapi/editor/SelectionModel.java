package com.intellij.openapi.editor;
public interface SelectionModel {
  @org.jetbrains.annotations.Nullable String getSelectedText();
  int getSelectionStart();
  int getSelectionEnd();
  void setSelection(int startOffset, int endOffset);
}

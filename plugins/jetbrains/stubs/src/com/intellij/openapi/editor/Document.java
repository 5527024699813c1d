package com.intellij.openapi.editor;
public interface Document {
  @org.jetbrains.annotations.NotNull String getText();
  int getLineNumber(int offset);
  int getLineStartOffset(int line);
  void setReadOnly(boolean isReadOnly);
  void setText(@org.jetbrains.annotations.NotNull CharSequence text);
}

package com.intellij.openapi.editor;
public interface Document {
  @org.jetbrains.annotations.NotNull String getText();
  @org.jetbrains.annotations.NotNull CharSequence getImmutableCharSequence();
  int getLineNumber(int offset);
  int getLineEndOffset(int line);
  int getLineStartOffset(int line);
  void setReadOnly(boolean isReadOnly);
  void setText(@org.jetbrains.annotations.NotNull CharSequence text);
}

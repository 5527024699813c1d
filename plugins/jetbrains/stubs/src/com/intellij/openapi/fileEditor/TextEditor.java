package com.intellij.openapi.fileEditor;
public interface TextEditor extends FileEditor {
  @org.jetbrains.annotations.NotNull com.intellij.openapi.editor.Editor getEditor();
}

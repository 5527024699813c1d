package com.intellij.openapi.editor.event;
public interface EditorEventMulticaster {
  void addCaretListener(@org.jetbrains.annotations.NotNull CaretListener listener, @org.jetbrains.annotations.NotNull com.intellij.openapi.Disposable parentDisposable);
  void addSelectionListener(@org.jetbrains.annotations.NotNull SelectionListener listener, @org.jetbrains.annotations.NotNull com.intellij.openapi.Disposable parentDisposable);
}

package com.intellij.openapi.editor;
public abstract class EditorFactory {
  public static EditorFactory getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.NotNull Document createDocument(@org.jetbrains.annotations.NotNull CharSequence text);
  public abstract @org.jetbrains.annotations.NotNull com.intellij.openapi.editor.event.EditorEventMulticaster getEventMulticaster();
}

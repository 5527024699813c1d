package com.intellij.openapi.editor.event;
public class SelectionEvent extends java.util.EventObject {
  public SelectionEvent(Object source) { super(source); }
  public @org.jetbrains.annotations.NotNull com.intellij.openapi.editor.Editor getEditor() { throw new UnsupportedOperationException(); }
}

package com.intellij.openapi.editor.event;
public class CaretEvent extends java.util.EventObject {
  public CaretEvent(Object source) { super(source); }
  public @org.jetbrains.annotations.NotNull com.intellij.openapi.editor.Editor getEditor() { throw new UnsupportedOperationException(); }
}

package com.intellij.openapi.editor.event;
public interface SelectionListener extends java.util.EventListener {
  default void selectionChanged(@org.jetbrains.annotations.NotNull SelectionEvent e) {}
}

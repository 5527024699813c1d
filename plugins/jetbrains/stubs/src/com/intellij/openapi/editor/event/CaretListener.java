package com.intellij.openapi.editor.event;
public interface CaretListener extends java.util.EventListener {
  default void caretPositionChanged(@org.jetbrains.annotations.NotNull CaretEvent event) {}
}

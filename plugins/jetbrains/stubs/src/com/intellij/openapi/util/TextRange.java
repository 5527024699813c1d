package com.intellij.openapi.util;
public class TextRange {
  public final int getStartOffset() { throw new UnsupportedOperationException("compile-only stub"); }
  public final int getEndOffset() { throw new UnsupportedOperationException("compile-only stub"); }
}

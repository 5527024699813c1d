package com.intellij.lang.annotation;
public final class HighlightSeverity implements Comparable<HighlightSeverity> {
  public final int myVal = 0;
  public static final HighlightSeverity WEAK_WARNING = null;
  public static final HighlightSeverity WARNING = null;
  public static final HighlightSeverity ERROR = null;
  public @org.jetbrains.annotations.NotNull String getName() { throw new UnsupportedOperationException("compile-only stub"); }
  @Override public int compareTo(@org.jetbrains.annotations.NotNull HighlightSeverity highlightSeverity) { throw new UnsupportedOperationException("compile-only stub"); }
}

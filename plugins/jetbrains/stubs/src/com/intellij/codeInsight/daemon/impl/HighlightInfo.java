package com.intellij.codeInsight.daemon.impl;
public class HighlightInfo {
  public final int startOffset = 0;
  public final int endOffset = 0;
  public String getDescription() { throw new UnsupportedOperationException("compile-only stub"); }
  public @org.jetbrains.annotations.NotNull com.intellij.lang.annotation.HighlightSeverity getSeverity() { throw new UnsupportedOperationException("compile-only stub"); }
}

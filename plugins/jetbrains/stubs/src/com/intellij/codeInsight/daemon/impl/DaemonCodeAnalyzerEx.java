package com.intellij.codeInsight.daemon.impl;
public abstract class DaemonCodeAnalyzerEx {
  public static boolean processHighlights(@org.jetbrains.annotations.NotNull com.intellij.openapi.editor.Document document, @org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project, @org.jetbrains.annotations.Nullable com.intellij.lang.annotation.HighlightSeverity minSeverity, int startOffset, int endOffset, @org.jetbrains.annotations.NotNull com.intellij.util.Processor<? super HighlightInfo> processor) { throw new UnsupportedOperationException("compile-only stub"); }
}

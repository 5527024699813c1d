package com.intellij.diff.requests;
import com.intellij.diff.contents.DiffContent;
public class SimpleDiffRequest extends ContentDiffRequest {
  public SimpleDiffRequest(@org.jetbrains.annotations.Nullable String title,
                           @org.jetbrains.annotations.NotNull DiffContent content1,
                           @org.jetbrains.annotations.NotNull DiffContent content2,
                           @org.jetbrains.annotations.Nullable String title1,
                           @org.jetbrains.annotations.Nullable String title2) {}
}

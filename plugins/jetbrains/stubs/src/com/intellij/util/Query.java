package com.intellij.util;
public interface Query<Result> extends Iterable<Result> {
  boolean forEach(@org.jetbrains.annotations.NotNull Processor<? super Result> consumer);
}

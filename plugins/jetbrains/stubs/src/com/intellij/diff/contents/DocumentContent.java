package com.intellij.diff.contents;
public interface DocumentContent extends DiffContent {}

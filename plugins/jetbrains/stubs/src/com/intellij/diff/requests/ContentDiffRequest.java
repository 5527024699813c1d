package com.intellij.diff.requests;
public abstract class ContentDiffRequest extends DiffRequest {}

package com.intellij.openapi.editor;
public interface SelectionModel { @org.jetbrains.annotations.Nullable String getSelectedText(); }

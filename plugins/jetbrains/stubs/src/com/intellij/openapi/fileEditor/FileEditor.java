package com.intellij.openapi.fileEditor;
public interface FileEditor {}

package com.intellij.openapi.fileTypes;
public interface FileType {}

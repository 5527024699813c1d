package com.intellij.diff.contents;
public interface DiffContent extends com.intellij.openapi.util.UserDataHolder {}

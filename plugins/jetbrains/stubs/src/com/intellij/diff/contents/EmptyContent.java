package com.intellij.diff.contents;
public class EmptyContent extends com.intellij.openapi.util.UserDataHolderBase implements DiffContent {}

package com.intellij.diff.requests;
public abstract class DiffRequest extends com.intellij.openapi.util.UserDataHolderBase {}

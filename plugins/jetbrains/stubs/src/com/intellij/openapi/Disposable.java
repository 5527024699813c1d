package com.intellij.openapi;
public interface Disposable { void dispose(); }

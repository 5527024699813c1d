package com.intellij.openapi.util;
public interface Computable<T> { T compute(); }

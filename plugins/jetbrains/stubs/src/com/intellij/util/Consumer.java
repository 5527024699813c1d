package com.intellij.util;
public interface Consumer<T> { void consume(T t); }

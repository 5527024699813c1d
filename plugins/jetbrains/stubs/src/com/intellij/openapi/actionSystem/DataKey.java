package com.intellij.openapi.actionSystem;
public class DataKey<T> {}

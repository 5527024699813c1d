package com.intellij.openapi.application;
public abstract class ApplicationInfo {
  public static ApplicationInfo getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract String getFullApplicationName();
}

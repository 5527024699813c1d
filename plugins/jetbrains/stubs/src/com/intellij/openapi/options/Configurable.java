package com.intellij.openapi.options;
public interface Configurable extends UnnamedConfigurable {
  String getDisplayName();
}

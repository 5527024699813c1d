package com.intellij.openapi.options;
public class ConfigurationException extends Exception {
  public ConfigurationException(String message) { super(message); }
}

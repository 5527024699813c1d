package com.intellij.openapi.options;
public interface UnnamedConfigurable {
  @org.jetbrains.annotations.Nullable javax.swing.JComponent createComponent();
  boolean isModified();
  void apply() throws ConfigurationException;
  default void reset() {}
}

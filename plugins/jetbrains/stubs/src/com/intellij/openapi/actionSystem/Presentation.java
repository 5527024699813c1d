package com.intellij.openapi.actionSystem;
public final class Presentation {
  public boolean isEnabled() { return true; }
  public void setEnabled(boolean enabled) {}
}

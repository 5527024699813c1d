package com.intellij.navigation;
public interface ItemPresentation {
  @org.jetbrains.annotations.Nullable String getPresentableText();
  default @org.jetbrains.annotations.Nullable String getLocationString() { return null; }
}

package com.intellij.navigation;
public interface NavigationItem {
  @org.jetbrains.annotations.Nullable String getName();
  @org.jetbrains.annotations.Nullable ItemPresentation getPresentation();
}

package com.intellij.openapi.wm;
public interface StatusBarWidgetFactory {
  @org.jetbrains.annotations.NotNull String getId();
  @org.jetbrains.annotations.NotNull String getDisplayName();
  default boolean isAvailable(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project) { return true; }
  @org.jetbrains.annotations.NotNull StatusBarWidget createWidget(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project);
}

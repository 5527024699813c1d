package com.intellij.openapi.wm;
// Mirrors the strictest form (2020.x-2022.x, where these were abstract; later
// versions give isAvailable/disposeWidget/canBeEnabledOn defaults), so the
// factory implements all of them and compiles against every version.
public interface StatusBarWidgetFactory {
  @org.jetbrains.annotations.NotNull String getId();
  @org.jetbrains.annotations.NotNull String getDisplayName();
  boolean isAvailable(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project);
  @org.jetbrains.annotations.NotNull StatusBarWidget createWidget(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project);
  void disposeWidget(@org.jetbrains.annotations.NotNull StatusBarWidget widget);
  boolean canBeEnabledOn(@org.jetbrains.annotations.NotNull StatusBar statusBar);
}

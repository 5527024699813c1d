package com.intellij.openapi.project;
public interface Project extends com.intellij.openapi.components.ComponentManager {
  @org.jetbrains.annotations.Nullable String getBasePath();
}

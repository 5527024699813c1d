package com.intellij.notification;
public class Notification {
  public void notify(@org.jetbrains.annotations.Nullable com.intellij.openapi.project.Project project) {}
}

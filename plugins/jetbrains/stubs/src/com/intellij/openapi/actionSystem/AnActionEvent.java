package com.intellij.openapi.actionSystem;
public class AnActionEvent {
  public @org.jetbrains.annotations.Nullable com.intellij.openapi.project.Project getProject() { return null; }
  public @org.jetbrains.annotations.NotNull Presentation getPresentation() { throw new UnsupportedOperationException(); }
  public <T> @org.jetbrains.annotations.Nullable T getData(@org.jetbrains.annotations.NotNull DataKey<T> key) { return null; }
}

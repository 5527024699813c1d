package com.intellij.openapi.actionSystem;
public abstract class AnAction {
  public AnAction() {}
  public abstract void actionPerformed(@org.jetbrains.annotations.NotNull AnActionEvent e);
  public void update(@org.jetbrains.annotations.NotNull AnActionEvent e) {}
  public @org.jetbrains.annotations.NotNull ActionUpdateThread getActionUpdateThread() { return ActionUpdateThread.BGT; }
}

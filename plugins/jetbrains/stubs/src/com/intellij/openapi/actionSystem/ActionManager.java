package com.intellij.openapi.actionSystem;
public abstract class ActionManager {
  public static ActionManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.Nullable AnAction getAction(@org.jetbrains.annotations.NotNull String actionId);
}

package com.intellij.openapi.actionSystem;
public class CommonDataKeys {
  public static final DataKey<com.intellij.openapi.editor.Editor> EDITOR = DataKey.create("editor");
}

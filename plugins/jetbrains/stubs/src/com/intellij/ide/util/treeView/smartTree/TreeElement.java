package com.intellij.ide.util.treeView.smartTree;
public interface TreeElement {
  @org.jetbrains.annotations.NotNull com.intellij.navigation.ItemPresentation getPresentation();
  TreeElement @org.jetbrains.annotations.NotNull [] getChildren();
}

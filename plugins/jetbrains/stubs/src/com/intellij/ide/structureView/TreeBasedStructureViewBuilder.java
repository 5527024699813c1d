package com.intellij.ide.structureView;
public abstract class TreeBasedStructureViewBuilder implements StructureViewBuilder {
  public abstract @org.jetbrains.annotations.NotNull StructureViewModel createStructureViewModel(@org.jetbrains.annotations.Nullable com.intellij.openapi.editor.Editor editor);
}

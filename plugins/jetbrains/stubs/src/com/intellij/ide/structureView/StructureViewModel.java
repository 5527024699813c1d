package com.intellij.ide.structureView;
public interface StructureViewModel extends com.intellij.openapi.Disposable {
  @org.jetbrains.annotations.NotNull StructureViewTreeElement getRoot();
}

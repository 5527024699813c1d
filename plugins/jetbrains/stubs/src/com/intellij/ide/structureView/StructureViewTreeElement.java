package com.intellij.ide.structureView;
public interface StructureViewTreeElement extends com.intellij.ide.util.treeView.smartTree.TreeElement {
  Object getValue();
}

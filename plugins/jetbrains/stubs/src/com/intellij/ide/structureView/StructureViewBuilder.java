package com.intellij.ide.structureView;
public interface StructureViewBuilder {}

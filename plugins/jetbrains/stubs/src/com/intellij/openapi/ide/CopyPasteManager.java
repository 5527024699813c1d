package com.intellij.openapi.ide;
public abstract class CopyPasteManager {
  public static CopyPasteManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract void setContents(@org.jetbrains.annotations.NotNull java.awt.datatransfer.Transferable content);
}

package com.intellij.psi;
public interface PsiFile extends PsiElement {
  com.intellij.openapi.vfs.VirtualFile getVirtualFile();
  @org.jetbrains.annotations.Nullable PsiElement findElementAt(int offset);
}

package com.intellij.psi;
public interface PsiNamedElement extends PsiElement {
  @org.jetbrains.annotations.Nullable String getName();
}

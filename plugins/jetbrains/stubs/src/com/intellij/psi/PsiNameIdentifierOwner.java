package com.intellij.psi;
public interface PsiNameIdentifierOwner extends PsiNamedElement {
  @org.jetbrains.annotations.Nullable PsiElement getNameIdentifier();
}

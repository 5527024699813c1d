package com.intellij.psi;
public interface PsiReference {
  @org.jetbrains.annotations.NotNull PsiElement getElement();
  @org.jetbrains.annotations.NotNull com.intellij.openapi.util.TextRange getRangeInElement();
  @org.jetbrains.annotations.Nullable PsiElement resolve();
}

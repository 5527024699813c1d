package com.intellij.psi;
public interface PsiElement extends com.intellij.openapi.util.UserDataHolder {
  @org.jetbrains.annotations.Nullable PsiElement getParent();
  @org.jetbrains.annotations.Nullable PsiFile getContainingFile();
  com.intellij.openapi.util.TextRange getTextRange();
  int getTextOffset();
  @org.jetbrains.annotations.Nullable PsiReference findReferenceAt(int offset);
  @org.jetbrains.annotations.NotNull PsiElement getNavigationElement();
  @org.jetbrains.annotations.NotNull com.intellij.lang.Language getLanguage();
  boolean isValid();
}

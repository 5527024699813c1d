package com.intellij.lang.documentation;
public interface DocumentationProvider {
  default @org.jetbrains.annotations.Nullable String getQuickNavigateInfo(com.intellij.psi.PsiElement element, com.intellij.psi.PsiElement originalElement) { return null; }
  default @org.jetbrains.annotations.Nullable String generateDoc(com.intellij.psi.PsiElement element, @org.jetbrains.annotations.Nullable com.intellij.psi.PsiElement originalElement) { return null; }
}

package com.intellij.psi.search.searches;
public class ReferencesSearch {
  public static @org.jetbrains.annotations.NotNull com.intellij.util.Query<com.intellij.psi.PsiReference> search(@org.jetbrains.annotations.NotNull com.intellij.psi.PsiElement element, @org.jetbrains.annotations.NotNull com.intellij.psi.search.SearchScope searchScope) { throw new UnsupportedOperationException("compile-only stub"); }
}

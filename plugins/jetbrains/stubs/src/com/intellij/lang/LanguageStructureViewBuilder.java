package com.intellij.lang;
public final class LanguageStructureViewBuilder {
  public static final LanguageStructureViewBuilder INSTANCE = null;
  public @org.jetbrains.annotations.Nullable com.intellij.ide.structureView.StructureViewBuilder getStructureViewBuilder(@org.jetbrains.annotations.NotNull com.intellij.psi.PsiFile file) { throw new UnsupportedOperationException("compile-only stub"); }
}

package com.intellij.psi;
public abstract class PsiManager {
  public static @org.jetbrains.annotations.NotNull PsiManager getInstance(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project) { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.Nullable PsiFile findFile(@org.jetbrains.annotations.NotNull com.intellij.openapi.vfs.VirtualFile file);
}

package com.intellij.openapi.roots;
public abstract class ProjectRootManager {
  public static ProjectRootManager getInstance(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project) { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract com.intellij.openapi.vfs.VirtualFile @org.jetbrains.annotations.NotNull [] getContentRoots();
}

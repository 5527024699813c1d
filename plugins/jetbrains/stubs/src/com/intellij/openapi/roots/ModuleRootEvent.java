package com.intellij.openapi.roots;
public abstract class ModuleRootEvent extends java.util.EventObject {
  protected ModuleRootEvent(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project) { super(project); }
}

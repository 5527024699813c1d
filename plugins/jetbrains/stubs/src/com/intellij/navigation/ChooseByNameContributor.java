package com.intellij.navigation;
public interface ChooseByNameContributor {
  com.intellij.openapi.extensions.ExtensionPointName<ChooseByNameContributor> SYMBOL_EP_NAME = null;
  String @org.jetbrains.annotations.NotNull [] getNames(com.intellij.openapi.project.Project project, boolean includeNonProjectItems);
  NavigationItem @org.jetbrains.annotations.NotNull [] getItemsByName(String name, String pattern, com.intellij.openapi.project.Project project, boolean includeNonProjectItems);
}

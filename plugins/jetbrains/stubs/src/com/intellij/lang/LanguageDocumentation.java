package com.intellij.lang;
public final class LanguageDocumentation {
  public static final LanguageDocumentation INSTANCE = null;
  public com.intellij.lang.documentation.DocumentationProvider forLanguage(@org.jetbrains.annotations.NotNull Language l) { throw new UnsupportedOperationException("compile-only stub"); }
}

package com.intellij.psi.search;
public abstract class SearchScope {}

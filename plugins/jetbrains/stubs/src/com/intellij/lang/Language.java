package com.intellij.lang;
public abstract class Language {}

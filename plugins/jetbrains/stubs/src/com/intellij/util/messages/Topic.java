package com.intellij.util.messages;
public class Topic<L> {}

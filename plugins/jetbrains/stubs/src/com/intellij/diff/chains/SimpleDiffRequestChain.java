package com.intellij.diff.chains;
public class SimpleDiffRequestChain extends com.intellij.openapi.util.UserDataHolderBase implements DiffRequestChain {
  public SimpleDiffRequestChain(@org.jetbrains.annotations.NotNull com.intellij.diff.requests.DiffRequest request) {}
}

package com.intellij.diff.chains;
public interface DiffRequestChain extends com.intellij.openapi.util.UserDataHolder {}

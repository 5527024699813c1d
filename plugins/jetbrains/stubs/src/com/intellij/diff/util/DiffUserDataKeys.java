package com.intellij.diff.util;
import com.intellij.openapi.actionSystem.AnAction;
import com.intellij.openapi.util.Key;
import java.util.List;
public interface DiffUserDataKeys {
  Key<List<AnAction>> CONTEXT_ACTIONS = Key.create("Diff.ContextActions");
}

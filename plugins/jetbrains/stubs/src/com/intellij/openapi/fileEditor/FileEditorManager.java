package com.intellij.openapi.fileEditor;
import com.intellij.openapi.vfs.VirtualFile;
public abstract class FileEditorManager {
  public static FileEditorManager getInstance(@org.jetbrains.annotations.NotNull com.intellij.openapi.project.Project project) { throw new UnsupportedOperationException("compile-only stub"); }
  public abstract @org.jetbrains.annotations.Nullable com.intellij.openapi.editor.Editor getSelectedTextEditor();
  public abstract VirtualFile @org.jetbrains.annotations.NotNull [] getSelectedFiles();
  public abstract FileEditor @org.jetbrains.annotations.NotNull [] openFile(@org.jetbrains.annotations.NotNull VirtualFile file, boolean focusEditor);
  public abstract void closeFile(@org.jetbrains.annotations.NotNull VirtualFile file);
  public abstract VirtualFile @org.jetbrains.annotations.NotNull [] getOpenFiles();
  public abstract FileEditor @org.jetbrains.annotations.NotNull [] getAllEditors(@org.jetbrains.annotations.NotNull VirtualFile file);
  public abstract @org.jetbrains.annotations.Nullable com.intellij.openapi.editor.Editor openTextEditor(@org.jetbrains.annotations.NotNull OpenFileDescriptor descriptor, boolean focusEditor);
  public abstract boolean isFileOpen(@org.jetbrains.annotations.NotNull VirtualFile file);
}

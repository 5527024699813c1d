package com.intellij.openapi.fileEditor;
import com.intellij.openapi.vfs.VirtualFile;
import com.intellij.util.messages.Topic;
public interface FileEditorManagerListener extends java.util.EventListener {
  Topic<FileEditorManagerListener> FILE_EDITOR_MANAGER = new Topic<>();
  default void fileOpened(@org.jetbrains.annotations.NotNull FileEditorManager source, @org.jetbrains.annotations.NotNull VirtualFile file) {}
  default void fileClosed(@org.jetbrains.annotations.NotNull FileEditorManager source, @org.jetbrains.annotations.NotNull VirtualFile file) {}
  default void selectionChanged(@org.jetbrains.annotations.NotNull FileEditorManagerEvent event) {}
}

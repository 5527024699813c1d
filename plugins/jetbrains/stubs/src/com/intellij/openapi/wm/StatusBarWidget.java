package com.intellij.openapi.wm;
public interface StatusBarWidget extends com.intellij.openapi.Disposable {
  @org.jetbrains.annotations.NotNull String ID();
  default @org.jetbrains.annotations.Nullable WidgetPresentation getPresentation() { return null; }
  void install(@org.jetbrains.annotations.NotNull StatusBar statusBar);
  @Override default void dispose() {}
  interface WidgetPresentation {
    @org.jetbrains.annotations.Nullable String getTooltipText();
    @org.jetbrains.annotations.Nullable com.intellij.util.Consumer<java.awt.event.MouseEvent> getClickConsumer();
  }
  interface TextPresentation extends WidgetPresentation {
    @org.jetbrains.annotations.NotNull String getText();
    float getAlignment();
  }
}

package com.intellij.notification;
public final class NotificationGroup {
  public @org.jetbrains.annotations.NotNull Notification createNotification(@org.jetbrains.annotations.NotNull String content, @org.jetbrains.annotations.NotNull NotificationType type) { throw new UnsupportedOperationException(); }
}

package com.intellij.notification;
public interface NotificationGroupManager {
  static NotificationGroupManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  NotificationGroup getNotificationGroup(@org.jetbrains.annotations.NotNull String groupId);
}

package com.intellij.notification;
public interface NotificationGroupManager {
  static NotificationGroupManager getInstance() { throw new UnsupportedOperationException("compile-only stub"); }
  @org.jetbrains.annotations.Nullable NotificationGroup getNotificationGroup(@org.jetbrains.annotations.NotNull String groupId);
}

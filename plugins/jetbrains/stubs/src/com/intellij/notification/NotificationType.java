package com.intellij.notification;
public enum NotificationType { IDE_UPDATE, INFORMATION, WARNING, ERROR }

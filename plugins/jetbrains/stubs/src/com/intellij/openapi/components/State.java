package com.intellij.openapi.components;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME) @Target(ElementType.TYPE)
public @interface State {
  String name();
  Storage[] storages() default {};
}

package com.intellij.openapi.components;
import java.lang.annotation.*;
@Retention(RetentionPolicy.RUNTIME) @Target({})
public @interface Storage {
  String value() default "";
}

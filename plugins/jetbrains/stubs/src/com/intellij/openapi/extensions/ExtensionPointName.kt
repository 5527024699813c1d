package com.intellij.openapi.extensions

class ExtensionPointName<T : Any>(name: String) {
    val extensionList: List<T>
        get() = throw UnsupportedOperationException("compile-only stub")
}

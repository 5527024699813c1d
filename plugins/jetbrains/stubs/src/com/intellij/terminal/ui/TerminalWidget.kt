package com.intellij.terminal.ui

import com.intellij.openapi.Disposable

interface TerminalWidget {
    fun requestFocus()
    fun sendCommandToExecute(shellCommand: String)
    fun addTerminationCallback(onTerminated: Runnable, parentDisposable: Disposable)
}

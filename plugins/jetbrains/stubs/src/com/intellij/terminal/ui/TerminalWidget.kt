package com.intellij.terminal.ui

interface TerminalWidget {
    fun requestFocus()
    fun sendCommandToExecute(shellCommand: String)
}

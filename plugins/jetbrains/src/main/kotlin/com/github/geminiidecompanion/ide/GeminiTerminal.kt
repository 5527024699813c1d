package com.github.geminiidecompanion.ide

import com.intellij.openapi.project.Project
import org.jetbrains.plugins.terminal.LocalTerminalCustomizer
import org.jetbrains.plugins.terminal.TerminalToolWindowManager
import com.intellij.terminal.ui.TerminalWidget

/**
 * Puts the link's environment (GEMINI_CLI_IDE_*, asked with `terminal/env`
 * each time, so it follows folder changes) into every terminal the IDE opens
 * for this project, so a `gemini` started by hand connects too. The IDE
 * terminal itself sets TERMINAL_EMULATOR=JetBrains-JediTerm, which the CLI
 * recognises.
 */
class GeminiTerminalCustomizer : LocalTerminalCustomizer() {
    override fun customizeCommandAndEnvironment(
        project: Project,
        workingDirectory: String?,
        command: Array<String>,
        envs: MutableMap<String, String>,
    ): Array<String> {
        envs.putAll(GeminiProjectService.get(project).terminalEnv())
        return command
    }
}

/** Opens Gemini CLI in the IDE terminal, reusing its tab unless the settings say otherwise. */
object GeminiTerminal {
    private const val TAB_NAME = "Gemini CLI"
    private val widgets = java.util.WeakHashMap<Project, TerminalWidget>()

    /** Opens (or focuses) the CLI's terminal; call on the UI thread after the companion started. */
    fun open(project: Project) {
        val settings = GeminiSettings.get()
        val manager = TerminalToolWindowManager.getInstance(project)
        val existing = widgets[project]
        if (existing != null && settings.terminalBehaviour == GeminiSettings.TerminalBehaviour.REUSE_TAB) {
            existing.requestFocus()
            return
        }
        val widget = manager.createShellWidget(project.basePath, TAB_NAME, true, true)
        widget.sendCommandToExecute(settings.state.cliCommand)
        widgets[project] = widget
        // Once its shell ends (the tab was closed), the next "Open Gemini CLI" opens a new tab.
        widget.addTerminationCallback({ widgets.remove(project, widget) }, GeminiProjectService.get(project))
    }
}

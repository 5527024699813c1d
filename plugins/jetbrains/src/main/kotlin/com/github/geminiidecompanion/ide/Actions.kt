package com.github.geminiidecompanion.ide

import com.intellij.openapi.actionSystem.ActionUpdateThread
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.actionSystem.CommonDataKeys
import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.ide.CopyPasteManager
import com.github.geminiidecompanion.core.TerminalEnv
import java.awt.datatransfer.StringSelection

/** Tools | Gemini CLI | Open Gemini CLI in Terminal: starts the companion if needed, then the CLI. */
class OpenCliAction : AnAction() {
    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.BGT

    override fun update(e: AnActionEvent) { e.presentation.isEnabled = e.project != null }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        GeminiProjectService.get(project).start { GeminiTerminal.open(project) }
    }
}

/**
 * Tools | Gemini CLI | Copy Terminal Environment: copies the lines that point a terminal of the user's own
 * choosing at this project's companion (`GEMINI_CLI_IDE_*`), for `gemini` or an agent's tools server there.
 */
class CopyTerminalEnvAction : AnAction() {
    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.BGT

    override fun update(e: AnActionEvent) { e.presentation.isEnabled = e.project != null }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val service = GeminiProjectService.get(project)
        service.start {
            ApplicationManager.getApplication().executeOnPooledThread {
                val env = service.terminalEnv()
                if (env.isEmpty()) return@executeOnPooledThread
                val windows = System.getProperty("os.name").startsWith("Windows")
                CopyPasteManager.getInstance().setContents(StringSelection(TerminalEnv.exportLines(env, windows)))
                service.inform("Copied ${env.size} variables: paste them into a terminal in the project folder, then run gemini there.")
            }
        }
    }
}

/** Sends the editor's selection (or, without one, its file and caret) to the CLI as the active context. */
class SendSelectionAction : AnAction() {
    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.BGT

    override fun update(e: AnActionEvent) {
        val project = e.project
        e.presentation.isEnabled = project != null && e.getData(CommonDataKeys.EDITOR) != null &&
            GeminiProjectService.get(project).isRunning
    }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        GeminiProjectService.get(project).sendContext(e.getData(CommonDataKeys.EDITOR))
    }
}

/** Accepts the proposal in the focused diff (with the user's edits to its right side). */
class AcceptProposalAction : AnAction() {
    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.EDT

    override fun update(e: AnActionEvent) {
        val project = e.project
        e.presentation.isEnabled = project != null && GeminiProjectService.get(project).proposalFor(e.getData(CommonDataKeys.EDITOR)) != null
    }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val service = GeminiProjectService.get(project)
        service.proposalFor(e.getData(CommonDataKeys.EDITOR))?.let { service.accept(it) }
    }
}

/** Rejects the proposal in the focused diff. */
class RejectProposalAction : AnAction() {
    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.EDT

    override fun update(e: AnActionEvent) {
        val project = e.project
        e.presentation.isEnabled = project != null && GeminiProjectService.get(project).proposalFor(e.getData(CommonDataKeys.EDITOR)) != null
    }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        val service = GeminiProjectService.get(project)
        service.proposalFor(e.getData(CommonDataKeys.EDITOR))?.let { service.reject(it) }
    }
}

/** Tools | Gemini CLI | Restart Companion: stops the companion if it runs and starts it again (also after it gave up restarting). */
class RestartCompanionAction : AnAction() {
    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.BGT

    override fun update(e: AnActionEvent) { e.presentation.isEnabled = e.project != null }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        GeminiProjectService.get(project).restart()
    }
}

package com.github.geminiidecompanion.ide

import com.intellij.openapi.actionSystem.ActionUpdateThread
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.actionSystem.AnActionEvent
import com.intellij.openapi.actionSystem.CommonDataKeys

/** Tools | Gemini CLI | Open Gemini CLI in Terminal: starts the companion if needed, then the CLI. */
class OpenCliAction : AnAction() {
    override fun getActionUpdateThread(): ActionUpdateThread = ActionUpdateThread.BGT

    override fun update(e: AnActionEvent) { e.presentation.isEnabled = e.project != null }

    override fun actionPerformed(e: AnActionEvent) {
        val project = e.project ?: return
        GeminiProjectService.get(project).start { GeminiTerminal.open(project) }
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

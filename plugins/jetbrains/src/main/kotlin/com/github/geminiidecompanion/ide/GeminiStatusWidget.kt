package com.github.geminiidecompanion.ide

import com.intellij.openapi.options.ShowSettingsUtil
import com.intellij.openapi.project.Project
import com.intellij.openapi.wm.StatusBar
import com.intellij.openapi.wm.StatusBarWidget
import com.intellij.openapi.wm.StatusBarWidgetFactory
import com.intellij.util.Consumer
import java.awt.Component
import java.awt.event.MouseEvent

/** Registers the status-bar widget. */
class GeminiStatusWidgetFactory : StatusBarWidgetFactory {
    override fun getId(): String = GeminiStatusWidget.ID

    override fun getDisplayName(): String = "Gemini CLI Companion"

    override fun isAvailable(project: Project): Boolean = true

    override fun createWidget(project: Project): StatusBarWidget = GeminiStatusWidget(project)

    override fun disposeWidget(widget: StatusBarWidget) = widget.dispose()

    override fun canBeEnabledOn(statusBar: StatusBar): Boolean = true
}

/**
 * The sidecar's status line as it sends it ("Gemini: 1 CLI connected"), or,
 * before it sent one, "Gemini: off / ready / 1 CLI". Click: settings.
 */
class GeminiStatusWidget(private val project: Project) : StatusBarWidget, StatusBarWidget.TextPresentation {
    override fun ID(): String = ID

    override fun getPresentation(): StatusBarWidget.WidgetPresentation = this

    override fun install(statusBar: StatusBar) {}

    override fun dispose() {}

    override fun getText(): String {
        val service = GeminiProjectService.get(project)
        return when {
            !service.isRunning -> "Gemini: off"
            service.statusText != null -> service.statusText!!
            service.connectedClients <= 0 -> "Gemini: ready"
            service.connectedClients == 1 -> "Gemini: 1 CLI"
            else -> "Gemini: ${service.connectedClients} CLIs"
        }
    }

    override fun getAlignment(): Float = Component.CENTER_ALIGNMENT

    override fun getTooltipText(): String = "Gemini CLI Companion: click for settings"

    override fun getClickConsumer(): Consumer<MouseEvent> = Consumer {
        ShowSettingsUtil.getInstance().showSettingsDialog(project, GeminiConfigurable::class.java)
    }

    companion object {
        /** The widget's id (also in plugin.xml). */
        const val ID = "GeminiCompanionStatus"
    }
}

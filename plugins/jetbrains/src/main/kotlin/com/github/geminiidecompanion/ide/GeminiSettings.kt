package com.github.geminiidecompanion.ide

import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.components.PersistentStateComponent
import com.intellij.openapi.components.Service
import com.intellij.openapi.components.State
import com.intellij.openapi.components.Storage

/** Application-wide settings (Settings | Tools | Gemini CLI Companion). */
@Service(Service.Level.APP)
@State(name = "GeminiCompanionSettings", storages = [Storage("gemini-companion.xml")])
class GeminiSettings : PersistentStateComponent<GeminiSettings.Options> {
    /** What terminal "Open Gemini CLI" uses. */
    enum class TerminalBehaviour { NEW_TAB, REUSE_TAB }

    /** The persisted fields; public vars so the platform's XML serializer can write them. */
    class Options {
        /** Path to gemini-ide-companion; empty means PATH, then Go's bin directories. */
        var sidecarPath: String = ""
        /** The command typed into the terminal. */
        var cliCommand: String = "gemini"
        /** [TerminalBehaviour] by name. */
        var terminalBehaviour: String = TerminalBehaviour.REUSE_TAB.name
        /** Start the sidecar when a project opens (otherwise on first use). */
        var startWithProject: Boolean = true
    }

    private var options = Options()

    override fun getState(): Options = options

    override fun loadState(state: Options) { options = state }

    /** The terminal behaviour, falling back to the default on an unknown stored name. */
    val terminalBehaviour: TerminalBehaviour
        get() = TerminalBehaviour.values().firstOrNull { it.name == options.terminalBehaviour } ?: TerminalBehaviour.REUSE_TAB

    companion object {
        /** The application's instance. */
        fun get(): GeminiSettings = ApplicationManager.getApplication().getService(GeminiSettings::class.java)
    }
}

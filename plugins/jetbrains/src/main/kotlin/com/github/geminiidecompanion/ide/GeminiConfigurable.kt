package com.github.geminiidecompanion.ide

import com.intellij.openapi.options.Configurable
import com.intellij.openapi.options.ConfigurationException
import com.github.geminiidecompanion.core.SidecarLocator
import java.awt.GridBagConstraints
import java.awt.GridBagLayout
import java.awt.Insets
import java.io.IOException
import javax.swing.JCheckBox
import javax.swing.JComboBox
import javax.swing.JComponent
import javax.swing.JLabel
import javax.swing.JPanel
import javax.swing.JTextField

/** The settings page: sidecar path, CLI command, terminal behaviour. Plain Swing, no UI DSL. */
class GeminiConfigurable : Configurable {
    private val sidecarPath = JTextField(40)
    private val cliCommand = JTextField(20)
    private val behaviour = JComboBox(arrayOf("Reuse the Gemini CLI terminal tab", "Open a new terminal tab each time"))
    private val startWithProject = JCheckBox("Start the companion when a project opens")

    override fun getDisplayName(): String = "Gemini CLI Companion"

    override fun createComponent(): JComponent {
        val panel = JPanel(GridBagLayout())
        fun row(y: Int, label: String, field: JComponent) {
            panel.add(JLabel(label), GridBagConstraints().apply { gridx = 0; gridy = y; anchor = GridBagConstraints.WEST; insets = Insets(4, 0, 4, 8) })
            panel.add(field, GridBagConstraints().apply { gridx = 1; gridy = y; fill = GridBagConstraints.HORIZONTAL; weightx = 1.0 })
        }
        row(0, "Sidecar path (empty: PATH, then ~/go/bin):", sidecarPath)
        row(1, "Gemini CLI command:", cliCommand)
        row(2, "Terminal:", behaviour)
        panel.add(startWithProject, GridBagConstraints().apply { gridx = 0; gridy = 3; gridwidth = 2; anchor = GridBagConstraints.WEST })
        panel.add(JPanel(), GridBagConstraints().apply { gridx = 0; gridy = 4; weighty = 1.0 })
        reset()
        return panel
    }

    private fun chosenBehaviour() =
        if (behaviour.selectedIndex == 1) GeminiSettings.TerminalBehaviour.NEW_TAB else GeminiSettings.TerminalBehaviour.REUSE_TAB

    override fun isModified(): Boolean {
        val o = GeminiSettings.get().state
        return sidecarPath.text.trim() != o.sidecarPath || cliCommand.text.trim() != o.cliCommand ||
            chosenBehaviour().name != o.terminalBehaviour || startWithProject.isSelected != o.startWithProject
    }

    override fun apply() {
        val path = sidecarPath.text.trim()
        if (path.isNotEmpty()) {
            try { SidecarLocator.find(path) } catch (e: IOException) { throw ConfigurationException(e.message ?: "bad sidecar path") }
        }
        if (cliCommand.text.isBlank()) throw ConfigurationException("The Gemini CLI command must not be empty.")
        val o = GeminiSettings.get().state
        o.sidecarPath = path
        o.cliCommand = cliCommand.text.trim()
        o.terminalBehaviour = chosenBehaviour().name
        o.startWithProject = startWithProject.isSelected
    }

    override fun reset() {
        val s = GeminiSettings.get()
        sidecarPath.text = s.state.sidecarPath
        cliCommand.text = s.state.cliCommand
        behaviour.selectedIndex = if (s.terminalBehaviour == GeminiSettings.TerminalBehaviour.NEW_TAB) 1 else 0
        startWithProject.isSelected = s.state.startWithProject
    }
}

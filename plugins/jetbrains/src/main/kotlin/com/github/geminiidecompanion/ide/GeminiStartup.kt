package com.github.geminiidecompanion.ide

import com.intellij.openapi.project.Project
import com.intellij.openapi.startup.ProjectActivity

/** Starts the project's companion when the project opens (before any terminal is opened). */
class GeminiStartup : ProjectActivity {
    override suspend fun execute(project: Project) {
        if (GeminiSettings.get().state.startWithProject) GeminiProjectService.get(project).start()
    }
}

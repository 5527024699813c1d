package com.intellij.openapi.startup

import com.intellij.openapi.project.Project

interface ProjectActivity {
    suspend fun execute(project: Project)
}

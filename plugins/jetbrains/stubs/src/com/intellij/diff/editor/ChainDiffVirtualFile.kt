package com.intellij.diff.editor

import com.intellij.diff.chains.DiffRequestChain
import com.intellij.openapi.vfs.VirtualFile

// Compile-only: the real class extends DiffVirtualFile (a LightVirtualFile).
open class ChainDiffVirtualFile(private val chain: DiffRequestChain, name: String) : VirtualFile() {
    override fun getPath(): String = throw UnsupportedOperationException()
    override fun getFileSystem(): com.intellij.openapi.vfs.VirtualFileSystem = throw UnsupportedOperationException()
    override fun isDirectory(): Boolean = false
}

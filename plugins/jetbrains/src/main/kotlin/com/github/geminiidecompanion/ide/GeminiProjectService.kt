package com.github.geminiidecompanion.ide

import com.github.geminiidecompanion.core.CompanionSession
import com.github.geminiidecompanion.core.CompanionUi
import com.github.geminiidecompanion.core.ContextRules
import com.github.geminiidecompanion.core.Cursor
import com.github.geminiidecompanion.core.Decision
import com.github.geminiidecompanion.core.Proposal
import com.github.geminiidecompanion.core.SessionConfig
import com.github.geminiidecompanion.core.SidecarLocator
import com.intellij.diff.DiffContentFactory
import com.intellij.diff.chains.SimpleDiffRequestChain
import com.intellij.diff.editor.ChainDiffVirtualFile
import com.intellij.diff.requests.SimpleDiffRequest
import com.intellij.diff.util.DiffUserDataKeys
import com.intellij.ide.impl.isTrusted
import com.intellij.notification.NotificationGroupManager
import com.intellij.notification.NotificationType
import com.intellij.openapi.Disposable
import com.intellij.openapi.actionSystem.ActionManager
import com.intellij.openapi.actionSystem.AnAction
import com.intellij.openapi.application.ApplicationInfo
import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.components.Service
import com.intellij.openapi.diagnostic.Logger
import com.intellij.openapi.editor.Document
import com.intellij.openapi.editor.Editor
import com.intellij.openapi.editor.EditorFactory
import com.intellij.openapi.editor.event.CaretEvent
import com.intellij.openapi.editor.event.CaretListener
import com.intellij.openapi.editor.event.SelectionEvent
import com.intellij.openapi.editor.event.SelectionListener
import com.intellij.openapi.fileEditor.FileDocumentManager
import com.intellij.openapi.fileEditor.FileEditorManager
import com.intellij.openapi.fileEditor.FileEditorManagerEvent
import com.intellij.openapi.fileEditor.FileEditorManagerListener
import com.intellij.openapi.fileTypes.FileTypeManager
import com.intellij.openapi.project.Project
import com.intellij.openapi.roots.ModuleRootEvent
import com.intellij.openapi.roots.ModuleRootListener
import com.intellij.openapi.roots.ProjectRootManager
import com.intellij.openapi.util.Computable
import com.intellij.openapi.vfs.VirtualFile
import com.intellij.openapi.vfs.VirtualFileManager
import com.intellij.openapi.vfs.newvfs.BulkFileListener
import com.intellij.openapi.vfs.newvfs.events.VFileEvent
import com.intellij.openapi.vfs.newvfs.events.VFileMoveEvent
import com.intellij.openapi.vfs.newvfs.events.VFilePropertyChangeEvent
import com.intellij.openapi.wm.WindowManager
import com.intellij.testFramework.LightVirtualFile
import java.io.File
import java.io.IOException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap

/**
 * One sidecar per project window: started with the project, stopped when the
 * project closes (this service is disposed then). Glue only: the protocol and
 * the proposal state machine live in the core.
 */
@Service(Service.Level.PROJECT)
class GeminiProjectService(private val project: Project) : Disposable {
    private val log = Logger.getInstance(GeminiProjectService::class.java)

    @Volatile
    private var session: CompanionSession? = null

    /** One open diff tab per proposal. */
    private class DiffTab(val proposal: Proposal, val file: ChainDiffVirtualFile, val right: Document, val left: Document?)

    private val tabs = ConcurrentHashMap<Long, DiffTab>()

    @Volatile
    private var lastTrust: Boolean? = null

    /** Connected CLIs, for the status-bar widget; -1 when the companion is not running. */
    @Volatile
    var connectedClients: Int = -1
        private set

    /** The sidecar's own status line (shown as is), when it sends one. */
    @Volatile
    var statusText: String? = null
        private set

    /** Environment for a terminal opened now (`terminal/env`); empty while the companion is not running. */
    fun terminalEnv(): Map<String, String> = session?.takeIf { it.isRunning }?.terminalEnv() ?: emptyMap()

    /** True while the companion runs. */
    val isRunning: Boolean get() = session?.isRunning == true

    init {
        listenToEditors()
    }

    /** Starts the companion (off the UI thread) unless it already runs; [then] runs after a successful start. */
    fun start(then: (() -> Unit)? = null) {
        ApplicationManager.getApplication().executeOnPooledThread {
            synchronized(this) {
                if (session?.isRunning != true) startNow()
            }
            if (session?.isRunning == true) then?.let { ApplicationManager.getApplication().invokeLater(it) }
        }
    }

    private fun startNow() {
        if (project.isDisposed) return
        // A companion that gave up (or waits to restart) is stopped for good first: never two per project.
        session?.let { session = null; it.stop() }
        val binary = try {
            SidecarLocator.find(GeminiSettings.get().state.sidecarPath)
        } catch (e: IOException) {
            notify(e.message ?: "gemini-ide-companion not found", NotificationType.ERROR)
            return
        }
        val s = CompanionSession(SessionConfig(
            binary = binary,
            workspaceFolders = { workspaceFolders().also { lastFolders = it } },
            isTrusted = { project.isTrusted().also { lastTrust = it } },
            ideName = "jetbrains",
            ideDisplayName = ApplicationInfo.getInstance().fullApplicationName,
            tools = IdeEditorSource(project, ApplicationInfo.getInstance().fullApplicationName),
        ), Ui())
        try {
            s.start()
            session = s
            ApplicationManager.getApplication().invokeLater { reportSelectedEditor() }
        } catch (e: IOException) {
            s.stop()
            notify("Gemini CLI Companion did not start: ${e.message}", NotificationType.ERROR)
        }
        updateWidget()
    }

    /** Stops the companion: `shutdown`, then end of stdin, then kill. No automatic restart follows. */
    fun stop() {
        val s = session ?: return
        session = null
        s.stop()
        closeAllTabs()
        connectedClients = -1
        statusText = null
        updateWidget()
    }

    /** Stops the companion if it runs and starts a new one (Tools | Gemini CLI | Restart Companion). */
    fun restart() {
        ApplicationManager.getApplication().executeOnPooledThread {
            synchronized(this) { stop() }
            start()
        }
    }

    override fun dispose() { stop() }

    /** The project's content roots (read under a read action: this runs on a pooled thread). */
    private fun workspaceFolders(): List<String> {
        val roots = ApplicationManager.getApplication().runReadAction(Computable {
            ProjectRootManager.getInstance(project).contentRoots
                .filter { ContextRules.countsAsFile(it.fileSystem.protocol, it.path, false) }
                .map { File(it.path).absolutePath }
        })
        if (roots.isNotEmpty()) return roots.distinct()
        return listOfNotNull(project.basePath?.let { File(it).absolutePath })
    }

    // ------------------------------------------------------------- context

    /** The local path of [file] when it counts as context, else null. */
    private fun contextPath(file: VirtualFile?): String? {
        if (file == null) return null
        if (!ContextRules.countsAsFile(file.fileSystem.protocol, file.path, file.isDirectory)) return null
        return File(file.path).absolutePath
    }

    private fun cursorOf(editor: Editor): Cursor {
        val doc = editor.document
        val offset = editor.caretModel.offset
        val line = doc.getLineNumber(offset)
        return Cursor.fromZeroBased(line, offset - doc.getLineStartOffset(line))
    }

    private fun editorPath(editor: Editor): String? {
        if (editor.project != project) return null
        return contextPath(FileDocumentManager.getInstance().getFile(editor.document))
    }

    private fun checkTrust() {
        val now = project.isTrusted()
        if (now != lastTrust) {
            lastTrust = now
            session?.trustChanged(now)
        }
    }

    private fun reportSelectedEditor() {
        val editor = FileEditorManager.getInstance(project).selectedTextEditor ?: return
        val path = editorPath(editor) ?: return
        session?.context?.fileFocused(path, cursorOf(editor), editor.selectionModel.selectedText)
    }

    private fun listenToEditors() {
        val bus = project.messageBus.connect(this)
        bus.subscribe(FileEditorManagerListener.FILE_EDITOR_MANAGER, object : FileEditorManagerListener {
            override fun selectionChanged(event: FileEditorManagerEvent) {
                checkTrust()
                if (contextPath(event.newFile) != null) reportSelectedEditor()
            }

            override fun fileClosed(source: FileEditorManager, file: VirtualFile) {
                tabs.values.firstOrNull { it.file == file }?.let { tab ->
                    // Closing the diff tab is a rejection (as in VS Code).
                    tabs.remove(tab.proposal.id)
                    session?.proposals?.reject(tab.proposal)
                    return
                }
                val path = contextPath(file) ?: return
                if (!source.isFileOpen(file)) session?.context?.fileClosed(path)
            }
        })
        bus.subscribe(ModuleRootListener.TOPIC, object : ModuleRootListener {
            override fun rootsChanged(event: ModuleRootEvent) = foldersMayHaveChanged()
        })
        bus.subscribe(VirtualFileManager.VFS_CHANGES, object : BulkFileListener {
            override fun after(events: List<VFileEvent>) {
                for (e in events) {
                    when {
                        e is VFileMoveEvent -> renamed(e.oldPath, e.newPath)
                        e is VFilePropertyChangeEvent && e.propertyName == VirtualFile.PROP_NAME -> renamed(e.oldPath, e.newPath)
                    }
                }
            }
        })
        val multicaster = EditorFactory.getInstance().eventMulticaster
        multicaster.addCaretListener(object : CaretListener {
            override fun caretPositionChanged(event: CaretEvent) = editorMoved(event.editor)
        }, this)
        multicaster.addSelectionListener(object : SelectionListener {
            override fun selectionChanged(e: SelectionEvent) = editorMoved(e.editor)
        }, this)
    }

    @Volatile
    private var lastFolders: List<String>? = null

    /** Content roots were added or removed: the sidecar updates the discovery file and terminals' env (`workspace/envChanged`). */
    private fun foldersMayHaveChanged() {
        val s = session?.takeIf { it.isRunning } ?: return
        ApplicationManager.getApplication().executeOnPooledThread {
            val folders = workspaceFolders()
            if (folders != lastFolders) {
                lastFolders = folders
                s.foldersChanged(folders)
            }
        }
    }

    private fun renamed(oldPath: String, newPath: String) {
        val s = session ?: return
        val old = File(oldPath).absolutePath
        if (old in s.context.openFiles()) s.context.fileRenamed(old, File(newPath).absolutePath)
    }

    private fun editorMoved(editor: Editor) {
        val path = editorPath(editor) ?: return
        session?.context?.selectionChanged(path, cursorOf(editor), editor.selectionModel.selectedText)
    }

    /** Sends the selection (or the file) of [editor] as context and focuses it. */
    fun sendContext(editor: Editor?): Boolean {
        if (editor == null) return false
        val path = editorPath(editor) ?: return false
        val s = session ?: return false
        s.context.fileFocused(path, cursorOf(editor), editor.selectionModel.selectedText)
        return true
    }

    // ------------------------------------------------------------- diffs

    /** The open proposal shown in [editor] (its right side), else the one whose tab is selected, else the newest. */
    fun proposalFor(editor: Editor?): Proposal? {
        val byDoc = editor?.let { ed -> tabs.values.firstOrNull { it.right == ed.document } }
        if (byDoc != null) return byDoc.proposal
        val selected = FileEditorManager.getInstance(project).selectedFiles.toSet()
        tabs.values.firstOrNull { it.file in selected }?.let { return it.proposal }
        return tabs.values.maxByOrNull { it.proposal.id }?.proposal
    }

    /**
     * Accepts [p] with its right side as the user left it. When the file
     * changed on disk since the proposal was shown, the first accept only
     * warns; the second one overwrites.
     */
    fun accept(p: Proposal) {
        val tab = tabs[p.id] ?: return
        when (session?.proposals?.accept(p, tab.right.text)) {
            Decision.NEEDS_CONFIRMATION -> notify(
                "${File(p.filePath).name} ${if (p.disk == "deletedOnDisk") "was deleted" else "changed"} on disk since Gemini CLI proposed this change. " +
                    "Accept again to overwrite it with the proposal, or reject it.", NotificationType.WARNING)
            Decision.SENT, Decision.NOT_OPEN, null -> {
                tabs.remove(p.id)
                FileEditorManager.getInstance(project).closeFile(tab.file)
            }
        }
    }

    /** Rejects [p] and closes its tab. */
    fun reject(p: Proposal) {
        val tab = tabs.remove(p.id) ?: return
        session?.proposals?.reject(p)
        FileEditorManager.getInstance(project).closeFile(tab.file)
    }

    private fun showDiffNow(p: Proposal, replaced: Proposal?) {
        replaced?.let { r -> tabs.remove(r.id)?.let { FileEditorManager.getInstance(project).closeFile(it.file) } }
        val name = File(p.filePath).name
        val type = FileTypeManager.getInstance().getFileTypeByFileName(name)
        val contents = DiffContentFactory.getInstance()
        val right = EditorFactory.getInstance().createDocument(p.proposed)
        val before = p.diskContent ?: p.original
        val leftDoc = before?.let { text -> EditorFactory.getInstance().createDocument(text).also { it.setReadOnly(true) } }
        val left = leftDoc?.let { contents.create(project, it, type) } ?: contents.createEmpty()
        val labels = listOfNotNull(p.label().takeIf { it.isNotEmpty() }, p.owner?.let { "from $it" }).joinToString(" ")
        val request = SimpleDiffRequest(
            "Gemini CLI: ${p.title}" + (if (labels.isEmpty()) "" else " $labels"),
            left,
            contents.create(project, right, type),
            if (before == null) "$name (new file)" else if (p.diskContent != null) "$name (on disk now)" else "$name (current)",
            "$name (proposed, editable)",
        )
        val actions = ActionManager.getInstance()
        request.putUserData(DiffUserDataKeys.CONTEXT_ACTIONS, listOfNotNull<AnAction>(
            actions.getAction("GeminiCompanion.AcceptProposal"), actions.getAction("GeminiCompanion.RejectProposal")))
        val file = ChainDiffVirtualFile(SimpleDiffRequestChain(request), "Gemini: $name")
        tabs[p.id] = DiffTab(p, file, right, leftDoc)
        FileEditorManager.getInstance(project).openFile(file, true)
        p.notice?.let { notify(it, NotificationType.INFORMATION) }
    }

    /** The "before" side follows the file on disk (`changedOnDisk`), so the user sees what accepting would overwrite. */
    private fun refreshDiff(p: Proposal) {
        val tab = tabs[p.id] ?: return
        val doc = tab.left ?: return
        val text = p.diskContent ?: p.original ?: return
        ApplicationManager.getApplication().runWriteAction {
            doc.setReadOnly(false)
            doc.setText(text)
            doc.setReadOnly(true)
        }
    }

    /** Opens text the user accepted but that was not written, unsaved, so they can keep it. */
    private fun showUnwritten(path: String, content: String) {
        val file = LightVirtualFile("Not written - ${File(path).name}", content)
        FileEditorManager.getInstance(project).openFile(file, true)
    }

    private fun closeAllTabs() {
        val all = tabs.values.toList()
        tabs.clear()
        ApplicationManager.getApplication().invokeLater {
            if (!project.isDisposed) all.forEach { FileEditorManager.getInstance(project).closeFile(it.file) }
        }
    }

    private inner class Ui : CompanionUi {
        override fun showDiff(p: Proposal, replaced: Proposal?): CompletableFuture<Unit> {
            val shown = CompletableFuture<Unit>()
            ApplicationManager.getApplication().invokeLater {
                try {
                    showDiffNow(p, replaced)
                    shown.complete(Unit)
                } catch (e: RuntimeException) {
                    shown.completeExceptionally(e)
                }
            }
            return shown
        }

        override fun closeDiff(p: Proposal): String {
            var text = p.proposed
            ApplicationManager.getApplication().invokeAndWait {
                tabs.remove(p.id)?.let { tab ->
                    text = tab.right.text
                    if (!project.isDisposed) FileEditorManager.getInstance(project).closeFile(tab.file)
                }
            }
            return text
        }

        override fun proposalChanged(p: Proposal) {
            ApplicationManager.getApplication().invokeLater { if (!project.isDisposed) refreshDiff(p) }
        }

        override fun keepUnwritten(path: String, content: String) {
            ApplicationManager.getApplication().invokeLater { if (!project.isDisposed) showUnwritten(path, content) }
        }

        override fun status(connectedClients: Int, text: String?) {
            this@GeminiProjectService.connectedClients = connectedClients
            statusText = text
            updateWidget()
        }

        override fun ready(restarted: Boolean) {
            if (restarted) ApplicationManager.getApplication().invokeLater { if (!project.isDisposed) reportSelectedEditor() }
            updateWidget()
        }

        override fun log(level: String, message: String) {
            when (level) {
                "error" -> notify(message, NotificationType.ERROR)
                "warn" -> { log.warn(message); notify(message, NotificationType.WARNING) }
                else -> { log.info(message); notify(message, NotificationType.INFORMATION) }
            }
        }

        override fun down() {
            connectedClients = -1
            statusText = null
            closeAllTabs()
            updateWidget()
        }
    }

    /** Shows [message] as an information balloon. */
    fun inform(message: String) = notify(message, NotificationType.INFORMATION)

    private fun notify(message: String, type: NotificationType) {
        ApplicationManager.getApplication().invokeLater {
            if (project.isDisposed) return@invokeLater
            NotificationGroupManager.getInstance().getNotificationGroup("Gemini CLI Companion")
                ?.createNotification(message, type)?.notify(project)
        }
    }

    private fun updateWidget() {
        ApplicationManager.getApplication().invokeLater {
            if (!project.isDisposed) WindowManager.getInstance().getStatusBar(project)?.updateWidget(GeminiStatusWidget.ID)
        }
    }

    companion object {
        /** The service of [project]. */
        fun get(project: Project): GeminiProjectService = project.getService(GeminiProjectService::class.java)
    }
}

package com.github.geminiidecompanion.ide

import com.github.geminiidecompanion.core.EditorSource
import com.github.geminiidecompanion.core.EditorTools
import com.github.geminiidecompanion.core.NotAvailable
import com.github.geminiidecompanion.core.SourceDiagnostic
import com.github.geminiidecompanion.core.SourceEditor
import com.github.geminiidecompanion.core.SourceHover
import com.github.geminiidecompanion.core.SourceSymbol
import com.github.geminiidecompanion.core.SourceWorkspaceSymbol
import com.github.geminiidecompanion.core.Span
import com.intellij.codeInsight.daemon.impl.DaemonCodeAnalyzerEx
import com.intellij.codeInsight.daemon.impl.HighlightInfo
import com.intellij.ide.structureView.StructureViewTreeElement
import com.intellij.ide.structureView.TreeBasedStructureViewBuilder
import com.intellij.lang.LanguageDocumentation
import com.intellij.lang.LanguageStructureViewBuilder
import com.intellij.navigation.ChooseByNameContributor
import com.intellij.lang.annotation.HighlightSeverity
import com.intellij.openapi.application.ApplicationManager
import com.intellij.openapi.application.ReadAction
import com.intellij.openapi.editor.Document
import com.intellij.openapi.fileEditor.FileDocumentManager
import com.intellij.openapi.fileEditor.FileEditorManager
import com.intellij.openapi.fileEditor.OpenFileDescriptor
import com.intellij.openapi.fileEditor.TextEditor
import com.intellij.openapi.project.DumbService
import com.intellij.openapi.project.Project
import com.intellij.openapi.util.Computable
import com.intellij.openapi.util.Disposer
import com.intellij.openapi.vfs.VirtualFile
import com.intellij.openapi.vfs.VirtualFileManager
import com.intellij.psi.PsiElement
import com.intellij.psi.PsiFile
import com.intellij.psi.PsiManager
import com.intellij.psi.PsiNameIdentifierOwner
import com.intellij.psi.search.GlobalSearchScope
import com.intellij.psi.search.searches.ReferencesSearch
import com.intellij.util.Processor
import java.io.File
import java.util.concurrent.Callable

/**
 * What the IDE knows, for the editor tools: the daemon's highlighting infos (diagnostics), PSI
 * references (definitions, usages through ReferencesSearch) and the structure view (outlines), the
 * open editors. Called on the core's worker threads: PSI and documents are read in read actions,
 * editors are touched on the EDT.
 */
class IdeEditorSource(private val project: Project, override val editorName: String) : EditorSource {
    private val app get() = ApplicationManager.getApplication()

    override val offers: Set<String> = EditorTools.FEATURES.toSet()

    private fun <T> read(body: () -> T): T = app.runReadAction(Computable { body() })

    /**
     * A read that may take long (a search over the whole project), run so that it never keeps the
     * user waiting: a write action (a key typed) cancels it and it runs again after, instead of
     * waiting for it to end. [body] starts over each time, so it keeps its results to itself.
     */
    private fun <T> search(body: () -> T): T = ReadAction.nonBlocking(Callable { body() }).expireWith(project).executeSynchronously()

    private fun file(path: String): VirtualFile? =
        VirtualFileManager.getInstance().findFileByUrl("file://" + File(path).invariantSeparatorsPath.let { if (it.startsWith("/")) it else "/$it" })

    private fun document(path: String): Document? = file(path)?.takeIf { !it.isDirectory }?.let { f -> read { FileDocumentManager.getInstance().getDocument(f) } }

    override fun text(path: String): CharSequence? = document(path)?.immutableCharSequence

    private fun name(path: String) = File(path).name

    private fun psi(path: String): PsiFile {
        if (DumbService.isDumb(project)) throw NotAvailable("$editorName is indexing the project; ${name(path)} can be analysed once indexing finishes: try again then")
        val f = file(path) ?: throw NotAvailable("$editorName does not know ${name(path)}")
        return read { PsiManager.getInstance(project).findFile(f) } ?: throw NotAvailable("$editorName has no code model for ${name(path)} (not a source file of this project)")
    }

    private fun severity(s: HighlightSeverity): String = when {
        s.myVal >= HighlightSeverity.ERROR.myVal -> "error"
        s.myVal >= HighlightSeverity.WARNING.myVal -> "warning"
        else -> "info"
    }

    override fun diagnostics(path: String?): List<SourceDiagnostic> {
        val fem = FileEditorManager.getInstance(project)
        val files = if (path != null) {
            val f = file(path) ?: throw NotAvailable("$editorName does not know ${name(path)}")
            if (!fem.isFileOpen(f)) throw NotAvailable("$editorName analyses open files only, and ${name(path)} is not open: open it (openFile), wait a moment for the analysis, and ask again")
            listOf(f)
        } else fem.openFiles.toList()
        val out = ArrayList<SourceDiagnostic>()
        for (f in files) {
            val doc = read { FileDocumentManager.getInstance().getDocument(f) } ?: continue
            read {
                DaemonCodeAnalyzerEx.processHighlights(doc, project, HighlightSeverity.WEAK_WARNING, 0, doc.immutableCharSequence.length) { info: HighlightInfo ->
                    val message = info.description
                    if (!message.isNullOrBlank()) out.add(SourceDiagnostic(f.path, info.startOffset, info.endOffset, severity(info.severity), message, editorName))
                    true
                }
            }
        }
        return out
    }

    /** The declaration the element at [offset] refers to (or the declaration the caret is on). */
    private fun target(path: String, offset: Int): PsiElement? {
        val file = psi(path)
        return read {
            file.findReferenceAt(offset)?.resolve()
                ?: generateSequence(file.findElementAt(offset)) { it.parent }.take(3).firstOrNull { it is PsiNameIdentifierOwner && it.nameIdentifier?.textRange?.let { r -> offset in r.startOffset..r.endOffset } == true }
        }
    }

    private fun span(element: PsiElement): Span? {
        val nav = element.navigationElement
        val path = nav.containingFile?.virtualFile?.path ?: return null
        val range = (nav as? PsiNameIdentifierOwner)?.nameIdentifier?.textRange ?: nav.textRange ?: return null
        return Span(path, range.startOffset, range.endOffset)
    }

    override fun definitions(path: String, offset: Int): List<Span> {
        val target = target(path, offset) ?: return emptyList()
        return read { listOfNotNull(span(target)) }
    }

    override fun references(path: String, offset: Int, max: Int): List<Span> {
        val target = target(path, offset) ?: return emptyList()
        return search {
            val out = ArrayList<Span>()
            if (target.isValid) {
                ReferencesSearch.search(target, GlobalSearchScope.projectScope(project)).forEach(Processor { ref ->
                    val element = ref.element
                    val file = element.containingFile?.virtualFile?.path
                    val base = element.textRange?.startOffset
                    if (file != null && base != null) out.add(Span(file, base + ref.rangeInElement.startOffset, base + ref.rangeInElement.endOffset))
                    out.size < max
                })
            }
            out
        }
    }

    override fun hover(path: String, offset: Int): SourceHover? {
        val file = psi(path)
        val target = target(path, offset) ?: return null
        return read {
            val original = file.findElementAt(offset)
            val provider = LanguageDocumentation.INSTANCE.forLanguage(target.language) ?: return@read null
            val text = provider.generateDoc(target, original) ?: provider.getQuickNavigateInfo(target, original) ?: return@read null
            SourceHover(text, original?.textRange?.let { Span(path, it.startOffset, it.endOffset) })
        }
    }

    override fun symbols(path: String): List<SourceSymbol> {
        val file = psi(path)
        val builder = read { LanguageStructureViewBuilder.INSTANCE.getStructureViewBuilder(file) } as? TreeBasedStructureViewBuilder
            ?: throw NotAvailable("$editorName has no structure view for ${name(path)}")
        val model = read { builder.createStructureViewModel(null) }
        try {
            return read { model.root.children.mapNotNull { symbol(it as? StructureViewTreeElement ?: return@mapNotNull null, 0) } }
        } finally {
            app.invokeLater { Disposer.dispose(model) }
        }
    }

    private fun symbol(e: StructureViewTreeElement, depth: Int): SourceSymbol? {
        val element = e.value as? PsiElement ?: return null
        val range = element.textRange ?: return null
        val name = e.presentation.presentableText ?: return null
        val children = if (depth > 8) emptyList() else e.children.mapNotNull { c -> (c as? StructureViewTreeElement)?.let { symbol(it, depth + 1) } }
        return SourceSymbol(name, EditorTools.kindOf(element.javaClass.simpleName), range.startOffset, range.endOffset,
            e.presentation.locationString, children)
    }

    override fun workspaceSymbols(query: String, max: Int): List<SourceWorkspaceSymbol> {
        if (DumbService.isDumb(project)) throw NotAvailable("$editorName is indexing the project; symbols can be searched once indexing finishes: try again then")
        return search {
            val out = ArrayList<SourceWorkspaceSymbol>()
            // The contributors of Navigate | Symbol: each language's symbols of the project.
            found@ for (contributor in ChooseByNameContributor.SYMBOL_EP_NAME.extensionList) {
                for (name in contributor.getNames(project, false).filter { it.contains(query, ignoreCase = true) }.distinct()) {
                    for (item in contributor.getItemsByName(name, query, project, false)) {
                        val element = item as? PsiElement ?: continue
                        val span = span(element) ?: continue
                        out.add(SourceWorkspaceSymbol(item.name ?: name, EditorTools.kindOf(element.javaClass.simpleName), span, item.presentation?.locationString))
                        if (out.size >= max) break@found
                    }
                }
            }
            out
        }
    }

    override fun openEditors(): List<SourceEditor> {
        val out = ArrayList<SourceEditor>()
        app.invokeAndWait {
            val fem = FileEditorManager.getInstance(project)
            val active = fem.selectedTextEditor
            val docs = FileDocumentManager.getInstance()
            for (f in fem.openFiles) {
                val editor = fem.getAllEditors(f).filterIsInstance<TextEditor>().firstOrNull()?.editor ?: continue
                val sel = editor.selectionModel
                out.add(SourceEditor(f.path, editor === active, editor.caretModel.offset, sel.selectionStart, sel.selectionEnd, docs.isFileModified(f)))
            }
        }
        return out
    }

    override fun openFile(path: String, line: Int?, endLine: Int?) {
        val f = file(path) ?: throw NotAvailable("$editorName does not know ${name(path)}")
        app.invokeLater {
            val editor = FileEditorManager.getInstance(project).openTextEditor(OpenFileDescriptor(project, f, line ?: 0, 0), true)
            if (editor != null && line != null && endLine != null) {
                val doc = editor.document
                editor.selectionModel.setSelection(doc.getLineStartOffset(line), doc.getLineEndOffset(endLine))
            }
        }
    }
}

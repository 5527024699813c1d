package com.github.geminiidecompanion.core

import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

// The editor tools (docs/editor-tools.md): the sidecar's editor/… requests, answered from what the IDE
// knows. The IDE layer implements EditorSource with the platform (highlighting infos, PSI references,
// the structure view); this file checks params, converts positions and caps answers, platform-free.

/** A span of a file's text as [EditorSource.text] gives it: offsets in UTF-16 units, as Kotlin strings count. */
data class Span(val path: String, val start: Int, val end: Int)

/** A problem the IDE's highlighting knows of. [severity]: `error`, `warning`, `info` or `hint`. */
data class SourceDiagnostic(val path: String, val start: Int, val end: Int, val severity: String, val message: String, val source: String? = null, val code: String? = null)

/** An outline entry: [kind] is one of [EditorTools.SYMBOL_KINDS]; offsets into the file's text. */
data class SourceSymbol(val name: String, val kind: String, val start: Int, val end: Int, val detail: String? = null, val children: List<SourceSymbol> = emptyList())

/** A symbol found in the project. */
data class SourceWorkspaceSymbol(val name: String, val kind: String, val span: Span, val container: String? = null)

/** An open editor: caret and selection as offsets into its document. */
data class SourceEditor(val path: String, val active: Boolean, val caret: Int, val selectionStart: Int, val selectionEnd: Int, val dirty: Boolean)

/** Documentation at a position: [text] is plain text or HTML (tags are stripped), [span] what it is about. */
data class SourceHover(val text: String, val span: Span? = null)

/** The IDE has no source for this feature here; [message] says what to do (shown to the model as is). */
class NotAvailable(message: String) : Exception(message)

/**
 * What the IDE knows, for the editor tools. Every call comes from a worker thread; the implementation
 * takes the read actions it needs. Offsets are into [text] of the same path.
 */
interface EditorSource {
    /** The IDE's name as a model reads it ("IntelliJ IDEA"). */
    val editorName: String
    /** The features it answers, as initialize's capabilities name them ([EditorTools.FEATURES]). */
    val offers: Set<String>
    /** The file's text as the IDE has it (unsaved changes included), or null when there is no such file. */
    fun text(path: String): CharSequence?
    /** The highlighting's problems of [path], or of every file the IDE has analysed when null. */
    fun diagnostics(path: String?): List<SourceDiagnostic>
    /** Where the symbol at [offset] of [path] is declared. */
    fun definitions(path: String, offset: Int): List<Span>
    /** Where the symbol at [offset] of [path] is used; may stop after [max]. */
    fun references(path: String, offset: Int, max: Int): List<Span>
    /** Type and documentation of the symbol at [offset], or null when there is none. */
    fun hover(path: String, offset: Int): SourceHover?
    /** The file's outline. */
    fun symbols(path: String): List<SourceSymbol>
    /** Symbols of the project whose names match [query]; may stop after [max]. */
    fun workspaceSymbols(query: String, max: Int): List<SourceWorkspaceSymbol>
    /** The open editors. */
    fun openEditors(): List<SourceEditor>
    /** Shows [path] to the user with the caret on [line] (0-based), selecting to [endLine] (0-based, inclusive) if set. */
    fun openFile(path: String, line: Int?, endLine: Int?)
}

/** A file's text with its lines: converts between offsets and the tools' positions (1-based lines, characters). */
class TextLines(val text: CharSequence) {
    private val starts: IntArray = run {
        val list = ArrayList<Int>().apply { add(0) }
        for (i in text.indices) if (text[i] == '\n') list.add(i + 1)
        list.toIntArray()
    }
    /** Number of lines; a final line break ends the last line (as the sidecar counts them). */
    val count: Int get() = if (starts.size > 1 && starts.last() == text.length) starts.size - 1 else starts.size
    /** Line [line] (1-based) without its line break. */
    fun line(line: Int): String {
        val end = if (line < starts.size) starts[line] - 1 else text.length
        return text.subSequence(starts[line - 1], end).toString().removeSuffix("\r")
    }
    /** The offset of [line], [character] (1-based, character counted in code points); null past the line's end. */
    fun offset(line: Int, character: Int): Int? {
        val s = line(line)
        if (character - 1 > s.codePointCount(0, s.length)) return null
        return starts[line - 1] + s.offsetByCodePoints(0, character - 1)
    }
    /** The tools' position of [offset]. */
    fun position(offset: Int): Map<String, Any?> {
        val o = offset.coerceIn(0, text.length)
        var i = starts.binarySearch(o)
        if (i < 0) i = -i - 2
        val s = line(i + 1)
        val col = minOf(o - starts[i], s.length)
        val safe = if (col > 0 && col < s.length && Character.isLowSurrogate(s[col])) col - 1 else col
        return mapOf("line" to (i + 1).toLong(), "character" to (s.codePointCount(0, safe) + 1).toLong())
    }
    /** The tools' range of [start]..[end]. */
    fun range(start: Int, end: Int): Map<String, Any?> = mapOf("start" to position(start), "end" to position(maxOf(start, end)))
}

/**
 * Answers the sidecar's `editor/…` requests from [source], each on a worker thread, within
 * [deadlineMs] (a little less than the sidecar's `editorRequestTimeoutMs`): past it, the answer is
 * [DEADLINE_PASSED] naming what the IDE was doing.
 */
class EditorTools(private val source: EditorSource, private val deadlineMs: () -> Long) {
    // Daemon threads, ended after a minute idle: nothing to shut down when the project closes.
    private val workers: ExecutorService = Executors.newCachedThreadPool { r -> Thread(r, "gemini-companion-tools").apply { isDaemon = true } }

    companion object {
        const val NOT_AVAILABLE = -32010
        const val DEADLINE_PASSED = -32011
        const val DEFAULT_MAX_RESULTS = 200
        const val MAX_TEXT_CHARS = 400
        const val MAX_HOVER_CHARS = 16384
        const val MAX_QUERY_CHARS = 256
        const val MAX_SELECTED_UTF16 = 16384
        val SEVERITIES = listOf("error", "warning", "info", "hint")
        val SYMBOL_KINDS = listOf(
            "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum",
            "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key",
            "null", "enumMember", "struct", "event", "operator", "typeParameter", "other",
        )
        /** The editor tools' features, as initialize's capabilities name them. */
        val FEATURES = listOf("diagnostics", "definition", "references", "hover", "documentSymbols", "workspaceSymbols", "openEditors", "openFile")

        /** The tools' symbol kind for a code model class named [className] ("PsiMethodImpl", "GoFunctionDeclarationImpl"). */
        fun kindOf(className: String): String {
            val n = className.lowercase()
            return listOf(
                "constructor" to "constructor", "method" to "method", "function" to "function", "interface" to "interface",
                "enumconstant" to "enumMember", "enum" to "enum", "struct" to "struct", "class" to "class", "typeparameter" to "typeParameter",
                "field" to "field", "property" to "property", "const" to "constant", "variable" to "variable", "var" to "variable",
                "package" to "package", "namespace" to "namespace", "module" to "module", "typespec" to "struct", "type" to "class",
            ).firstOrNull { n.contains(it.first) }?.second ?: "other"
        }

        /** At most [max] UTF-16 units of [s], never splitting a surrogate pair. */
        fun clipUtf16(s: String, max: Int): String {
            if (s.length <= max) return s
            val cut = if (Character.isLowSurrogate(s[max])) max - 1 else max
            return s.substring(0, cut)
        }

        /** Plain text of documentation HTML: tags dropped, breaks kept, entities decoded. */
        fun plainText(html: String): String {
            if (!html.contains('<')) return html.trim()
            val broken = html.replace(Regex("(?i)<(br|p|div|pre|li|/p|/div|/pre|/h[1-6]|/tr|/li)\\b[^>]*>"), "\n")
            val bare = broken.replace(Regex("<[^>]*>"), "")
            val decoded = bare.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&#39;", "'")
                .replace("&nbsp;", " ").replace("&amp;", "&")
            return decoded.lines().joinToString("\n") { it.trimEnd() }.replace(Regex("\n{3,}"), "\n\n").trim()
        }
    }

    /** What to declare in initialize's capabilities. */
    val capabilities: Map<String, Boolean> get() = FEATURES.associateWith { it in source.offers }

    private val methods: Map<String, (Any?) -> CompletableFuture<Any?>> = mapOf(
        "editor/getDiagnostics" to { p -> async("collecting the diagnostics") { diagnostics(p) } },
        "editor/getDefinition" to { p -> async("finding the definition") { locations(p) { path, offset, _ -> source.definitions(path, offset) } } },
        "editor/getReferences" to { p -> async("finding the references") { locations(p) { path, offset, max -> source.references(path, offset, max + 1) } } },
        "editor/getHover" to { p -> async("reading the documentation") { hover(p) } },
        "editor/getDocumentSymbols" to { p -> async("building the file's structure") { documentSymbols(p) } },
        "editor/searchWorkspaceSymbols" to { p -> async("searching the project's symbols") { workspaceSymbols(p) } },
        "editor/getOpenEditors" to { p -> async("listing the open editors") { openEditors(p) } },
        "editor/openFile" to { p -> async("opening the file") { openFile(p) } },
    )

    /** Registers the handlers on [sidecar]. */
    fun register(sidecar: Sidecar) { for ((method, handler) in methods) sidecar.on(method) { p -> handler(p) } }

    /** The answer to the `editor/…` request [method]: its result, or a [LinkError] with the code the model's error comes from. */
    fun answer(method: String, params: Any?): CompletableFuture<Any?> =
        methods[method]?.invoke(params) ?: CompletableFuture.failedFuture(LinkError(LinkError.METHOD_NOT_FOUND, "unknown method $method"))

    private fun async(what: String, work: () -> Any?): CompletableFuture<Any?> {
        val ms = deadlineMs().coerceAtLeast(100)
        return CompletableFuture.supplyAsync({
            try { work() } catch (e: NotAvailable) { throw LinkError(NOT_AVAILABLE, e.message ?: "not available") }
        }, workers).orTimeout(ms, TimeUnit.MILLISECONDS).exceptionallyCompose { e ->
            val cause = (e as? CompletionException)?.cause ?: e
            if (cause is TimeoutException) {
                CompletableFuture.failedFuture(LinkError(DEADLINE_PASSED, "${source.editorName} did not finish $what within ${(ms + 999) / 1000} s (it may still be indexing the project): try again"))
            } else CompletableFuture.failedFuture(cause)
        }
    }

    private fun bad(message: String) = LinkError(LinkError.INVALID_PARAMS, message)

    private fun max(p: Any?): Int = p.long("maxResults")?.takeIf { it > 0 }?.toInt() ?: DEFAULT_MAX_RESULTS

    private fun path(p: Any?): String {
        val path = p.str("path")
        if (path == null || !java.io.File(path).isAbsolute) throw bad("path must be an absolute path, not ${p.field("path")?.let { Json.stringify(it) } ?: "missing"}")
        return path
    }

    private fun lines(path: String): TextLines = TextLines(source.text(path) ?: throw bad("$path does not exist"))

    private fun name(path: String) = java.io.File(path).name

    /** The offset of params' `line` and `character` in `path`, checked. */
    private fun at(p: Any?): Pair<String, Int> {
        val path = path(p)
        val line = p.long("line")
        val character = p.long("character")
        if (line == null || line < 1) throw bad("line must be 1 or more")
        if (character == null || character < 1) throw bad("character must be 1 or more")
        val lines = lines(path)
        if (line > lines.count) throw bad("line $line is past the end of ${name(path)} (${lines.count} lines)")
        val offset = lines.offset(line.toInt(), character.toInt())
            ?: throw bad("character $character is past the end of line $line of ${name(path)} (${lines.line(line.toInt()).let { it.codePointCount(0, it.length) }} characters)")
        return path to offset
    }

    private class Texts(val source: EditorSource) {
        private val cache = HashMap<String, TextLines?>()
        fun of(path: String): TextLines? = cache.getOrPut(path) { source.text(path)?.let { TextLines(it) } }
    }

    private fun locations(p: Any?, find: (String, Int, Int) -> List<Span>): Map<String, Any?> {
        val (path, offset) = at(p)
        val max = max(p)
        val texts = Texts(source)
        val found = find(path, offset, max).distinct()
        val out = found.take(max).mapNotNull { s ->
            val lines = texts.of(s.path) ?: return@mapNotNull null
            val range = lines.range(s.start, s.end)
            val line = (range["start"].long("line") ?: 1L).toInt()
            mapOf("path" to s.path, "range" to range, "text" to lines.line(line).take(MAX_TEXT_CHARS))
        }
        return result("locations", out, found.size > max)
    }

    private fun result(key: String, items: List<Any?>, truncated: Boolean): Map<String, Any?> =
        if (truncated) mapOf(key to items, "truncated" to true) else mapOf(key to items)

    private fun diagnostics(p: Any?): Map<String, Any?> {
        val path = if (p.field("path") == null) null else path(p)
        val severity = p.field("severity")
        if (severity != null && severity !in SEVERITIES) throw bad("severity must be one of ${SEVERITIES.joinToString(", ")}")
        val worst = if (severity == null) SEVERITIES.size - 1 else SEVERITIES.indexOf(severity)
        val texts = Texts(source)
        val found = source.diagnostics(path).filter { (path == null || it.path == path) && SEVERITIES.indexOf(it.severity).let { i -> i in 0..worst } }
            .mapNotNull { d ->
                val lines = texts.of(d.path) ?: return@mapNotNull null
                val range = lines.range(d.start, d.end)
                val start = range["start"]
                Triple(d, range, Triple(SEVERITIES.indexOf(d.severity), start.long("line") ?: 0, start.long("character") ?: 0))
            }
            .sortedWith(compareBy({ it.third.first }, { it.first.path }, { it.third.second }, { it.third.third }))
        val max = max(p)
        val out = found.take(max).map { (d, range, _) ->
            linkedMapOf<String, Any?>("path" to d.path, "range" to range, "severity" to d.severity, "message" to d.message).apply {
                d.source?.takeIf { it.isNotEmpty() }?.let { put("source", it) }
                d.code?.takeIf { it.isNotEmpty() }?.let { put("code", it) }
            }
        }
        return result("diagnostics", out, found.size > max)
    }

    private fun hover(p: Any?): Map<String, Any?> {
        val (path, offset) = at(p)
        val hover = source.hover(path, offset) ?: return mapOf("contents" to "")
        val text = plainText(hover.text)
        val out = linkedMapOf<String, Any?>("contents" to text.take(MAX_HOVER_CHARS))
        hover.span?.let { s -> Texts(source).of(s.path)?.let { out["range"] = it.range(s.start, s.end) } }
        if (text.length > MAX_HOVER_CHARS) out["truncated"] = true
        return out
    }

    private fun documentSymbols(p: Any?): Map<String, Any?> {
        val path = path(p)
        val lines = lines(path)
        var left = max(p)
        var truncated = false
        fun convert(symbols: List<SourceSymbol>): List<Map<String, Any?>> = symbols.mapNotNull { s ->
            if (left <= 0) { truncated = true; return@mapNotNull null }
            left--
            linkedMapOf<String, Any?>("name" to s.name, "kind" to (s.kind.takeIf { it in SYMBOL_KINDS } ?: "other"), "range" to lines.range(s.start, s.end)).apply {
                s.detail?.takeIf { it.isNotEmpty() }?.let { put("detail", it) }
                if (s.children.isNotEmpty()) convert(s.children).takeIf { it.isNotEmpty() }?.let { put("children", it) }
            }
        }
        return result("symbols", convert(source.symbols(path)), truncated)
    }

    private fun workspaceSymbols(p: Any?): Map<String, Any?> {
        val query = p.str("query")?.trim()
        if (query.isNullOrEmpty()) throw bad("query must be a non-empty string")
        if (query.codePointCount(0, query.length) > MAX_QUERY_CHARS) throw bad("query must be at most $MAX_QUERY_CHARS characters")
        val max = max(p)
        val texts = Texts(source)
        val found = source.workspaceSymbols(query, max + 1).distinct()
        val out = found.take(max).mapNotNull { s ->
            val lines = texts.of(s.span.path) ?: return@mapNotNull null
            linkedMapOf<String, Any?>("name" to s.name, "kind" to (s.kind.takeIf { it in SYMBOL_KINDS } ?: "other"), "path" to s.span.path,
                "range" to lines.range(s.span.start, s.span.end)).apply { s.container?.takeIf { it.isNotEmpty() }?.let { put("containerName", it) } }
        }
        return result("symbols", out, found.size > max)
    }

    private fun openEditors(p: Any?): Map<String, Any?> {
        val editors = source.openEditors().sortedBy { !it.active }
        val max = max(p)
        val texts = Texts(source)
        val out = editors.take(max).mapNotNull { e ->
            val lines = texts.of(e.path) ?: return@mapNotNull null
            linkedMapOf<String, Any?>("path" to e.path).apply {
                if (e.active) put("active", true)
                put("cursor", lines.position(e.caret))
                if (e.selectionEnd > e.selectionStart) {
                    put("selection", lines.range(e.selectionStart, e.selectionEnd))
                    put("selectedText", clipUtf16(lines.text.subSequence(e.selectionStart.coerceAtMost(lines.text.length), e.selectionEnd.coerceAtMost(lines.text.length)).toString(), MAX_SELECTED_UTF16))
                }
                if (e.dirty) put("dirty", true)
            }
        }
        return result("editors", out, editors.size > max)
    }

    private fun openFile(p: Any?): Map<String, Any?> {
        val path = path(p)
        val line = p.field("line")?.let { p.long("line") ?: throw bad("line must be a number") }
        val endLine = p.field("endLine")?.let { p.long("endLine") ?: throw bad("endLine must be a number") }
        if (line != null && line < 1) throw bad("line must be 1 or more")
        if (endLine != null && (line == null || endLine < line)) throw bad("endLine needs line, and must not be before it")
        val lines = lines(path)
        val last = endLine ?: line
        if (last != null && last > lines.count) throw bad("line $last is past the end of ${name(path)} (${lines.count} lines)")
        source.openFile(path, line?.toInt()?.minus(1), endLine?.toInt()?.minus(1))
        return emptyMap()
    }
}

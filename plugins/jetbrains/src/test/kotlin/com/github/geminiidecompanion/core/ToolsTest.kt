package com.github.geminiidecompanion.core

import java.io.File
import java.nio.file.Files
import java.util.concurrent.ExecutionException
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertTrue

// The editor tools, answered by the core from a stand-in for the IDE's code model (FakeIde: the
// project's files, declarations "func NAME", usages "NAME(", offsets in UTF-16 units as the IDE's
// documents count them). An agent reaches them the way every agent does, through
// `gemini-ide-companion tools` (a stdio MCP server) and the real sidecar; the test reads what the
// model reads. The second Greet on line 6 comes after an emoji and an accented letter: character 23
// counted in characters, 24 in UTF-16 units, more in bytes.

private const val MAIN_GO = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tmsg := Greet(\"😀é\") + Greet(\"x\")\n\tfmt.Println(msg)\n}\n"
private const val GREET_GO = "package main\n\n// Greet says hello.\nfunc Greet(name string) string {\n\treturn \"hello \" + name\n}\n"
private const val SECOND_GREET = 23L

/** A stand-in for the IDE: documents (with unsaved text), a tiny code model, open editors. */
private class FakeIde(private val dir: File) : EditorSource {
    override val editorName = "IntelliJ IDEA"
    override val offers: Set<String> = EditorTools.FEATURES.toSet()
    val unsaved = java.util.concurrent.ConcurrentHashMap<String, String>()
    @Volatile var problems: List<SourceDiagnostic> = emptyList()
    @Volatile var editors: List<SourceEditor> = emptyList()
    /** While set, reference searches wait for it: an IDE busy past the deadline. */
    @Volatile var busy: java.util.concurrent.CountDownLatch? = null
    val opened = LinkedBlockingQueue<List<Any?>>()

    override fun text(path: String): CharSequence? = unsaved[path] ?: File(path).takeIf { it.isFile }?.readText()
    private fun files() = dir.listFiles { f -> f.name.endsWith(".go") }!!.sortedBy { it.name }.map { it.absolutePath }
    private fun nameAt(path: String, offset: Int): String? {
        val t = text(path) ?: return null
        return Regex("\\w+").findAll(t).firstOrNull { offset in it.range.first..it.range.last + 1 }?.value
    }
    private fun find(pattern: (String) -> Regex, name: String) = files().flatMap { p ->
        pattern(name).findAll(text(p)!!).map { m -> m.groups[1]!!.range.let { Span(p, it.first, it.last + 1) } }.toList()
    }
    override fun diagnostics(path: String?) = problems
    override fun definitions(path: String, offset: Int) = nameAt(path, offset)?.let { find({ n -> Regex("func (${Regex.escape(n)})\\(") }, it) } ?: emptyList()
    override fun references(path: String, offset: Int, max: Int): List<Span> {
        busy?.await()
        return nameAt(path, offset)?.let { find({ n -> Regex("(?<!func )\\b(${Regex.escape(n)})\\(") }, it) }?.take(max) ?: emptyList()
    }
    override fun hover(path: String, offset: Int) = SourceHover("<html><b>func Greet</b>(name string) string<p>Greet says hello &amp; returns.</p></html>")
    override fun symbols(path: String): List<SourceSymbol> {
        if (!path.endsWith(".go")) throw NotAvailable("IntelliJ IDEA has no structure view for ${File(path).name}")
        val t = text(path)!!
        return Regex("func (\\w+)").findAll(t).map { SourceSymbol(it.groupValues[1], "function", it.range.first, t.indexOf("\n}", it.range.first) + 2, "func") }.toList()
    }
    override fun workspaceSymbols(query: String, max: Int) = find({ n -> Regex("func (\\w*${Regex.escape(n)}\\w*)\\(", RegexOption.IGNORE_CASE) }, query).map { SourceWorkspaceSymbol(text(it.path)!!.substring(it.start, it.end), "function", it) }
    override fun openEditors() = editors
    override fun openFile(path: String, line: Int?, endLine: Int?) { opened.add(listOf(path, line, endLine)) }
}

/** `gemini-ide-companion tools` as an agent runs it: stdio MCP, one JSON-RPC message per line. */
private class ToolsCommand(binary: String, env: Map<String, String>, cwd: File) : AutoCloseable {
    private val proc = ProcessBuilder(binary, "tools").directory(cwd).redirectError(ProcessBuilder.Redirect.DISCARD)
        .apply { environment().putAll(env) }.start()
    private val out = proc.outputStream.bufferedWriter()
    private val replies = LinkedBlockingQueue<Any?>()
    private var ids = 0L

    init {
        Thread({ proc.inputStream.bufferedReader().forEachLine { replies.add(Json.parse(it)) } }, "tools-reader").apply { isDaemon = true }.start()
        request("initialize", mapOf("protocolVersion" to "2025-06-18", "capabilities" to emptyMap<String, Any>(), "clientInfo" to mapOf("name" to "test-agent", "version" to "1")))
        send(mapOf("jsonrpc" to "2.0", "method" to "notifications/initialized"))
    }

    private fun send(m: Any?) { out.write(Json.stringify(m)); out.write("\n"); out.flush() }

    fun request(method: String, params: Any?): Any? {
        val id = ++ids
        send(mapOf("jsonrpc" to "2.0", "id" to id, "method" to method, "params" to params))
        while (true) {
            val m = replies.poll(20, TimeUnit.SECONDS) ?: throw AssertionError("no answer to $method within 20 s")
            if (m.long("id") == id) return m
        }
    }

    /** What the model reads: the text, and whether it is an error. */
    fun call(tool: String, args: Map<String, Any?>): Pair<String, Boolean> {
        val result = request("tools/call", mapOf("name" to tool, "arguments" to args)).field("result")
        val text = (result.field("content") as List<*>).first().str("text")!!
        return text to (result.field("isError") == true)
    }

    override fun close() { out.close(); proc.waitFor(10, TimeUnit.SECONDS); proc.destroy() }
}

private class ToolsFixture : AutoCloseable {
    val tmp: File = Files.createTempDirectory("gic-jb-tools").toFile().canonicalFile
    val workspace = File(tmp, "project").apply { mkdirs() }
    val main = File(workspace, "main.go").apply { writeText(MAIN_GO) }.absolutePath
    val greet = File(workspace, "greet.go").apply { writeText(GREET_GO) }.absolutePath
    val ide = FakeIde(workspace)
    val session = CompanionSession(SessionConfig(
        binary = System.getenv("GIC_BINARY") ?: error("set GIC_BINARY"),
        workspaceFolders = { listOf(workspace.absolutePath) },
        isTrusted = { true },
        ideDisplayName = "IntelliJ IDEA",
        environment = mapOf("TMPDIR" to tmp.absolutePath),
        tools = ide,
    ), object : CompanionUi {
        override fun showDiff(p: Proposal, replaced: Proposal?) = java.util.concurrent.CompletableFuture.completedFuture(Unit)
        override fun closeDiff(p: Proposal) = p.proposed
    })
    init { session.start() }
    val agent = ToolsCommand(System.getenv("GIC_BINARY"), System.getenv() + session.terminalEnv() + ("TMPDIR" to tmp.absolutePath), workspace)

    fun ok(tool: String, args: Map<String, Any?>): Any? {
        val (text, isError) = agent.call(tool, args)
        assertFalse(isError, "$tool answered an error: $text")
        return Json.parse(text)
    }

    override fun close() { agent.close(); session.stop(); tmp.deleteRecursively() }
}

private fun start(l: Any?) = l.field("range").field("start").let { it.long("line") to it.long("character") }

fun toolsTests() {
    test("tools: the initialize capabilities name the features the IDE offers") {
        val ide = FakeIde(File("."))
        assertEquals(EditorTools.FEATURES.associateWith { true }, EditorTools(ide) { 1000 }.capabilities)
        val some = object : EditorSource by ide { override val offers = setOf("diagnostics", "openFile") }
        val caps = EditorTools(some) { 1000 }.capabilities
        assertEquals(listOf("diagnostics", "openFile"), caps.filterValues { it }.keys.toList())
        assertEquals(false, caps["hover"])
    }

    test("tools: an agent's getDefinition reaches the IDE and the model reads the declaration, in character columns") {
        ToolsFixture().use { f ->
            val locations = f.ok("getDefinition", mapOf("path" to f.main, "line" to 6, "character" to SECOND_GREET)).field("locations") as List<*>
            assertEquals(1, locations.size)
            assertEquals(f.greet, locations[0].str("path"))
            assertEquals(4L to 6L, start(locations[0]))
            assertEquals("func Greet(name string) string {", locations[0].str("text"))
        }
    }

    test("tools: references, hover text without HTML, workspace symbols, outline, and the IDE's diagnostics converted from UTF-16 offsets") {
        ToolsFixture().use { f ->
            val refs = f.ok("getReferences", mapOf("path" to f.greet, "line" to 4, "character" to 6)).field("locations") as List<*>
            assertEquals(listOf(6L to 9L, 6L to SECOND_GREET), refs.map { start(it) })
            assertEquals(SECOND_GREET + 5, refs[1].field("range").field("end").long("character"))

            val hover = f.ok("getHover", mapOf("path" to f.main, "line" to 6, "character" to SECOND_GREET))
            assertEquals("func Greet(name string) string\nGreet says hello & returns.", hover.str("contents"))

            val found = f.ok("searchWorkspaceSymbols", mapOf("query" to "gree")).field("symbols") as List<*>
            assertEquals(listOf("Greet" to f.greet), found.map { it.str("name") to it.str("path") })
            assertEquals(4L to 6L, start(found[0]))

            val symbols = f.ok("getDocumentSymbols", mapOf("path" to f.greet)).field("symbols") as List<*>
            assertEquals(listOf("Greet"), symbols.map { it.str("name") })
            assertEquals("function", symbols[0].str("kind"))
            assertEquals(4L to 1L, start(symbols[0]))

            val line6 = MAIN_GO.indexOf("\tmsg")
            val second = MAIN_GO.lastIndexOf("Greet")
            f.ide.problems = listOf(
                SourceDiagnostic(f.main, second, second + 5, "error", "too many arguments in call to Greet", "IntelliJ IDEA"),
                SourceDiagnostic(f.greet, GREET_GO.indexOf("Greet("), GREET_GO.indexOf("Greet(") + 5, "warning", "Greet could be unexported"),
            )
            assertEquals(23, second - line6, "the second Greet's UTF-16 offset in its line")
            val all = f.ok("getDiagnostics", emptyMap()).field("diagnostics") as List<*>
            assertEquals(listOf(f.main, f.greet), all.map { it.str("path") })
            assertEquals(6L to SECOND_GREET, start(all[0]))
            assertEquals("too many arguments in call to Greet", all[0].str("message"))
            val errors = f.ok("getDiagnostics", mapOf("severity" to "error")).field("diagnostics") as List<*>
            assertEquals(1, errors.size)
        }
    }

    test("tools: open editors in character columns, active first; openFile shows the lines (0-based to the IDE)") {
        ToolsFixture().use { f ->
            val selStart = MAIN_GO.indexOf("Greet(\"😀")
            val selEnd = MAIN_GO.lastIndexOf("Greet")
            f.ide.unsaved[f.greet] = "// edited\n$GREET_GO"
            f.ide.editors = listOf(
                SourceEditor(f.main, false, selEnd, selStart, selEnd, false),
                SourceEditor(f.greet, true, 0, 0, 0, true),
            )
            val editors = f.ok("getOpenEditors", emptyMap()).field("editors") as List<*>
            assertEquals(listOf(f.greet, f.main), editors.map { it.str("path") })
            assertEquals(true, editors[0].field("dirty"))
            assertEquals(mapOf("line" to 6L, "character" to SECOND_GREET), editors[1].field("cursor"))
            assertEquals(9L, editors[1].field("selection").field("start").long("character"))
            assertEquals("Greet(\"😀é\") + ", editors[1].str("selectedText"))

            f.ok("openFile", mapOf("path" to f.greet, "line" to 4, "endLine" to 5))
            assertEquals(listOf<Any?>(f.greet, 3, 4), f.ide.opened.poll(10, TimeUnit.SECONDS))
        }
    }

    test("tools: bad positions and missing sources are explained to the model") {
        ToolsFixture().use { f ->
            val (past, pastErr) = f.agent.call("getDefinition", mapOf("path" to f.main, "line" to 900, "character" to 1))
            assertTrue(pastErr)
            assertTrue(past.contains("line 900 is past the end of main.go (8 lines)"), past)
            val (col, colErr) = f.agent.call("getReferences", mapOf("path" to f.main, "line" to 6, "character" to 80))
            assertTrue(colErr && col.contains("character 80 is past the end of line 6 of main.go"), col)
            val notes = File(f.workspace, "notes.txt").apply { writeText("notes\n") }.absolutePath
            val (na, naErr) = f.agent.call("getDocumentSymbols", mapOf("path" to notes))
            assertTrue(naErr && na.contains("IntelliJ IDEA has no structure view for notes.txt"), na)
        }
    }

    test("tools: an IDE slower than the deadline is answered with the deadline error, naming what it was doing; a line past the end is refused") {
        val dir = Files.createTempDirectory("gic-jb-deadline").toFile()
        try {
            File(dir, "greet.go").writeText(GREET_GO)
            val busy = java.util.concurrent.CountDownLatch(1)
            val ide = FakeIde(dir).apply { this.busy = busy }
            val tools = EditorTools(ide) { 200 }
            val e = try {
                tools.answer("editor/getReferences", mapOf("path" to File(dir, "greet.go").absolutePath, "line" to 4L, "character" to 6L, "maxResults" to 10L)).get(10, TimeUnit.SECONDS)
                null
            } catch (x: ExecutionException) { x.cause }
            assertTrue(e is LinkError && e.code == EditorTools.DEADLINE_PASSED, "got $e")
            assertTrue(e!!.message!!.startsWith("IntelliJ IDEA did not finish finding the references within 1 s"), e.message)
            assertEquals(1L, busy.count, "the answer came while the IDE was still busy")
            val past = try {
                tools.answer("editor/getDefinition", mapOf("path" to File(dir, "greet.go").absolutePath, "line" to 7L, "character" to 1L)).get(10, TimeUnit.SECONDS)
                null
            } catch (x: ExecutionException) { x.cause }
            assertTrue(past is LinkError && past.code == LinkError.INVALID_PARAMS, "got $past")
            assertEquals("line 7 is past the end of greet.go (6 lines)", past!!.message)
            busy.countDown()
        } finally { dir.deleteRecursively() }
    }
}

fun terminalEnvTests() {
    test("terminal env: the copied export lines, run in sh, give a terminal the companion's variables as they are") {
        val env = mapOf("GEMINI_CLI_IDE_SERVER_PORT" to "41234", "GEMINI_CLI_IDE_WORKSPACE_PATH" to "/tmp/it's a \"project\" \$HOME")
        val script = TerminalEnv.exportLines(env, windows = false) + "printf '%s\\n' \"\$GEMINI_CLI_IDE_SERVER_PORT\" \"\$GEMINI_CLI_IDE_WORKSPACE_PATH\"\n"
        val proc = ProcessBuilder("sh", "-c", script).redirectErrorStream(true).start()
        val out = proc.inputStream.bufferedReader().readLines()
        assertEquals(0, proc.waitFor())
        assertEquals(listOf("41234", "/tmp/it's a \"project\" \$HOME"), out)
        assertEquals("\$env:A = 'it''s'\n", TerminalEnv.exportLines(mapOf("A" to "it's"), windows = true))
    }
}

package com.github.geminiidecompanion.core

import java.io.File
import java.io.IOException
import java.nio.file.Files
import java.util.concurrent.CompletableFuture
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertNotNull
import kotlin.test.assertTrue

/** Stands in for the IDE's diff viewer: the right side is a string the test edits. */
private class FakeUi : CompanionUi {
    val shown = LinkedBlockingQueue<Proposal>()
    val rightSide = java.util.concurrent.ConcurrentHashMap<Long, String>()
    val closed = LinkedBlockingQueue<Proposal>()
    val logs = LinkedBlockingQueue<String>()
    val stops = LinkedBlockingQueue<String>()
    @Volatile var clients = -1
    override fun showDiff(p: Proposal, replaced: Proposal?): CompletableFuture<Unit> {
        rightSide[p.id] = p.proposed
        shown.add(p)
        return CompletableFuture.completedFuture(Unit)
    }
    override fun closeDiff(p: Proposal): String { closed.add(p); return rightSide.getValue(p.id) }
    override fun connectedClients(count: Int) { clients = count }
    override fun log(level: String, message: String) { logs.add("$level $message") }
    override fun stopped(error: String?) { stops.add(error ?: "") }
}

private class Fixture(trusted: Boolean?) : AutoCloseable {
    val tmp: File = Files.createTempDirectory("gic-jb").toFile()
    val workspace = File(tmp, "project").apply { mkdirs() }
    val ui = FakeUi()
    val session = CompanionSession(SessionConfig(
        binary = sidecarBinary(),
        workspaceFolders = listOf(workspace.absolutePath),
        isTrusted = trusted,
        ideDisplayName = "IntelliJ IDEA",
        environment = mapOf("TMPDIR" to tmp.absolutePath),
    ), ui)
    val info = session.start()
    private val clients = ArrayList<McpClient>()
    fun cli(): McpClient = McpClient(info.port, info.authToken).connect().also { clients.add(it) }
    override fun close() {
        clients.forEach { it.close() }
        session.stop()
        tmp.deleteRecursively()
    }
}

private fun sidecarBinary(): String {
    val b = System.getenv("GIC_BINARY")
    check(!b.isNullOrEmpty() && File(b).canExecute()) { "set GIC_BINARY to a built gemini-ide-companion (go build -race -o bin/gemini-ide-companion-test-race ./cmd/gemini-ide-companion)" }
    return b
}

private fun activeFile(update: Any?): Any? =
    (update.field("workspaceState").field("openFiles") as? List<*>)?.firstOrNull { it.field("isActive") == true }

private fun textOf(toolResult: Any?): String = ((toolResult.field("content") as List<*>).first()).str("text")!!

fun sidecarTests() {
    test("sidecar: initialize writes the discovery file and env; stop deletes it and the sidecar exits 0") {
        Fixture(trusted = true).use { f ->
            val disc = File(f.info.discoveryFile)
            assertTrue(disc.isFile, "discovery file ${f.info.discoveryFile}")
            assertTrue(disc.absolutePath.startsWith(f.tmp.absolutePath), "discovery file under TMPDIR")
            val d = Json.parse(disc.readText())
            assertEquals("IntelliJ IDEA", d.field("ideInfo").str("displayName"))
            assertEquals(f.info.port.toString(), f.info.env["GEMINI_CLI_IDE_SERVER_PORT"])
            assertEquals(f.workspace.absolutePath, f.info.env["GEMINI_CLI_IDE_WORKSPACE_PATH"])
            assertEquals(f.info.authToken, f.info.env["GEMINI_CLI_IDE_AUTH_TOKEN"])
            f.session.stop()
            assertFalse(disc.exists(), "discovery file deleted on stop")
            assertEquals(0, f.session.exitCode())
            assertEquals("", f.ui.stops.poll(10, TimeUnit.SECONDS), "a requested stop is not reported as an error")
        }
    }
    test("sidecar: context reaches the CLI with UTF-16 columns, selection and the IDE's trust") {
        Fixture(trusted = false).use { f ->
            val cli = f.cli()
            val file = File(f.workspace, "main.kt").apply { writeText("val a = 1\nval 😀 = \"é\" // x\n") }
            val text = file.readText()
            val cursor = Cursor.atOffset(text, text.indexOf("//"))
            // "val " 4 units, the emoji 2, " = " 3, "\"é\"" 3, " " 1: 13 units before "//".
            assertEquals(Cursor(2, 14), cursor)
            f.session.context.fileFocused(file.absolutePath, cursor, null)
            var u = cli.waitFor("ide/contextUpdate") { activeFile(it).str("path") == file.absolutePath && activeFile(it).field("cursor") != null }
            assertEquals(mapOf("line" to 2L, "character" to 14L), activeFile(u).field("cursor"))
            assertEquals(false, u.field("workspaceState").field("isTrusted"))
            f.session.context.selectionChanged(file.absolutePath, Cursor(2, 5), "😀 = ")
            u = cli.waitFor("ide/contextUpdate") { activeFile(it).str("selectedText") == "😀 = " }
            assertEquals(mapOf("line" to 2L, "character" to 5L), activeFile(u).field("cursor"))
            f.session.trustChanged(true)
            cli.waitFor("ide/contextUpdate") { it.field("workspaceState").field("isTrusted") == true }
            f.session.context.fileClosed(file.absolutePath)
            cli.waitFor("ide/contextUpdate") { (it.field("workspaceState").field("openFiles") as? List<*>).isNullOrEmpty() }
        }
    }
    test("sidecar: openDiff shows the proposal; accepting sends the edited right side to the CLI") {
        Fixture(trusted = true).use { f ->
            val cli = f.cli()
            val target = File(f.workspace, "a.txt").apply { writeText("old\n") }
            val result = cli.callTool("openDiff", mapOf("filePath" to target.absolutePath, "newContent" to "new\n"))
            assertTrue(result.field("isError") != true, "openDiff: ${Json.stringify(result)}")
            val p = assertNotNull(f.ui.shown.poll(10, TimeUnit.SECONDS))
            assertEquals("old\n", p.original)
            assertEquals("new\n", p.proposed)
            assertTrue(f.session.proposals.accept(p, "new, edited\n"))
            val acc = cli.waitFor("ide/diffAccepted")
            assertEquals("new, edited\n", acc.str("content"))
            assertEquals(target.absolutePath, acc.str("filePath"))
            assertEquals("old\n", target.readText(), "the plugin does not write the file: the CLI does")
        }
    }
    test("sidecar: rejecting reaches the CLI; a new file has no original; closeDiff returns the right side with no decision") {
        Fixture(trusted = true).use { f ->
            val cli = f.cli()
            val newFile = File(f.workspace, "new.txt").absolutePath
            cli.callTool("openDiff", mapOf("filePath" to newFile, "newContent" to "fresh\n"))
            val p = f.ui.shown.poll(10, TimeUnit.SECONDS)!!
            assertEquals(null, p.original)
            assertTrue(f.session.proposals.reject(p))
            assertEquals(newFile, cli.waitFor("ide/diffRejected").str("filePath"))

            cli.callTool("openDiff", mapOf("filePath" to newFile, "newContent" to "v2\n"))
            val q = f.ui.shown.poll(10, TimeUnit.SECONDS)!!
            f.ui.rightSide[q.id] = "edited v2\n"
            val closed = cli.callTool("closeDiff", mapOf("filePath" to newFile))
            assertEquals(mapOf("content" to "edited v2\n"), Json.parse(textOf(closed)))
            assertEquals(q, f.ui.closed.poll(10, TimeUnit.SECONDS))
            assertFalse(f.session.proposals.accept(q, "late"), "no decision after diff/close")
            assertEquals(1, cli.seen("ide/diffRejected").size)
            assertEquals(0, cli.seen("ide/diffAccepted").size)
        }
    }
    test("sidecar: status/get answers and the connected CLI is reported") {
        Fixture(trusted = true).use { f ->
            f.cli()
            val st = f.session.request("status/get", null).get(10, TimeUnit.SECONDS)
            assertEquals(f.info.port, st.long("port"))
            val deadline = System.nanoTime() + 10_000_000_000
            while (f.ui.clients != 1 && System.nanoTime() < deadline) Thread.onSpinWait()
            assertEquals(1, f.ui.clients)
        }
    }
    test("sidecar: a sidecar that dies is reported to the UI with a reason") {
        Fixture(trusted = true).use { f ->
            val sidecar = ProcessHandle.current().children()
                .filter { it.info().command().orElse("").contains("gemini-ide-companion") }.findFirst().get()
            sidecar.destroyForcibly()
            val why = f.ui.stops.poll(10, TimeUnit.SECONDS)
            assertNotNull(why)
            assertTrue(why.startsWith("the companion"), why)
            assertFalse(f.session.isRunning)
        }
    }
    test("sidecar: locating a missing binary says how to install it") {
        val e = assertFailsWith<IOException> { SidecarLocator.find("/nonexistent/gemini-ide-companion") }
        assertTrue(e.message!!.contains("go install"), e.message)
        val e2 = assertFailsWith<IOException> { SidecarLocator.find("", mapOf("PATH" to "/nonexistent", "HOME" to "/nonexistent")) }
        assertTrue(e2.message!!.contains("Could not find"), e2.message)
        assertEquals(File(sidecarBinary()).absolutePath, SidecarLocator.find(sidecarBinary()))
    }
}

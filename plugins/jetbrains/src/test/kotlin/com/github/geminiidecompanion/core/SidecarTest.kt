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
    val downs = LinkedBlockingQueue<String>()
    val readies = LinkedBlockingQueue<Boolean>()
    val changed = LinkedBlockingQueue<Proposal>()
    val envs = LinkedBlockingQueue<Map<String, String>>()
    @Volatile var clients = -1
    @Volatile var statusText: String? = null
    override fun showDiff(p: Proposal, replaced: Proposal?): CompletableFuture<Unit> {
        rightSide[p.id] = p.proposed
        shown.add(p)
        return CompletableFuture.completedFuture(Unit)
    }
    override fun closeDiff(p: Proposal): String { closed.add(p); return rightSide.getValue(p.id) }
    override fun status(connectedClients: Int, text: String?) { clients = connectedClients; statusText = text }
    override fun log(level: String, message: String) { logs.add("$level $message") }
    override fun down() { downs.add("down") }
    override fun ready(restarted: Boolean) { readies.add(restarted) }
    override fun proposalChanged(p: Proposal) { changed.add(p) }
    override fun envChanged(env: Map<String, String>) { envs.add(env) }
    /** The next log line containing [part], within 20 s. */
    fun logLine(part: String): String {
        val deadline = System.nanoTime() + 20_000_000_000
        while (System.nanoTime() < deadline) {
            val l = logs.poll(100, TimeUnit.MILLISECONDS) ?: continue
            if (l.contains(part)) return l
        }
        throw AssertionError("no log containing \"$part\"")
    }
}

private class Fixture(trusted: Boolean?, binary: String = sidecarBinary(), framing: Framing = Lsp) : AutoCloseable {
    val tmp: File = Files.createTempDirectory("gic-jb").toFile()
    val workspace = File(tmp, "project").apply { mkdirs() }
    val ui = FakeUi()
    @Volatile var folders = listOf(workspace.absolutePath)
    val session = CompanionSession(SessionConfig(
        binary = binary,
        workspaceFolders = { folders },
        isTrusted = { trusted },
        ideDisplayName = "IntelliJ IDEA",
        environment = mapOf("TMPDIR" to tmp.absolutePath, "GIC_TEST_MARKER" to File(tmp, "started").absolutePath),
        framing = framing,
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
            assertEquals("down", f.ui.downs.poll(10, TimeUnit.SECONDS))
            assertTrue(f.ui.logs.none { it.contains("exited") }, "a requested stop is not reported as a crash: ${f.ui.logs}")
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
            assertEquals(Decision.SENT, f.session.proposals.accept(p, "new, edited\n"))
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
            assertEquals(Decision.NOT_OPEN, f.session.proposals.accept(q, "late"), "no decision after diff/close")
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
    test("sidecar: a sidecar that dies is restarted per its policy, with its texts, and context is sent again") {
        Fixture(trusted = true).use { f ->
            val file = File(f.workspace, "a.kt").apply { writeText("x\n") }
            f.session.context.fileFocused(file.absolutePath, Cursor(1, 1), null)
            val firstPort = f.info.port
            assertEquals(false, f.ui.readies.poll(10, TimeUnit.SECONDS))
            ProcessHandle.of(f.session.sidecar.pid()!!).get().destroyForcibly()
            val restarting = f.ui.logLine("restarting")
            assertEquals("warn " + Policy.fill(f.session.sidecar.policy.restarting, "signal 9"), restarting, "the policy text, as is, with {reason}")
            assertEquals(true, f.ui.readies.poll(20, TimeUnit.SECONDS), "restarted")
            assertEquals("info " + f.session.sidecar.policy.restarted, f.ui.logLine("restarted"))
            assertEquals("down", f.ui.downs.poll(1, TimeUnit.SECONDS))
            assertTrue(f.session.isRunning)
            val info = f.session.info!!
            assertTrue(info.port != firstPort || info.authToken.isNotEmpty())
            // The restarted sidecar was told the open file again: a new CLI (on its new port) sees it.
            val cli = McpClient(info.port, info.authToken).connect()
            try { cli.waitFor("ide/contextUpdate") { activeFile(it).str("path") == file.absolutePath } } finally { cli.close() }
        }
    }
    test("sidecar: a sidecar that keeps dying is given up on with the gaveUp text") {
        // Starts the real sidecar once; every restart after that exits at once with a message on stderr.
        val tmp = Files.createTempDirectory("gic-jb-wrap").toFile()
        val wrapper = File(tmp, "wrapper.sh")
        wrapper.writeText("#!/bin/sh\nif [ -e \"\$GIC_TEST_MARKER\" ]; then echo 'cannot start: broken on purpose' >&2; exit 3; fi\ntouch \"\$GIC_TEST_MARKER\"\nexec '${sidecarBinary()}' \"\$@\"\n")
        wrapper.setExecutable(true)
        Fixture(trusted = true, binary = wrapper.absolutePath).use { f ->
            val policy = f.session.sidecar.policy
            ProcessHandle.current().descendants().filter { it.info().command().orElse("").contains("gemini-ide-companion") }.forEach { it.destroyForcibly() }
            val gaveUp = f.ui.logLine("not restarting")
            val expected = "error " + policy.gaveUp.substringBefore("{reason}").replace("{count}", (policy.maxRestarts + 1).toString())
            assertTrue(gaveUp.startsWith(expected), "gave up with the policy text: $gaveUp")
            assertTrue(gaveUp.contains("initialize failed"), "with the reason: $gaveUp")
            assertFalse(f.session.isRunning)
        }
        tmp.deleteRecursively()
    }
    test("sidecar: locating a missing binary says how to install it") {
        val e = assertFailsWith<IOException> { SidecarLocator.find("/nonexistent/gemini-ide-companion") }
        assertTrue(e.message!!.contains("go install"), e.message)
        val e2 = assertFailsWith<IOException> { SidecarLocator.find("", mapOf("PATH" to "/nonexistent", "HOME" to "/nonexistent")) }
        assertTrue(e2.message!!.contains("Could not find"), e2.message)
        assertEquals(File(sidecarBinary()).absolutePath, SidecarLocator.find(sidecarBinary()))
    }
    test("sidecar v2: initialize over lsp framing returns protocol 2, capabilities and the policy") {
        Fixture(trusted = true).use { f ->
            assertEquals(2L, f.info.protocolVersion)
            val caps = f.session.sidecar.capabilities
            assertTrue(caps.diffStates && caps.envChanged && caps.terminalEnv && caps.statusText, "capabilities $caps")
            val policy = f.session.sidecar.policy
            assertTrue(policy.delaysMs.isNotEmpty() && policy.maxRestarts > 0, "policy $policy")
            assertTrue(policy.gaveUp.contains(Policy.RESTART_COMMAND), "the sidecar composes texts with our restart command: ${policy.gaveUp}")
        }
    }
    test("sidecar v2: terminal/env answers the link's variables; folders changing sends envChanged and terminals get the new env") {
        Fixture(trusted = true).use { f ->
            val env = f.session.terminalEnv()
            assertEquals(f.info.port.toString(), env["GEMINI_CLI_IDE_SERVER_PORT"])
            assertEquals(f.workspace.absolutePath, env["GEMINI_CLI_IDE_WORKSPACE_PATH"])
            val second = File(f.tmp, "second").apply { mkdirs() }
            f.folders = listOf(f.workspace.absolutePath, second.absolutePath)
            f.session.foldersChanged(f.folders)
            val changed = assertNotNull(f.ui.envs.poll(10, TimeUnit.SECONDS), "workspace/envChanged")
            assertTrue(changed["GEMINI_CLI_IDE_WORKSPACE_PATH"]!!.contains(second.absolutePath), "env $changed")
            assertEquals(changed, f.session.terminalEnv())
        }
    }
    test("sidecar v2: status carries the sidecar's text, shown as is") {
        Fixture(trusted = true).use { f ->
            f.cli()
            val deadline = System.nanoTime() + 10_000_000_000
            while (f.ui.clients != 1 && System.nanoTime() < deadline) Thread.onSpinWait()
            assertEquals(1, f.ui.clients)
            assertTrue(f.ui.statusText?.contains("1") == true, "status text ${f.ui.statusText}")
        }
    }
    test("sidecar v2: a file changed on disk reaches the view; the first accept asks, the second overwrites and the CLI gets it") {
        Fixture(trusted = true).use { f ->
            val cli = f.cli()
            val target = File(f.workspace, "d.txt").apply { writeText("old\n") }
            // openDiff returns once the view is shown and the sidecar watches the file.
            cli.callTool("openDiff", mapOf("filePath" to target.absolutePath, "newContent" to "new\n"))
            val p = assertNotNull(f.ui.shown.poll(10, TimeUnit.SECONDS))
            assertNotNull(p.diffId, "a v2 sidecar numbers its proposals")
            target.writeText("someone else\n")
            val changed = assertNotNull(f.ui.changed.poll(10, TimeUnit.SECONDS), "diff/state changedOnDisk")
            assertEquals("changedOnDisk", changed.disk)
            assertEquals("someone else\n", changed.diskContent)
            assertEquals(Decision.NEEDS_CONFIRMATION, f.session.proposals.accept(p, "new\n"))
            assertEquals(Decision.SENT, f.session.proposals.accept(p, "new\n"))
            assertEquals("new\n", cli.waitFor("ide/diffAccepted").str("content"))
        }
    }
    test("sidecar v2: the ndjson framing speaks protocol 2 as well, and a proposal round-trips over it") {
        Fixture(trusted = true, framing = Ndjson).use { f ->
            assertEquals(2L, f.info.protocolVersion)
            val cli = f.cli()
            val target = File(f.workspace, "n.txt").apply { writeText("a\n") }
            cli.callTool("openDiff", mapOf("filePath" to target.absolutePath, "newContent" to "b\n"))
            val p = assertNotNull(f.ui.shown.poll(10, TimeUnit.SECONDS))
            assertEquals(Decision.SENT, f.session.proposals.accept(p, "b, edited\n"))
            assertEquals("b, edited\n", cli.waitFor("ide/diffAccepted").str("content"))
        }
    }
}

package com.github.geminiidecompanion.core

import java.io.File
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.nio.file.Files
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.CountDownLatch
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import kotlin.test.assertEquals
import kotlin.test.assertTrue
import kotlin.test.fail

/** An in-memory byte pipe that, unlike java.io.Piped*, does not care which threads write. */
private class Pipe {
    private val chunks = LinkedBlockingQueue<ByteArray>()
    private val eof = ByteArray(0)
    val output = object : OutputStream() {
        @Volatile var closed = false
        override fun write(b: Int) = write(byteArrayOf(b.toByte()), 0, 1)
        override fun write(b: ByteArray, off: Int, len: Int) { if (closed) throw IOException("pipe closed"); if (len > 0) chunks.add(b.copyOfRange(off, off + len)) }
        override fun close() { if (!closed) { closed = true; chunks.add(eof) } }
    }
    val input = object : InputStream() {
        private var cur: ByteArray? = null
        private var pos = 0
        override fun read(): Int { val b = ByteArray(1); return if (read(b, 0, 1) < 0) -1 else b[0].toInt() and 0xff }
        override fun read(b: ByteArray, off: Int, len: Int): Int {
            if (len == 0) return 0
            var c = cur
            if (c == null || pos >= c.size) {
                c = chunks.take()
                if (c === eof) { chunks.add(eof); cur = null; return -1 }
                cur = c; pos = 0
            }
            val n = minOf(len, c.size - pos)
            System.arraycopy(c, pos, b, off, n)
            pos += n
            return n
        }
    }
}

/** The sidecar's process as the core sees it, played by the replayer over two pipes. */
private class FakeProcess(val argv: List<String>) : Process() {
    val toCore = Pipe()
    val fromCore = Pipe()
    private val exited = CountDownLatch(1)
    @Volatile private var code = -1
    fun die(exitCode: Int) { if (exited.count > 0) { code = exitCode; toCore.output.close(); exited.countDown() } }
    override fun getOutputStream(): OutputStream = fromCore.output
    override fun getInputStream(): InputStream = toCore.input
    override fun getErrorStream(): InputStream = InputStream.nullInputStream()
    override fun waitFor(): Int { exited.await(); return code }
    override fun waitFor(timeout: Long, unit: TimeUnit): Boolean = exited.await(timeout, unit)
    override fun exitValue(): Int = if (exited.count == 0L) code else throw IllegalThreadStateException("running")
    override fun destroy() = die(143)
    override fun isAlive(): Boolean = exited.count > 0
    override fun pid(): Long = 4242
}

/** The editor's side of the diff viewer: right sides the user edits. */
private class ReplayUi : CompanionUi {
    val right = ConcurrentHashMap<Long, String>()
    val logs = LinkedBlockingQueue<String>()
    val readies = LinkedBlockingQueue<Boolean>()
    override fun ready(restarted: Boolean) { readies.add(restarted) }
    override fun showDiff(p: Proposal, replaced: Proposal?): CompletableFuture<Unit> {
        right.putIfAbsent(p.id, p.proposed)
        return CompletableFuture.completedFuture(Unit)
    }
    override fun closeDiff(p: Proposal): String = right[p.id] ?: p.proposed
    override fun log(level: String, message: String) { logs.add("$level $message") }
}

/**
 * Replays one editor-link transcript (docs: link/protocol/transcripts)
 * against the plugin's core: the replayer plays the sidecar (sending `sidecar`
 * messages), checks every message the core sends against the next `plugin`
 * step, drives editor events through the core's API, performs `user` steps
 * through the proposal state machine, and skips `cli` steps.
 */
private class Replayer(private val name: String, private val steps: List<Any?>) {
    private val tmp: File = Files.createTempDirectory("gic-replay").toFile()
    private val workspace = File(tmp, "workspace").apply { mkdirs(); File(this, "file.txt").writeText("one\ntwo\nthree\n") }
    private val processes = LinkedBlockingQueue<FakeProcess>()
    private var proc: FakeProcess? = null
    private val fromCore = java.util.concurrent.LinkedBlockingDeque<Any?>()
    private val ui = ReplayUi()
    private val session = CompanionSession(SessionConfig(
        binary = "gemini-ide-companion",
        workspaceFolders = { listOf(workspace.absolutePath) },
        isTrusted = { true },
        ideDisplayName = "IntelliJ IDEA",
        launch = { argv, _ -> FakeProcess(argv).also { processes.add(it) } },
    ), ui)
    private val pendingCore = ArrayDeque<Any>() // ids of the core's requests not yet answered
    private val pendingOurs = ArrayDeque<Any>() // ids of our requests the core has not answered
    private var ourIds = 1L
    private var lastUser: String? = null

    private fun subst(v: Any?): Any? = when (v) {
        is String -> Regex("""\$\{(workspace|file\d*)\}""").replace(v) { m ->
            if (m.groupValues[1] == "workspace") workspace.absolutePath else File(workspace, m.groupValues[1] + ".txt").absolutePath
        }
        is Map<*, *> -> v.entries.associate { (k, x) -> k as String to subst(x) }
        is List<*> -> v.map { subst(it) }
        else -> v
    }

    /** The value each placeholder last matched, by key: a `sidecar` line's placeholders are filled from it. */
    private val lastByKey = HashMap<String, Any?>()

    /** Null when [actual] matches [expected] (transcript rules), else where it differs. */
    private fun mismatch(expected: Any?, actual: Any?, present: Boolean, at: String, id: Any?, key: String = ""): String? {
        fun placeholder(ok: Boolean, why: String): String? { if (ok) lastByKey[key] = actual; return if (ok) null else why }
        when (expected) {
            "<any>" -> return placeholder(present, "$at: missing")
            "<string>" -> return placeholder(actual is String, "$at: not a string: $actual")
            "<number>" -> return placeholder(actual is Long || actual is Double, "$at: not a number: $actual")
            "<id>" -> return if (present && (id == null || actual == id)) null else "$at: id $actual, expected $id"
            is Map<*, *> -> {
                if (actual !is Map<*, *>) return "$at: not an object: ${Json.stringify(actual)}"
                for ((k, v) in expected) mismatch(v, actual[k], actual.containsKey(k), "$at.$k", id, k as String)?.let { return it }
                return null
            }
            is List<*> -> {
                if (actual !is List<*> || actual.size != expected.size) return "$at: ${Json.stringify(actual)} is not ${Json.stringify(expected)}"
                expected.forEachIndexed { i, e -> mismatch(e, actual[i], true, "$at[$i]", id, key)?.let { return it } }
                return null
            }
            is Number -> return if (actual is Number && actual.toDouble() == expected.toDouble()) null else "$at: $actual, expected $expected"
            else -> return if (present && actual == expected) null else "$at: ${Json.stringify(actual)}, expected ${Json.stringify(expected)}"
        }
    }

    /** A `sidecar` line as sent: each placeholder takes the value last matched under its key, else 1 / "x" / null. */
    private fun fill(v: Any?, key: String = ""): Any? = when (v) {
        "<number>", "<string>", "<any>" -> if (lastByKey.containsKey(key)) lastByKey[key] else when (v) { "<number>" -> 1L; "<string>" -> "x"; else -> null }
        is Map<*, *> -> LinkedHashMap<String, Any?>().apply { for ((k, x) in v) put(k as String, if (k == "id") x else fill(x, k)) }
        is List<*> -> v.map { fill(it, key) }
        else -> v
    }

    private fun connect(): FakeProcess {
        val p = processes.poll(20, TimeUnit.SECONDS) ?: fail("$name: the core did not start a sidecar")
        assertTrue("--framing=lsp" in p.argv && "--stdio" in p.argv, "argv ${p.argv}")
        proc = p
        val reader = Lsp.reader(p.fromCore.input)
        Thread({
            try { while (true) fromCore.add(Json.parse(reader.next() ?: break)) } catch (_: IOException) {}
        }, "replay-reader").apply { isDaemon = true }.start()
        return p
    }

    private fun toCore(msg: Any?) = Lsp.write(proc!!.toCore.output, Json.stringify(msg))

    /** Makes the core send [msg]'s kind of message the way the editor would: through its API. */
    private fun drive(msg: Any?) {
        val method = msg.str("method") ?: return // a response: the core sends it by itself
        val params = msg.field("params")
        val c = session.context
        fun cursor() = params.field("cursor")?.let { Cursor(it.long("line")!!.toInt(), it.long("character")!!.toInt()) }
        when (method) {
            "initialize", "diff/accepted", "diff/rejected" -> {} // from start/restart and from user steps
            "context/fileFocused" -> if (replays > 0) replays-- else c.fileFocused(params.str("path")!!, cursor(), params.str("selectedText"))
            "context/selectionChanged" -> c.selectionChanged(params.str("path")!!, cursor()!!, params.str("selectedText"))
            "context/fileClosed" -> c.fileClosed(params.str("path")!!)
            "context/fileRenamed" -> c.fileRenamed(params.str("oldPath")!!, params.str("newPath")!!)
            "workspace/trustChanged" -> session.trustChanged(params.field("isTrusted") == true)
            "workspace/foldersChanged" -> session.foldersChanged((params.field("workspaceFolders") as List<*>).map { it as String })
            "terminal/env" -> CompletableFuture.runAsync { session.terminalEnv() }
            "shutdown" -> Thread { session.stop() }.start()
            else -> if (msg.field("id") != null) session.request(method, params) else session.sidecar.notify(method, params)
        }
    }

    private fun expectFromCore(step: Any?, index: Int) {
        val expected = subst(step)
        drive(expected)
        val isAnswer = expected.field("method") == null
        val id = if (isAnswer) pendingOurs.firstOrNull() else null
        // A notification no line expects is ignored (transcript rules), and one that arrived before the
        // line expecting it is kept for that line; a request or reply must match the next line.
        val deadline = System.nanoTime() + 10_000_000_000
        var actual: Any? = stash.firstOrNull { mismatch(expected, it, true, "", id) == null }?.also { stash.remove(it) }
        while (actual == null) {
            val left = (deadline - System.nanoTime()) / 1_000_000
            val next = (if (left > 0) fromCore.poll(left, TimeUnit.MILLISECONDS) else null)
                ?: fail("$name step $index: the core sent nothing matching ${Json.stringify(expected)}" +
                    (lastUser?.let { " (after user $it)" } ?: "") + (if (stash.isEmpty()) "" else "; it sent, unexpected: ${stash.map { Json.stringify(it) }}"))
            val why = mismatch(expected, next, true, "step $index", id)
            if (why == null) actual = next
            else if (next.field("method") != null && next.field("id") == null) stash.add(next)
            else fail("$name: $why\n  sent: ${Json.stringify(next)}")
        }
        if (isAnswer) pendingOurs.removeFirstOrNull() else actual.field("id")?.let { pendingCore.addLast(it); coreMethods[it] = actual.str("method")!! }
    }

    /** Sends a `sidecar` step: requests get a real id; an answer gets the id of the core's oldest unanswered request. */
    private fun sendToCore(step: Any?) {
        @Suppress("UNCHECKED_CAST")
        val m = fill(subst(step)) as LinkedHashMap<String, Any?>
        var answered: String? = null
        if (m["method"] != null && m["id"] != null) {
            val id = m["id"].takeIf { it != "<id>" } ?: "replay-${ourIds++}"
            m["id"] = id
            pendingOurs.addLast(id!!)
        } else if (m["method"] == null) {
            val id = pendingCore.removeFirstOrNull()
            m["id"] = id
            answered = coreMethods.remove(id)
        }
        // After initialize the core sends the context it remembers by itself.
        if (answered == "initialize") replays = session.context.openFiles().size
        toCore(m)
        if (answered == "shutdown") proc!!.die(0) // the real sidecar exits after answering shutdown
        // Editor events from here on happen once the core has taken the answer (and sent its context again).
        if (answered == "initialize" && m["result"] != null) ui.readies.poll(10, TimeUnit.SECONDS) ?: fail("$name: the core did not take the initialize answer")
    }

    private val coreMethods = HashMap<Any, String>()
    private val stash = ArrayList<Any?>() // notifications from the core that no line has expected yet
    private var replays = 0

    /**
     * Waits until the core has handled everything sent to it so far: it reads
     * messages in order, so the answer to a request sent now comes after
     * them. Messages that arrive meanwhile stay queued, in order.
     */
    private fun barrier(index: Int) {
        val id = "barrier-${ourIds++}"
        toCore(mapOf("jsonrpc" to "2.0", "id" to id, "method" to "replay/barrier"))
        val held = ArrayList<Any?>()
        while (true) {
            val m = fromCore.poll(10, TimeUnit.SECONDS) ?: fail("$name step $index: the core did not answer a barrier request")
            if (m.field("id") == id && m.field("method") == null) break
            held.add(m)
        }
        for (m in held.asReversed()) fromCore.addFirst(m)
    }

    private fun user(action: Any?, index: Int) {
        barrier(index)
        val what = action.str("action")
        lastUser = what
        val p = session.proposals.all().lastOrNull() ?: fail("$name step $index: user $what, but no proposal is open")
        val book = session.proposals
        when (what) {
            "edit" -> ui.right[p.id] = action.str("content") ?: fail("$name step $index: edit without content")
            "accept" -> book.accept(p, ui.right[p.id] ?: p.proposed)
            "acceptOverDiskChange" -> book.acceptOverDiskChange(p, ui.right[p.id] ?: p.proposed)
            "reject", "close" -> book.reject(p)
            else -> fail("$name step $index: unknown user action $what")
        }
    }

    fun run() {
        val starting = CompletableFuture.runAsync { session.start() }
        try {
            connect()
            val done = HashSet<Int>()
            steps.forEachIndexed { i, step ->
                val index = i + 1
                if (i in done) return@forEachIndexed
                when {
                    step.field("comment") != null || step.field("cli") != null -> {}
                    step.field("plugin") != null -> {
                        expectFromCore(step.field("plugin"), index)
                    }
                    step.field("sidecar") != null -> {
                        val m = step.field("sidecar")
                        if (m.field("method") == null && pendingCore.isEmpty()) fail("$name step $index: an answer, but the core asked nothing")
                        // `user` lines right after a sidecar request (comments aside) happened while the
                        // request was in flight: the user's action is handled first, as in the editor.
                        // After a diff/close no view is left to act on, so a user line that follows one
                        // (before the next diff/open) can only have happened before it too.
                        if (m.field("method") != null && m.field("id") != null) {
                            val closing = m.str("method") == "diff/close"
                            var j = i + 1
                            while (j < steps.size) {
                                val next = steps[j]
                                if (next.field("user") != null) { user(next.field("user"), j + 1); done.add(j) }
                                else if (next.field("comment") == null && !(closing && next.field("sidecar").str("method") != "diff/open" && next.field("restart") == null)) break
                                j++
                            }
                        }
                        sendToCore(m)
                    }
                    step.field("user") != null -> user(step.field("user"), index)
                    step.field("restart") != null -> {
                        proc!!.die(137)
                        pendingCore.clear(); pendingOurs.clear()
                        connect()
                    }
                    else -> fail("$name step $index: unknown step ${Json.stringify(step)}")
                }
            }
            starting.get(10, TimeUnit.SECONDS)
        } finally {
            finish()
            tmp.deleteRecursively()
        }
    }

    /** Stops the core: answers its `shutdown` and ends the fake process. */
    private fun finish() {
        val stop = Thread { session.stop(graceMillis = 2000) }.apply { start() }
        val deadline = System.nanoTime() + 5_000_000_000
        while (stop.isAlive && System.nanoTime() < deadline) {
            val m = fromCore.poll(100, TimeUnit.MILLISECONDS) ?: continue
            if (m.str("method") == "shutdown") {
                try { toCore(mapOf("jsonrpc" to "2.0", "id" to m.field("id"), "result" to null)) } catch (_: IOException) {}
                proc?.die(0)
            }
        }
        proc?.die(0)
        stop.join(5000)
    }
}

/** The transcripts: the project's (link/protocol/transcripts) and the plugin's own (src/test/transcripts). */
private fun transcripts(): List<File> {
    val here = File(System.getProperty("gic.pluginDir") ?: ".").absoluteFile
    val dirs = listOf(File(here, "../../link/protocol/transcripts"), File(here, "src/test/transcripts"))
    // Files named sidecar-* test the sidecar's own answers (errors, protocol 1): not for plugins.
    return dirs.flatMap { d -> d.listFiles { f -> f.name.endsWith(".jsonl") && !f.name.startsWith("sidecar-") }?.sortedBy { it.name }?.toList() ?: emptyList() }
}

private fun load(f: File): List<Any?> = f.readLines().mapIndexedNotNull { i, line ->
    if (line.isBlank()) null else try { Json.parse(line) } catch (e: Json.ParseError) { fail("${f.name}:${i + 1}: ${e.message}") }
}

/** Why the core cannot replay [steps] (a protocol-1 initialize, agent methods), or null. */
private fun unsupported(steps: List<Any?>): String? {
    for (s in steps) {
        if (s.field("plugin") is String) return "raw bytes from the plugin (a sidecar-only check)"
        val m = s.field("plugin") ?: s.field("sidecar") ?: continue
        if (m.str("method") == "initialize" && s.field("plugin") != null) {
            val v = m.field("params").field("protocolVersion")
            if (v != 2L) return "its initialize speaks protocol $v; this plugin speaks 2"
        }
        if (m.str("method")?.startsWith("agent/") == true) return "agent panel methods (the plugin has no agent panel)"
    }
    return null
}

fun transcriptTests() {
    val files = transcripts()
    test("transcripts: at least the plugin's own are found") {
        assertTrue(files.any { it.path.contains("src/test/transcripts") }, "found ${files.map { it.path }}")
    }
    for (f in files) {
        test("transcript ${if (f.path.contains("src/test/transcripts")) "plugin" else "companion"}/${f.name}") {
            val steps = load(f)
            val why = unsupported(steps)
            if (why != null) { println("     (not replayed: $why)"); return@test }
            Replayer(f.name, steps).run()
        }
    }
    test("transcripts: a mismatching plugin message fails the replay") {
        val steps = load(File(File(System.getProperty("gic.pluginDir") ?: ".").absoluteFile, "src/test/transcripts/jetbrains-diff-accept-edited.jsonl"))
        val broken = steps.map { s ->
            if (s.field("plugin").str("method") == "diff/accepted") mapOf("plugin" to mapOf("jsonrpc" to "2.0", "method" to "diff/accepted", "params" to mapOf("content" to "something else"))) else s
        }
        val e = runCatching { Replayer("broken", broken).run() }.exceptionOrNull()
        assertTrue(e != null && e.message!!.contains("something else") && e.message!!.contains("new, edited"), "replay of a wrong expectation must fail, naming what was sent: $e")
        assertEquals(true, e is AssertionError)
    }
}

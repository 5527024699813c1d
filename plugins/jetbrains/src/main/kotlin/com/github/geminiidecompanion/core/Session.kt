package com.github.geminiidecompanion.core

import java.io.File
import java.io.IOException
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/** What the IDE layer shows; every call may come from a background thread. */
interface CompanionUi {
    /** Show [p] as a diff with an editable right side; complete once it is visible. */
    fun showDiff(p: Proposal, replaced: Proposal?): CompletableFuture<Unit>

    /** Close [p]'s view and return its right side as it is now. */
    fun closeDiff(p: Proposal): String

    /** A CLI connected or went. */
    fun connectedClients(count: Int) {}

    /** A message for the user (`info`, `warn`, `error`). */
    fun log(level: String, message: String) {}

    /** The environment for new terminals changed. */
    fun envChanged(env: Map<String, String>) {}

    /** The sidecar stopped; [error] is null after [CompanionSession.stop]. */
    fun stopped(error: String?) {}
}

/** What `initialize` answered. */
data class LinkInfo(
    val port: Long,
    val authToken: String,
    val idePid: Long,
    val discoveryFile: String,
    val env: Map<String, String>,
    val serverVersion: String,
)

/** How to start and introduce the sidecar. */
data class SessionConfig(
    val binary: String,
    val workspaceFolders: List<String>,
    val isTrusted: Boolean?,
    val processId: Long = ProcessHandle.current().pid(),
    val ideName: String = "jetbrains",
    val ideDisplayName: String = "JetBrains IDE",
    val extraArgs: List<String> = emptyList(),
    val environment: Map<String, String> = emptyMap(),
    val framing: Framing = Ndjson,
)

/**
 * One sidecar for one project: starts `gemini-ide-companion --stdio`,
 * initializes it, routes diffs to the [CompanionUi] through a [ProposalBook]
 * and context through a [ContextReporter], and stops it.
 */
class CompanionSession(private val config: SessionConfig, private val ui: CompanionUi) {
    private var process: Process? = null
    private var link: Link? = null

    /** The proposal state machine; decisions go to the sidecar. */
    val proposals = ProposalBook { m, p -> link?.notify(m, p) }

    /** Context events go to the sidecar through this. */
    val context = ContextReporter { m, p -> link?.notify(m, p) }

    @Volatile
    private var stopping = false

    /** What `initialize` answered; null before. */
    @Volatile
    var info: LinkInfo? = null
        private set

    /** Current environment for terminals (updated by `workspace/envChanged`). */
    @Volatile
    var env: Map<String, String> = emptyMap()
        private set

    /** Starts the sidecar and initializes it; throws [IOException] with a message a user can act on. */
    fun start(timeoutSeconds: Long = 20): LinkInfo {
        val argv = listOf(config.binary, "--stdio") + config.extraArgs
        val pb = ProcessBuilder(argv)
        pb.environment().putAll(config.environment)
        val proc = try {
            pb.start()
        } catch (e: IOException) {
            throw IOException("could not start ${config.binary}: ${e.message}", e)
        }
        process = proc
        drainStderr(proc)
        val l = Link(proc.inputStream, proc.outputStream, config.framing, Handler()).start()
        link = l
        val params = LinkedHashMap<String, Any?>()
        params["protocolVersion"] = 1
        params["ide"] = mapOf("name" to config.ideName, "displayName" to config.ideDisplayName)
        params["processId"] = config.processId
        params["workspaceFolders"] = config.workspaceFolders
        config.isTrusted?.let { params["isTrusted"] = it }
        val result = try {
            l.request("initialize", params).get(timeoutSeconds, TimeUnit.SECONDS)
        } catch (e: TimeoutException) {
            stop(); throw IOException("the companion did not answer initialize in $timeoutSeconds s")
        } catch (e: java.util.concurrent.ExecutionException) {
            stop(); throw IOException("initialize failed: ${e.cause?.message}", e.cause)
        }
        val li = LinkInfo(
            port = result.long("port") ?: 0,
            authToken = result.str("authToken") ?: "",
            idePid = result.long("idePid") ?: 0,
            discoveryFile = result.str("discoveryFile") ?: "",
            env = stringMap(result.field("env")),
            serverVersion = result.str("serverVersion") ?: "",
        )
        info = li
        env = li.env
        context.replay()
        return li
    }

    /** True while the sidecar's link is up. */
    val isRunning: Boolean get() = link?.isOpen == true

    /** Sends a request (e.g. `status/get`). */
    fun request(method: String, params: Any?): CompletableFuture<Any?> =
        link?.request(method, params) ?: CompletableFuture.failedFuture(IOException("the companion is not running"))

    /** Tells the sidecar the project's folders changed. */
    fun foldersChanged(folders: List<String>) { link?.notify("workspace/foldersChanged", mapOf("workspaceFolders" to folders)) }

    /** Tells the sidecar the project's trust changed. */
    fun trustChanged(trusted: Boolean) { link?.notify("workspace/trustChanged", mapOf("isTrusted" to trusted)) }

    /** `shutdown`, then end of stdin, then (after [graceMillis]) kill. Waits for the process to exit. */
    fun stop(graceMillis: Long = 3000) {
        stopping = true
        val l = link
        val p = process
        if (l != null && l.isOpen) {
            try { l.request("shutdown", null).get(graceMillis, TimeUnit.MILLISECONDS) } catch (_: Exception) {}
            l.close()
        }
        if (p != null && !p.waitFor(graceMillis, TimeUnit.MILLISECONDS)) {
            p.destroy()
            if (!p.waitFor(graceMillis, TimeUnit.MILLISECONDS)) p.destroyForcibly().waitFor()
        }
    }

    /** The sidecar process's exit code, or null while it runs. */
    fun exitCode(): Int? = process?.let { if (it.isAlive) null else it.exitValue() }

    private fun drainStderr(proc: Process) {
        val t = Thread({
            try {
                proc.errorStream.bufferedReader().forEachLine { line -> lastStderr = line }
            } catch (_: IOException) {}
        }, "gemini-companion-stderr")
        t.isDaemon = true
        t.start()
    }

    @Volatile
    private var lastStderr: String = ""

    private inner class Handler : LinkHandler {
        override fun onRequest(method: String, params: Any?): CompletableFuture<Any?> = when (method) {
            "diff/open" -> {
                val opened = proposals.open(params)
                ui.showDiff(opened.proposal, opened.replaced).thenApply { emptyMap<String, Any?>() }
            }
            "diff/close" -> {
                val path = params.str("filePath")
                    ?: throw LinkError(LinkError.INVALID_PARAMS, "diff/close: filePath must be a string")
                val p = proposals.close(path)
                CompletableFuture.completedFuture(mapOf("content" to p?.let { ui.closeDiff(it) }))
            }
            else -> CompletableFuture.failedFuture(LinkError(LinkError.METHOD_NOT_FOUND, "unknown method $method"))
        }

        override fun onNotification(method: String, params: Any?) {
            when (method) {
                "status" -> ui.connectedClients(params.long("connectedClients")?.toInt() ?: 0)
                "log" -> ui.log(params.str("level") ?: "info", params.str("message") ?: "")
                "workspace/envChanged" -> {
                    env = stringMap(params.field("env"))
                    ui.envChanged(env)
                }
            }
        }

        override fun onClosed(cause: Throwable?) {
            proposals.clear()
            val why = when {
                stopping -> null
                cause != null -> "the companion link failed: ${cause.message}"
                else -> "the companion stopped" + (lastStderr.takeIf { it.isNotBlank() }?.let { ": $it" } ?: "")
            }
            ui.stopped(why)
        }

        override fun onProtocolError(message: String) = ui.log("warn", message)
    }

    private fun stringMap(v: Any?): Map<String, String> =
        (v as? Map<*, *>)?.entries?.mapNotNull { (k, value) -> if (k is String && value is String) k to value else null }?.toMap() ?: emptyMap()
}

/** Finds the sidecar binary: the configured path, else PATH, else Go's bin directories. */
object SidecarLocator {
    const val BINARY_NAME = "gemini-ide-companion"
    const val INSTALL_COMMAND = "go install github.com/gemini-ide-companion/gemini-ide-companion/cmd/gemini-ide-companion@latest"

    /** The absolute path, or an [IOException] whose message says what to do. */
    fun find(configured: String?, env: Map<String, String> = System.getenv()): String {
        val exe = if (System.getProperty("os.name").startsWith("Windows")) "$BINARY_NAME.exe" else BINARY_NAME
        val c = configured?.trim().orEmpty()
        if (c.isNotEmpty()) {
            val f = File(if (c.startsWith("~/")) env["HOME"].orEmpty() + c.substring(1) else c)
            if (f.isFile && f.canExecute()) return f.absolutePath
            if (f.isDirectory && File(f, exe).let { it.isFile && it.canExecute() }) return File(f, exe).absolutePath
            throw IOException("The sidecar path setting points to $c, which is not an executable file. Fix it in Settings | Tools | Gemini CLI Companion, or install the companion with: $INSTALL_COMMAND")
        }
        val dirs = (env["PATH"] ?: "").split(File.pathSeparator).filter { it.isNotEmpty() }.toMutableList()
        env["GOBIN"]?.let { dirs.add(it) }
        val gopath = env["GOPATH"]
        if (gopath != null) gopath.split(File.pathSeparator).filter { it.isNotEmpty() }.forEach { dirs.add("$it/bin") }
        else env["HOME"]?.let { dirs.add("$it/go/bin") }
        for (d in dirs) {
            val f = File(d, exe)
            if (f.isFile && f.canExecute()) return f.absolutePath
        }
        throw IOException("Could not find $BINARY_NAME on PATH or in Go's bin directory. Install it with: $INSTALL_COMMAND, or set its path in Settings | Tools | Gemini CLI Companion.")
    }
}

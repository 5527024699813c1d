package com.github.geminiidecompanion.core

import java.io.File
import java.io.IOException
import java.util.concurrent.CompletableFuture

/** What the IDE layer shows; every call may come from a background thread. */
interface CompanionUi {
    /** Show [p] as a diff with an editable right side (closing [replaced]'s view); complete once it is visible. */
    fun showDiff(p: Proposal, replaced: Proposal?): CompletableFuture<Unit>

    /** Close [p]'s view and return its right side as it is now. */
    fun closeDiff(p: Proposal): String

    /** [p]'s labels or its "before" side ([Proposal.diskContent]) changed. */
    fun proposalChanged(p: Proposal) {}

    /** Text the user accepted for [path] that was not written: keep it where they can save it. */
    fun keepUnwritten(path: String, content: String) {}

    /** CLIs connected or went; [text] is the sidecar's status line (shown as is), null from a protocol-1 sidecar. */
    fun status(connectedClients: Int, text: String?) {}

    /** A message for the user (`info`, `warn`, `error`), shown as is. */
    fun log(level: String, message: String) {}

    /** The environment for new terminals changed. */
    fun envChanged(env: Map<String, String>) {}

    /** The sidecar is ready ([restarted]: after an automatic restart); context was sent again. */
    fun ready(restarted: Boolean) {}

    /** The link went down: close every view without a decision; a restart may follow (see [log]). */
    fun down() {}
}

/** What `initialize` answered. */
data class LinkInfo(
    val port: Long,
    val authToken: String,
    val idePid: Long,
    val discoveryFile: String,
    val env: Map<String, String>,
    val serverVersion: String,
    val protocolVersion: Long,
)

/** How to start and introduce the sidecar. [isTrusted] is read at every (re)start: the IDE's trusted-project state. */
data class SessionConfig(
    val binary: String,
    val workspaceFolders: () -> List<String>,
    val isTrusted: () -> Boolean?,
    val processId: Long = ProcessHandle.current().pid(),
    val ideName: String = "jetbrains",
    val ideDisplayName: String = "JetBrains IDE",
    val restartCommand: String = Policy.RESTART_COMMAND,
    val extraArgs: List<String> = emptyList(),
    val environment: Map<String, String> = emptyMap(),
    val framing: Framing = Lsp,
    val launch: ((argv: List<String>, env: Map<String, String>) -> Process)? = null,
    /** What the IDE knows, for the editor tools (`editor/…` requests); null: the tools are not offered. */
    val tools: EditorSource? = null,
)

/**
 * One sidecar for one project, as the IDE layer sees it: the [Sidecar]
 * (transport and lifecycle), the [ProposalBook] behind the `diff/...` requests, the
 * [ContextReporter], and status, log and env routed to the [CompanionUi].
 */
class CompanionSession(private val config: SessionConfig, private val ui: CompanionUi) {
    /** The transport and lifecycle module. */
    val sidecar = Sidecar(
        config.launch?.let { SidecarConfig(config.binary, config.framing, config.extraArgs, config.environment, launch = it) { initParams() } }
            ?: SidecarConfig(config.binary, config.framing, config.extraArgs, config.environment) { initParams() },
        Listener(),
    )

    /** The proposal state machine; decisions go to the sidecar. */
    val proposals = ProposalBook { m, p -> sidecar.notify(m, p) }

    /** Context events go to the sidecar through this. */
    val context = ContextReporter({ sidecar.policy.maxSelectionBytes }) { m, p -> sidecar.notify(m, p) }

    /** Answers the editor tools' requests from [SessionConfig.tools], a second before the sidecar's deadline. */
    val tools: EditorTools? = config.tools?.let { source -> EditorTools(source) { sidecar.policy.editorRequestTimeoutMs - 1000 } }

    /** What the last `initialize` answered; null before. */
    @Volatile var info: LinkInfo? = null; private set

    init {
        sidecar.on("diff/open") { params ->
            val opened = proposals.open(params)
            ui.showDiff(opened.proposal, opened.replaced).thenApply { emptyMap<String, Any?>() }
        }
        sidecar.on("diff/close") { params ->
            val path = params.str("filePath") ?: throw LinkError(LinkError.INVALID_PARAMS, "diff/close: filePath must be a string")
            mapOf("content" to proposals.close(path)?.let { ui.closeDiff(it) })
        }
        sidecar.on("diff/state") { params ->
            val u = proposals.onState(params)
            if (u.reopened) u.proposal?.let { ui.showDiff(it, null) } else u.proposal?.let { ui.proposalChanged(it) }
            u.unwritten?.let { ui.keepUnwritten(params.str("filePath") ?: "", it) }
            if (u.message.isNotEmpty()) ui.log(u.level, u.message)
        }
        sidecar.on("status") { params -> ui.status(params.long("connectedClients")?.toInt() ?: 0, params.str("text")) }
        sidecar.on("log") { params -> ui.log(params.str("level") ?: "info", params.str("message") ?: "") }
        sidecar.on("workspace/envChanged") { _ -> ui.envChanged(sidecar.env) }
        tools?.register(sidecar)
    }

    /** The `initialize` params (editor link v2). */
    fun initParams(): Map<String, Any?> {
        val params = linkedMapOf<String, Any?>(
            "protocolVersion" to 2,
            "ide" to mapOf("name" to config.ideName, "displayName" to config.ideDisplayName, "restartCommand" to config.restartCommand),
            "processId" to config.processId,
            "workspaceFolders" to config.workspaceFolders(),
            "capabilities" to mapOf("diff" to true, "diffStates" to true, "unifiedDiff" to false, "selection" to true, "terminal" to true, "diagnostics" to false, "agent" to false) +
                (tools?.capabilities ?: emptyMap()),
        )
        config.isTrusted()?.let { params["isTrusted"] = it }
        return params
    }

    /** Starts the sidecar and initializes it; throws [IOException] with a message a user can act on. */
    fun start(): LinkInfo {
        sidecar.start()
        return info ?: throw IOException("the companion stopped during initialize")
    }

    /** True while the sidecar's link is up. */
    val isRunning: Boolean get() = sidecar.isRunning

    /** Environment for terminals (updated by `workspace/envChanged`). */
    val env: Map<String, String> get() = sidecar.env

    /** The variables for a terminal opened now (asks `terminal/env`). */
    fun terminalEnv(): Map<String, String> = sidecar.terminalEnv()

    /** Sends a request (e.g. `status/get`). */
    fun request(method: String, params: Any?): CompletableFuture<Any?> = sidecar.request(method, params)

    /** Tells the sidecar the project's folders changed. */
    fun foldersChanged(folders: List<String>) { sidecar.notify("workspace/foldersChanged", mapOf("workspaceFolders" to folders)) }

    /** Tells the sidecar the project's trust changed. */
    fun trustChanged(trusted: Boolean) { sidecar.notify("workspace/trustChanged", mapOf("isTrusted" to trusted)) }

    /** Stops the sidecar for good (the project closes); no restart follows. */
    fun stop(graceMillis: Long = 3000) = sidecar.stop(graceMillis)

    /** The sidecar process's exit code, or null while it runs. */
    fun exitCode(): Int? = sidecar.exitCode()

    private inner class Listener : SidecarListener {
        override fun ready(result: Any?, restarted: Boolean) {
            info = LinkInfo(
                port = result.long("port") ?: 0,
                authToken = result.str("authToken") ?: "",
                idePid = result.long("idePid") ?: 0,
                discoveryFile = result.str("discoveryFile") ?: "",
                env = stringMap(result.field("env")),
                serverVersion = result.str("serverVersion") ?: "",
                protocolVersion = result.long("protocolVersion") ?: 1,
            )
            context.replay()
            ui.ready(restarted)
            // A v2 result may carry the status line, so the plugin has the sidecar's text before any CLI connects.
            result.field("status")?.let { st -> ui.status(st.long("connectedClients")?.toInt() ?: 0, st.str("text")) }
        }

        override fun down() {
            proposals.clear()
            ui.down()
        }

        override fun message(level: String, text: String) = ui.log(level, text)

        override fun protocolError(message: String) = ui.log("warn", message)
    }
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

package com.github.geminiidecompanion.core

/**
 * The sidecar's `initialize` policy (editor link v2): how to restart it, the
 * limits the plugin honours, and the texts the plugin shows as is. The plugin
 * keeps the last policy it got; before the first successful `initialize` it
 * uses [DEFAULT], whose values are the contract's defaults.
 */
data class Policy(
    val delaysMs: List<Long>,
    val windowMs: Long,
    val maxRestarts: Int,
    val maxSelectionBytes: Int,
    val maxOpenFiles: Int,
    val maxSelectedTextUtf16: Int,
    val maxMessageBytes: Long,
    val restarting: String,
    val gaveUp: String,
    val restarted: String,
    /** How long the sidecar waits for an `editor/…` answer (v2 `limits.editorRequestTimeoutMs`). */
    val editorRequestTimeoutMs: Long = 10_000,
) {
    /**
     * What to do after an unexpected exit, given [restarts] (how many restarts
     * happened within the last [windowMs]): the delay before the next one, or
     * null to give up.
     */
    fun delayAfter(restarts: Int): Long? {
        if (restarts >= maxRestarts || delaysMs.isEmpty()) return null
        return delaysMs[minOf(restarts, delaysMs.size - 1)]
    }

    companion object {
        /** How this plugin names its restart command in the texts it has built in. */
        const val RESTART_COMMAND = "Tools | Gemini CLI | Restart Companion"

        /** The contract's defaults, with built-in copies of the texts. */
        val DEFAULT = Policy(
            delaysMs = listOf(100, 500, 1000, 2000, 5000),
            windowMs = 60_000,
            maxRestarts = 5,
            maxSelectionBytes = 65552,
            maxOpenFiles = 10,
            maxSelectedTextUtf16 = 16384,
            maxMessageBytes = 268_435_456,
            restarting = "gemini-ide-companion exited ({reason}); restarting it. Gemini CLI sessions reconnect with /ide enable.",
            gaveUp = "gemini-ide-companion exited {count} times in a minute ({reason}); not restarting it: run $RESTART_COMMAND to try again.",
            restarted = "gemini-ide-companion restarted; Gemini CLI sessions reconnect with /ide enable.",
        )

        /** The policy in an `initialize` result's `policy`; fields missing or of the wrong type keep [previous]'s. */
        fun parse(policy: Any?, previous: Policy = DEFAULT): Policy {
            val restart = policy.field("restart")
            val limits = policy.field("limits")
            val messages = policy.field("messages")
            val delays = (restart.field("delaysMs") as? List<*>)?.map { (it as? Long)?.takeIf { d -> d >= 0 } ?: return@map null }
            fun int(o: Any?, k: String, old: Int) = o.long(k)?.takeIf { it in 0..Int.MAX_VALUE }?.toInt() ?: old
            return Policy(
                delaysMs = delays?.takeIf { d -> d.isNotEmpty() && d.all { it != null } }?.map { it!! } ?: previous.delaysMs,
                windowMs = restart.long("windowMs")?.takeIf { it > 0 } ?: previous.windowMs,
                maxRestarts = int(restart, "maxRestarts", previous.maxRestarts),
                maxSelectionBytes = int(limits, "maxSelectionBytes", previous.maxSelectionBytes),
                maxOpenFiles = int(limits, "maxOpenFiles", previous.maxOpenFiles),
                maxSelectedTextUtf16 = int(limits, "maxSelectedTextUtf16", previous.maxSelectedTextUtf16),
                maxMessageBytes = limits.long("maxMessageBytes")?.takeIf { it > 0 } ?: previous.maxMessageBytes,
                restarting = messages.str("restarting") ?: previous.restarting,
                gaveUp = messages.str("gaveUp") ?: previous.gaveUp,
                restarted = messages.str("restarted") ?: previous.restarted,
                editorRequestTimeoutMs = limits.long("editorRequestTimeoutMs")?.takeIf { it > 0 } ?: previous.editorRequestTimeoutMs,
            )
        }

        /** A policy text with `{reason}` and `{count}` filled in; nothing else is changed. */
        fun fill(text: String, reason: String, count: Int = 0): String =
            text.replace("{reason}", reason).replace("{count}", count.toString())
    }
}

/** What the sidecar said it will do for this plugin (`initialize` result `capabilities`). */
data class SidecarCapabilities(
    val diffStates: Boolean = false,
    val envChanged: Boolean = false,
    val terminalEnv: Boolean = false,
    val statusText: Boolean = false,
    val agent: Boolean = false,
) {
    companion object {
        /** From the result's `capabilities`; absent (a protocol-1 sidecar) means none. */
        fun parse(caps: Any?) = SidecarCapabilities(
            diffStates = caps.field("diffStates") == true,
            envChanged = caps.field("envChanged") == true,
            terminalEnv = caps.field("terminalEnv") == true,
            statusText = caps.field("statusText") == true,
            agent = caps.field("agent") == true,
        )
    }
}

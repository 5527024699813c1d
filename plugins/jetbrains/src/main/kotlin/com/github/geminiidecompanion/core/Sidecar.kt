package com.github.geminiidecompanion.core

import java.io.ByteArrayOutputStream
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.Executors
import java.util.concurrent.ScheduledExecutorService
import java.util.concurrent.TimeUnit
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong

// The plugin's one transport and lifecycle module (editor link v2 section 6): framing, JSON-RPC, spawn,
// initialize, restart per policy, terminal env, shutdown. Everything else uses Sidecar.request/notify/on.

/** How messages are cut out of the byte stream: `ndjson` (v1) or `lsp` (Content-Length headers). */
interface Framing {
    /** The name the sidecar knows it by (`--framing=<name>`). */
    val name: String
    /** A reader of whole messages from [input]. */
    fun reader(input: InputStream): FrameReader
    /** Writes one message; the caller serialises concurrent writers. */
    fun write(output: OutputStream, message: String)
}

/** Reads one message at a time: the next one, or null at the end of the stream. */
fun interface FrameReader { fun next(): String? }

/** A frame the reader had to skip (too large, bad header); the stream stays usable. */
open class FrameSkipped(message: String) : IOException(message)
/** A frame over the size limit, skipped whole. */
class FrameTooLarge(val size: Long) : FrameSkipped("message of $size bytes is over the limit")

/** Largest message accepted (the sidecar's own limit, `policy.limits.maxMessageBytes`). */
const val MAX_MESSAGE_BYTES = 256 * 1024 * 1024

/** Editor link v1's framing with the default limit. */
val Ndjson = NdjsonFraming()
/** The `lsp` framing with the default limit. */
val Lsp = LspFraming()

/** One JSON object per line of UTF-8 ending in `\n`; lines longer than [maxBytes] are skipped whole. */
class NdjsonFraming(private val maxBytes: Int = MAX_MESSAGE_BYTES) : Framing {
    override val name = "ndjson"
    override fun reader(input: InputStream) = object : FrameReader {
        private val buf = ByteArray(64 * 1024)
        private var start = 0
        private var end = 0
        private val line = ByteArrayOutputStream()
        private var skipped = -1L // >= 0 while skipping an over-long line
        override fun next(): String? {
            while (true) {
                if (start == end) {
                    val n = input.read(buf)
                    if (n < 0) {
                        if (line.size() == 0 || skipped >= 0) return null
                        return line.toString(Charsets.UTF_8).also { line.reset() }
                    }
                    start = 0; end = n
                }
                var i = start
                while (i < end && buf[i] != '\n'.code.toByte()) i++
                val chunk = i - start
                when {
                    skipped >= 0 -> skipped += chunk
                    line.size().toLong() + chunk > maxBytes -> { skipped = line.size().toLong() + chunk; line.reset() }
                    else -> line.write(buf, start, chunk)
                }
                if (i == end) { start = end; continue }
                start = i + 1
                if (skipped >= 0) { val n = skipped; skipped = -1; throw FrameTooLarge(n) }
                val text = line.toString(Charsets.UTF_8).removeSuffix("\r")
                line.reset()
                if (text.isNotBlank()) return text
            }
        }
    }
    override fun write(output: OutputStream, message: String) {
        require(message.indexOf('\n') < 0) { "an NDJSON message must be one line" }
        output.write(message.toByteArray(Charsets.UTF_8))
        output.write('\n'.code)
        output.flush()
    }
}

/**
 * LSP base protocol: `Content-Length: N\r\n` (other headers ignored), a blank
 * line, then N bytes of UTF-8. Bodies over [maxBytes] are skipped whole; a
 * header block without a valid Content-Length is skipped up to its blank line.
 */
class LspFraming(private val maxBytes: Int = MAX_MESSAGE_BYTES) : Framing {
    override val name = "lsp"
    override fun reader(input: InputStream) = object : FrameReader {
        private val inp = input.buffered()
        private fun headerLine(): String? {
            val sb = StringBuilder()
            while (true) {
                val b = inp.read()
                if (b < 0) return if (sb.isEmpty()) null else throw IOException("end of stream inside a header")
                if (b == '\n'.code) return sb.toString().removeSuffix("\r")
                if (sb.length < 8192) sb.append(b.toChar())
            }
        }
        override fun next(): String? {
            var length = -1L
            var headers = 0
            while (true) {
                val h = headerLine() ?: return null
                if (h.isEmpty()) {
                    if (headers == 0) continue
                    if (length < 0) throw FrameSkipped("a header block without a valid Content-Length")
                    break
                }
                headers++
                val colon = h.indexOf(':')
                if (colon > 0 && h.substring(0, colon).trim().equals("Content-Length", ignoreCase = true)) {
                    length = h.substring(colon + 1).trim().toLongOrNull()?.takeIf { it >= 0 } ?: -1
                }
            }
            if (length > maxBytes) {
                var left = length
                while (left > 0) {
                    val n = inp.skip(left)
                    if (n > 0) left -= n else if (inp.read() < 0) return null else left--
                }
                throw FrameTooLarge(length)
            }
            val body = inp.readNBytes(length.toInt())
            return if (body.size < length) null else String(body, Charsets.UTF_8)
        }
    }
    override fun write(output: OutputStream, message: String) {
        val body = message.toByteArray(Charsets.UTF_8)
        output.write("Content-Length: ${body.size}\r\n\r\n".toByteArray(Charsets.US_ASCII))
        output.write(body)
        output.flush()
    }
}

/** A JSON-RPC error: from the peer (a response's `error`) or for the peer. */
class LinkError(val code: Int, message: String) : Exception(message) {
    companion object {
        const val PARSE_ERROR = -32700; const val INVALID_REQUEST = -32600; const val METHOD_NOT_FOUND = -32601
        const val INVALID_PARAMS = -32602; const val INTERNAL_ERROR = -32603
    }
}

/** What a [Link] does with what the peer sends. */
interface LinkHandler {
    /** A request; complete the future with the result or a [LinkError]. */
    fun onRequest(method: String, params: Any?): CompletableFuture<Any?>
    /** A notification. */
    fun onNotification(method: String, params: Any?)
    /** The link ended: end of stream ([cause] null) or a read error. */
    fun onClosed(cause: Throwable?)
    /** Something that could not be understood; the link stays up. */
    fun onProtocolError(message: String) {}
}

/** JSON-RPC 2.0 over a [Framing]: one reader thread, serialised writes, answers matched by id. */
class Link(private val input: InputStream, private val output: OutputStream, private val framing: Framing, private val handler: LinkHandler) {
    private val ids = AtomicLong(1)
    private val pending = ConcurrentHashMap<Long, CompletableFuture<Any?>>()
    private val writeLock = Any()
    private val closed = AtomicBoolean(false)
    /** Starts the reader thread; returns this. */
    fun start(name: String = "gemini-companion-link"): Link {
        Thread({ readLoop() }, name).apply { isDaemon = true }.start()
        return this
    }
    /** Sends a request; the future completes with its result or fails ([LinkError] for an error answer). */
    fun request(method: String, params: Any?): CompletableFuture<Any?> {
        val id = ids.getAndIncrement()
        val future = CompletableFuture<Any?>()
        pending[id] = future
        try { send(message("id" to id, "method" to method, "params" to params)) } catch (e: IOException) { pending.remove(id); future.completeExceptionally(e) }
        return future
    }
    /** Sends a notification; false when the link is gone. */
    fun notify(method: String, params: Any?): Boolean =
        try { send(message("method" to method, "params" to params)); true } catch (e: IOException) { false }
    /** True until the stream ends or [close] is called. */
    val isOpen: Boolean get() = !closed.get()
    /** Closes our side (the peer sees end of input); pending requests fail. */
    fun close() {
        if (!closed.compareAndSet(false, true)) return
        try { output.close() } catch (_: IOException) {}
        failPending()
    }
    private fun message(vararg pairs: Pair<String, Any?>): String =
        Json.stringify(linkedMapOf<String, Any?>("jsonrpc" to "2.0").apply { for ((k, v) in pairs) if (k != "params" || v != null) put(k, v) })
    private fun send(text: String) {
        if (closed.get()) throw IOException("the companion link is closed")
        synchronized(writeLock) { framing.write(output, text) }
    }
    private fun failPending() { for (id in pending.keys.toList()) pending.remove(id)?.completeExceptionally(IOException("the companion link closed")) }
    private fun readLoop() {
        val frames = framing.reader(input)
        var cause: Throwable? = null
        try {
            while (true) {
                val text = try { frames.next() ?: break } catch (e: FrameSkipped) { handler.onProtocolError(e.message ?: "frame skipped"); continue }
                dispatch(text)
            }
        } catch (e: IOException) { if (!closed.get()) cause = e }
        closed.set(true)
        failPending()
        handler.onClosed(cause)
    }
    private fun dispatch(text: String) {
        val msg = try { Json.parse(text) } catch (e: Json.ParseError) { return handler.onProtocolError("not JSON from the companion: ${e.message}") }
        if (msg !is Map<*, *>) return handler.onProtocolError("not a JSON-RPC message: ${text.take(200)}")
        val method = msg["method"] as? String
        val id = msg["id"]
        when {
            method != null && id != null -> answer(id, method, msg["params"])
            method != null -> try { handler.onNotification(method, msg["params"]) } catch (e: Exception) { handler.onProtocolError("handling $method failed: $e") }
            id != null -> {
                val future = (id as? Long)?.let { pending.remove(it) } ?: return handler.onProtocolError("answer to unknown request $id")
                val err = msg["error"]
                if (err == null) future.complete(msg["result"]) else {
                    val code = err.long("code")?.toInt() ?: LinkError.INTERNAL_ERROR
                    future.completeExceptionally(LinkError(code, err.str("message") ?: "error $code"))
                }
            }
            else -> handler.onProtocolError("not a JSON-RPC message: ${text.take(200)}")
        }
    }
    private fun answer(id: Any, method: String, params: Any?) {
        // A handler that throws (a LinkError for bad params) is answered with its error; the link stays up.
        val future = try { handler.onRequest(method, params) } catch (e: Exception) { CompletableFuture.failedFuture(e) }
        future.whenComplete { result, error ->
            val text = if (error == null) message("id" to id, "result" to result) else {
                val cause = (error as? java.util.concurrent.CompletionException)?.cause ?: error
                val code = (cause as? LinkError)?.code ?: LinkError.INTERNAL_ERROR
                message("id" to id, "error" to mapOf("code" to code, "message" to (cause.message ?: cause.toString())))
            }
            try { send(text) } catch (_: IOException) {}
        }
    }
}

/** How to start the sidecar. [initParams] is asked again for every (re)start, so folders and trust are current. */
class SidecarConfig(
    val binary: String,
    val framing: Framing = Lsp,
    val extraArgs: List<String> = emptyList(),
    val environment: Map<String, String> = emptyMap(),
    val initTimeoutMs: Long = 20_000,
    /** Starts the process for an argv (a stand-in sidecar in tests). */
    val launch: (argv: List<String>, env: Map<String, String>) -> Process = { argv, env -> ProcessBuilder(argv).apply { environment().putAll(env) }.start() },
    val initParams: () -> Map<String, Any?>,
)

/** What the lifecycle tells the plugin. Called on the sidecar's threads. */
interface SidecarListener {
    /** `initialize` succeeded with [result]; [restarted] after an automatic restart. */
    fun ready(result: Any?, restarted: Boolean) {}
    /** The link went down (requested or not); open views lose their sidecar. */
    fun down() {}
    /** A policy text to show as is (`restarting`, `gaveUp`, `restarted`) at [level]. */
    fun message(level: String, text: String) {}
    /** Something the sidecar sent could not be understood (logged; the link stays up). */
    fun protocolError(message: String) {}
}

/**
 * One sidecar process: spawned with `--stdio --framing=<name>`, initialized,
 * restarted after an unexpected exit per the policy it last sent, stopped on
 * request. Handlers registered with [on] serve its requests and notifications.
 */
class Sidecar(private val config: SidecarConfig, private val listener: SidecarListener) {
    private val handlers = ConcurrentHashMap<String, (Any?) -> Any?>()
    private val timer: ScheduledExecutorService = Executors.newSingleThreadScheduledExecutor { r -> Thread(r, "gemini-companion-restart").apply { isDaemon = true } }
    private val restarts = ArrayDeque<Long>()
    @Volatile private var process: Process? = null
    @Volatile private var ready: Process? = null // the process whose initialize succeeded: only its exit counts as a crash
    @Volatile private var link: Link? = null
    @Volatile private var stopping = false
    @Volatile private var lastStderr = ""
    /** The policy from the last successful `initialize` (the contract's defaults before). */
    @Volatile var policy: Policy = Policy.DEFAULT; private set
    /** What this sidecar will send (from the last `initialize`). */
    @Volatile var capabilities = SidecarCapabilities(); private set
    /** Environment for terminals: from `initialize`, then `workspace/envChanged`. */
    @Volatile var env: Map<String, String> = emptyMap(); private set
    /** True while the link is up. */
    val isRunning: Boolean get() = link?.isOpen == true
    /** Registers [handler] for a sidecar request or notification [method]; a request's answer is its return value (or a CompletableFuture). */
    fun on(method: String, handler: (params: Any?) -> Any?) { handlers[method] = handler }
    /** Sends a request; [callback] gets the result, or null and the error. */
    fun request(method: String, params: Any?, callback: (result: Any?, error: Throwable?) -> Unit): Unit =
        request(method, params).whenComplete { r, e -> callback(r, (e as? java.util.concurrent.CompletionException)?.cause ?: e) }.let {}
    /** Sends a request; the future fails when the sidecar is not running. */
    fun request(method: String, params: Any?): CompletableFuture<Any?> =
        link?.takeIf { it.isOpen }?.request(method, params) ?: CompletableFuture.failedFuture(IOException("the companion is not running"))
    /** Sends a notification; false when the sidecar is not running. */
    fun notify(method: String, params: Any?): Boolean = link?.notify(method, params) ?: false
    /** Starts the sidecar and initializes it; throws [IOException] with a message a user can act on. Resets the restart count. */
    fun start(): Any? {
        stopping = false
        synchronized(restarts) { restarts.clear() }
        return spawn(restarted = false)
    }
    /** The variables for an integrated terminal opened now: `terminal/env` when the sidecar answers it, else the last known env. */
    fun terminalEnv(timeoutMs: Long = 2000): Map<String, String> {
        if (!capabilities.terminalEnv || !isRunning) return env
        return try { stringMap(request("terminal/env", emptyMap<String, Any?>()).get(timeoutMs, TimeUnit.MILLISECONDS).field("env")) } catch (_: Exception) { env }
    }
    /** `shutdown`, end of stdin, then (after [graceMillis]) kill; no restart follows. Waits for the exit. */
    fun stop(graceMillis: Long = 3000) {
        stopping = true
        timer.shutdownNow() // a stopped Sidecar is not started again: make a new one
        val l = link
        if (l != null && l.isOpen) {
            try { l.request("shutdown", null).get(graceMillis, TimeUnit.MILLISECONDS) } catch (_: Exception) {}
            l.close()
        }
        process?.let { p ->
            if (!p.waitFor(graceMillis, TimeUnit.MILLISECONDS)) { p.destroy(); if (!p.waitFor(graceMillis, TimeUnit.MILLISECONDS)) p.destroyForcibly().waitFor() }
        }
    }
    /** The process's exit code, or null while it runs (or before it started). */
    fun exitCode(): Int? = process?.let { if (it.isAlive) null else it.exitValue() }
    /** The sidecar's process, for tests and diagnostics. */
    fun pid(): Long? = process?.pid()
    private fun spawn(restarted: Boolean): Any? {
        val argv = listOf(config.binary, "--stdio", "--framing=${config.framing.name}") + config.extraArgs
        val proc = try { config.launch(argv, config.environment) } catch (e: IOException) { throw IOException("could not start ${config.binary}: ${e.message}", e) }
        process = proc
        lastStderr = ""
        Thread({ try { proc.errorStream.bufferedReader().forEachLine { if (it.isNotBlank()) lastStderr = it } } catch (_: IOException) {} }, "gemini-companion-stderr")
            .apply { isDaemon = true }.start()
        val l = Link(proc.inputStream, proc.outputStream, config.framing, Handler(proc)).start()
        link = l
        val result = try {
            l.request("initialize", config.initParams()).get(config.initTimeoutMs, TimeUnit.MILLISECONDS)
        } catch (e: Exception) {
            val cause = (e as? java.util.concurrent.ExecutionException)?.cause ?: e
            l.close(); proc.destroy() // the caller reports this failure, not the link's end
            val detail = if (cause is java.util.concurrent.TimeoutException) "no answer in ${config.initTimeoutMs / 1000} s" else cause.message
            throw IOException("initialize failed: $detail" + (lastStderr.takeIf { it.isNotBlank() }?.let { " ($it)" } ?: ""), cause)
        }
        policy = Policy.parse(result.field("policy"), policy)
        capabilities = SidecarCapabilities.parse(result.field("capabilities"))
        env = stringMap(result.field("env"))
        ready = proc
        listener.ready(result, restarted)
        return result
    }
    /** Why [proc] ended, as `{reason}`: "exit code N", "signal N", or its last stderr line. */
    private fun reason(proc: Process): String {
        if (!proc.waitFor(2, TimeUnit.SECONDS)) return "its link closed"
        val code = proc.exitValue()
        return when {
            code > 128 && !System.getProperty("os.name").startsWith("Windows") -> "signal ${code - 128}"
            code != 0 && lastStderr.isNotBlank() -> lastStderr
            else -> "exit code $code"
        }
    }
    private fun exited(why: String) {
        if (stopping) return
        val now = System.currentTimeMillis()
        val n = synchronized(restarts) { while (restarts.isNotEmpty() && now - restarts.first() > policy.windowMs) restarts.removeFirst(); restarts.size }
        val delay = policy.delayAfter(n)
        if (delay == null) { listener.message("error", Policy.fill(policy.gaveUp, why, n + 1)); return }
        listener.message("warn", Policy.fill(policy.restarting, why, n + 1))
        try { timer.schedule({ restart() }, delay, TimeUnit.MILLISECONDS) } catch (_: java.util.concurrent.RejectedExecutionException) {}
    }
    private fun restart() {
        if (stopping) return
        synchronized(restarts) { restarts.addLast(System.currentTimeMillis()) }
        try {
            spawn(restarted = true)
            listener.message("info", Policy.fill(policy.restarted, ""))
        } catch (e: IOException) {
            exited(e.message ?: "restart failed")
        }
    }
    private inner class Handler(private val proc: Process) : LinkHandler {
        override fun onRequest(method: String, params: Any?): CompletableFuture<Any?> {
            val h = handlers[method] ?: return CompletableFuture.failedFuture(LinkError(LinkError.METHOD_NOT_FOUND, "unknown method $method"))
            @Suppress("UNCHECKED_CAST")
            return when (val r = h(params)) { is CompletableFuture<*> -> r as CompletableFuture<Any?>; else -> CompletableFuture.completedFuture(r) }
        }
        override fun onNotification(method: String, params: Any?) {
            if (method == "workspace/envChanged") env = stringMap(params.field("env"))
            handlers[method]?.invoke(params)
        }
        override fun onClosed(cause: Throwable?) {
            if (proc !== ready) return
            if (cause != null) listener.protocolError("the companion link failed: ${cause.message}")
            listener.down()
            if (!stopping) exited(reason(proc))
        }
        override fun onProtocolError(message: String) = listener.protocolError(message)
    }
}

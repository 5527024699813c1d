package com.github.geminiidecompanion.core

import java.io.IOException
import java.io.InputStream
import java.io.OutputStream
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicBoolean
import java.util.concurrent.atomic.AtomicLong

/** A JSON-RPC error: from the peer (a response's `error`) or for the peer. */
class LinkError(val code: Int, message: String) : Exception(message) {
    companion object {
        const val PARSE_ERROR = -32700
        const val INVALID_REQUEST = -32600
        const val METHOD_NOT_FOUND = -32601
        const val INVALID_PARAMS = -32602
        const val INTERNAL_ERROR = -32603
    }
}

/** What the plugin does with the messages the sidecar sends. */
interface LinkHandler {
    /** A request; complete the future with the result or a [LinkError]. */
    fun onRequest(method: String, params: Any?): CompletableFuture<Any?>

    /** A notification; unknown ones are ignored. */
    fun onNotification(method: String, params: Any?)

    /** The link ended: end of stream ([cause] null) or a read error. */
    fun onClosed(cause: Throwable?)

    /** A message that could not be understood; logged, the link stays up. */
    fun onProtocolError(message: String) {}
}

/**
 * JSON-RPC 2.0 over one [Framing] on a pair of streams: requests in both
 * directions, notifications, and answers matched by id. One reader thread;
 * writes are serialised, so any thread may call [request] and [notify].
 */
class Link(
    private val input: InputStream,
    private val output: OutputStream,
    private val framing: Framing,
    private val handler: LinkHandler,
) {
    private val ids = AtomicLong(1)
    private val pending = ConcurrentHashMap<Long, CompletableFuture<Any?>>()
    private val writeLock = Any()
    private val closed = AtomicBoolean(false)
    private var reader: Thread? = null

    /** Starts the reader thread; returns this. */
    fun start(name: String = "gemini-companion-link"): Link {
        val t = Thread({ readLoop() }, name)
        t.isDaemon = true
        reader = t
        t.start()
        return this
    }

    /** Sends a request; the future completes with its result or fails with a [LinkError]. */
    fun request(method: String, params: Any?): CompletableFuture<Any?> {
        val id = ids.getAndIncrement()
        val future = CompletableFuture<Any?>()
        if (closed.get()) {
            future.completeExceptionally(IOException("the companion link is closed"))
            return future
        }
        pending[id] = future
        try {
            send(message("id" to id, "method" to method, "params" to params))
        } catch (e: IOException) {
            pending.remove(id)
            future.completeExceptionally(e)
        }
        return future
    }

    /** Sends a notification; false when the link is already gone. */
    fun notify(method: String, params: Any?): Boolean = try {
        send(message("method" to method, "params" to params))
        true
    } catch (e: IOException) {
        false
    }

    /** True until the stream ends or [close] is called. */
    val isOpen: Boolean get() = !closed.get()

    /** Closes our side; pending requests fail. */
    fun close() {
        if (!closed.compareAndSet(false, true)) return
        try { output.close() } catch (_: IOException) {}
        failPending(IOException("the companion link closed"))
    }

    private fun message(vararg pairs: Pair<String, Any?>): String {
        val m = LinkedHashMap<String, Any?>()
        m["jsonrpc"] = "2.0"
        for ((k, v) in pairs) if (k != "params" || v != null) m[k] = v
        return Json.stringify(m)
    }

    private fun send(text: String) {
        if (closed.get()) throw IOException("the companion link is closed")
        synchronized(writeLock) { framing.write(output, text) }
    }

    private fun failPending(e: Throwable) {
        for (id in pending.keys.toList()) pending.remove(id)?.completeExceptionally(e)
    }

    private fun readLoop() {
        val frames = framing.reader(input)
        var cause: Throwable? = null
        try {
            while (true) {
                val text = try {
                    frames.next() ?: break
                } catch (e: FrameTooLarge) {
                    handler.onProtocolError(e.message ?: "message too large")
                    continue
                }
                dispatch(text)
            }
        } catch (e: IOException) {
            if (!closed.get()) cause = e
        }
        closed.set(true)
        failPending(IOException("the companion link closed"))
        handler.onClosed(cause)
    }

    private fun dispatch(text: String) {
        val msg = try {
            Json.parse(text)
        } catch (e: Json.ParseError) {
            handler.onProtocolError("not JSON from the companion: ${e.message}")
            return
        }
        if (msg !is Map<*, *>) {
            handler.onProtocolError("not a JSON-RPC message: ${text.take(200)}")
            return
        }
        val method = msg["method"] as? String
        val hasId = msg.containsKey("id") && msg["id"] != null
        when {
            method != null && hasId -> answer(msg["id"], method, msg["params"])
            method != null -> try {
                handler.onNotification(method, msg["params"])
            } catch (e: Exception) {
                handler.onProtocolError("handling $method failed: $e")
            }
            hasId -> {
                val id = (msg["id"] as? Long) ?: return handler.onProtocolError("answer with unknown id ${msg["id"]}")
                val future = pending.remove(id) ?: return handler.onProtocolError("answer to unknown request $id")
                val err = msg["error"]
                if (err != null) {
                    val code = err.long("code")?.toInt() ?: LinkError.INTERNAL_ERROR
                    future.completeExceptionally(LinkError(code, err.str("message") ?: "error $code"))
                } else {
                    future.complete(msg["result"])
                }
            }
            else -> handler.onProtocolError("not a JSON-RPC message: ${text.take(200)}")
        }
    }

    private fun answer(id: Any?, method: String, params: Any?) {
        // A handler may throw (LinkError for bad params): answer with the
        // error instead of letting it end the reader thread.
        val future = try {
            handler.onRequest(method, params)
        } catch (e: Exception) {
            CompletableFuture.failedFuture(e)
        }
        future.whenComplete { result, error ->
            val text = if (error == null) {
                message("id" to id, "result" to result)
            } else {
                val cause = (error as? java.util.concurrent.CompletionException)?.cause ?: error
                val code = (cause as? LinkError)?.code ?: LinkError.INTERNAL_ERROR
                message("id" to id, "error" to mapOf("code" to code, "message" to (cause.message ?: cause.toString())))
            }
            try { send(text) } catch (_: IOException) {}
        }
    }
}

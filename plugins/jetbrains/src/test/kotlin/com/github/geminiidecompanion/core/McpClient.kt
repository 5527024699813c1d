package com.github.geminiidecompanion.core

import java.net.URI
import java.net.http.HttpClient
import java.net.http.HttpRequest
import java.net.http.HttpResponse
import java.time.Duration
import java.util.concurrent.atomic.AtomicLong

/**
 * Plays Gemini CLI's side of the sidecar's MCP server (Streamable HTTP with a
 * bearer token): tool calls by POST, notifications from the GET event stream.
 */
class McpClient(private val port: Long, private val token: String) : AutoCloseable {
    private val http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build()
    private val ids = AtomicLong(1)
    private var session: String? = null
    private val notes = ArrayList<Any?>()
    private val lock = Object()
    private var stream: Thread? = null

    private fun builder(): HttpRequest.Builder {
        val b = HttpRequest.newBuilder(URI("http://127.0.0.1:$port/mcp"))
            .header("Authorization", "Bearer $token")
            .header("MCP-Protocol-Version", "2025-06-18")
        session?.let { b.header("Mcp-Session-Id", it) }
        return b
    }

    private fun post(message: Map<String, Any?>): Any? {
        val req = builder().header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(Json.stringify(message))).build()
        val resp = http.send(req, HttpResponse.BodyHandlers.ofString())
        resp.headers().firstValue("Mcp-Session-Id").ifPresent { session = it }
        if (resp.statusCode() == 202) return null
        check(resp.statusCode() < 400) { "HTTP ${resp.statusCode()}: ${resp.body().take(300)}" }
        val ctype = resp.headers().firstValue("Content-Type").orElse("")
        if (!ctype.contains("text/event-stream")) return if (resp.body().isBlank()) null else Json.parse(resp.body())
        for (data in sseData(resp.body().lineSequence())) {
            val msg = Json.parse(data)
            if (msg.field("id") == message["id"] && (msg.field("result") != null || msg.field("error") != null)) return msg
            addNote(msg)
        }
        error("event stream ended without a response")
    }

    private fun sseData(lines: Sequence<String>): Sequence<String> = sequence {
        val data = StringBuilder()
        for (line in lines) {
            if (line.isEmpty()) {
                if (data.isNotEmpty()) yield(data.toString())
                data.setLength(0)
            } else if (line.startsWith("data:")) {
                if (data.isNotEmpty()) data.append('\n')
                data.append(line.removePrefix("data:").removePrefix(" "))
            }
        }
        if (data.isNotEmpty()) yield(data.toString())
    }

    private fun addNote(msg: Any?) = synchronized(lock) { notes.add(msg); lock.notifyAll() }

    /** Sends a request and returns its result; fails on an error answer. */
    fun request(method: String, params: Any?): Any? {
        val reply = post(mapOf("jsonrpc" to "2.0", "id" to ids.getAndIncrement(), "method" to method, "params" to params))
        reply.field("error")?.let { error("$method failed: ${Json.stringify(it)}") }
        return reply.field("result")
    }

    /** initialize, notifications/initialized, and the GET event stream. */
    fun connect(): McpClient {
        request("initialize", mapOf("protocolVersion" to "2025-06-18", "capabilities" to emptyMap<String, Any?>(),
            "clientInfo" to mapOf("name" to "jetbrains-core-tests", "version" to "0")))
        checkNotNull(session) { "initialize returned no Mcp-Session-Id" }
        post(mapOf("jsonrpc" to "2.0", "method" to "notifications/initialized"))
        val opened = java.util.concurrent.CountDownLatch(1)
        val t = Thread({
            try {
                val req = builder().header("Accept", "text/event-stream").GET().build()
                val resp = http.send(req, HttpResponse.BodyHandlers.ofLines())
                opened.countDown()
                if (resp.statusCode() != 200) return@Thread
                for (data in sseData(resp.body().iterator().asSequence())) {
                    val msg = try { Json.parse(data) } catch (_: Json.ParseError) { continue }
                    if (msg.field("method") != null && msg.field("id") != null) {
                        post(mapOf("jsonrpc" to "2.0", "id" to msg.field("id"), "result" to emptyMap<String, Any?>()))
                    } else addNote(msg)
                }
            } catch (_: Exception) {
                opened.countDown()
            }
        }, "mcp-stream")
        t.isDaemon = true
        t.start()
        stream = t
        check(opened.await(10, java.util.concurrent.TimeUnit.SECONDS)) { "the GET event stream did not open" }
        return this
    }

    /** Calls a tool; returns its result. */
    fun callTool(name: String, arguments: Map<String, Any?>): Any? = request("tools/call", mapOf("name" to name, "arguments" to arguments))

    /** Waits up to [seconds] for a notification of [method] whose params match. */
    fun waitFor(method: String, seconds: Long = 10, match: (Any?) -> Boolean = { true }): Any? {
        val deadline = System.nanoTime() + seconds * 1_000_000_000
        synchronized(lock) {
            while (true) {
                notes.lastOrNull { it.str("method") == method && match(it.field("params")) }?.let { return it.field("params") }
                val left = (deadline - System.nanoTime()) / 1_000_000
                if (left <= 0) error("no $method matching within $seconds s; saw ${notes.map { it.str("method") }}")
                lock.wait(left)
            }
        }
    }

    /** Notifications of [method] seen so far. */
    fun seen(method: String): List<Any?> = synchronized(lock) { notes.filter { it.str("method") == method } }

    override fun close() {
        try {
            session?.let { http.send(builder().DELETE().build(), HttpResponse.BodyHandlers.discarding()) }
        } catch (_: Exception) {}
        stream?.interrupt()
    }
}

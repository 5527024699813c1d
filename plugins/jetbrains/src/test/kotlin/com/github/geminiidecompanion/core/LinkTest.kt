package com.github.geminiidecompanion.core

import java.io.PipedInputStream
import java.io.PipedOutputStream
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue

/** A scripted peer on the other end of a pair of pipes. */
private class Peer {
    val toLink = PipedOutputStream()
    val linkIn = PipedInputStream(toLink, 1 shl 16)
    val linkOut = PipedOutputStream()
    val fromLink = PipedInputStream(linkOut, 1 shl 16)
    val reader = Ndjson.reader(fromLink)
    fun send(line: String) { toLink.write((line + "\n").toByteArray()); toLink.flush() }
    fun receive(): Any? = Json.parse(reader.next()!!)
}

private class Recorder : LinkHandler {
    val events = LinkedBlockingQueue<String>()
    override fun onRequest(method: String, params: Any?): CompletableFuture<Any?> =
        when (method) {
            "echo" -> CompletableFuture.completedFuture(params)
            "throws" -> throw LinkError(LinkError.INVALID_PARAMS, "bad params")
            else -> CompletableFuture.failedFuture(LinkError(LinkError.METHOD_NOT_FOUND, "unknown method $method"))
        }
    override fun onNotification(method: String, params: Any?) { events.add("note $method ${Json.stringify(params)}") }
    override fun onClosed(cause: Throwable?) { events.add("closed") }
    override fun onProtocolError(message: String) { events.add("protocol $message") }
    fun next(): String = events.poll(10, TimeUnit.SECONDS) ?: error("no event in 10 s")
}

fun linkTests() {
    test("link: answers are matched to requests by id, errors become LinkError") {
        val peer = Peer(); val rec = Recorder()
        val link = Link(peer.linkIn, peer.linkOut, Ndjson, rec).start()
        val a = link.request("first", mapOf("x" to 1))
        val b = link.request("second", null)
        val ra = peer.receive(); val rb = peer.receive()
        assertEquals("first", ra.str("method")); assertEquals("2.0", ra.str("jsonrpc"))
        assertTrue(!(rb as Map<*, *>).containsKey("params"), "null params are left out")
        peer.send("""{"jsonrpc":"2.0","id":${rb.long("id")},"error":{"code":-32602,"message":"bad x"}}""")
        peer.send("""{"jsonrpc":"2.0","id":${ra.long("id")},"result":{"ok":true}}""")
        assertEquals(mapOf("ok" to true), a.get(10, TimeUnit.SECONDS))
        val e = assertFailsWith<ExecutionException> { b.get(10, TimeUnit.SECONDS) }
        assertEquals(-32602, (e.cause as LinkError).code)
        link.close()
    }
    test("link: requests from the peer are answered; unknown ones get -32601; bad lines keep the link up") {
        val peer = Peer(); val rec = Recorder()
        val link = Link(peer.linkIn, peer.linkOut, Ndjson, rec).start()
        peer.send("this is not json")
        assertTrue(rec.next().startsWith("protocol not JSON"))
        peer.send("[1,2]")
        assertTrue(rec.next().startsWith("protocol not a JSON-RPC"))
        peer.send("""{"jsonrpc":"2.0","id":"s1","method":"echo","params":{"v":"é"}}""")
        val echo = peer.receive()
        assertEquals("s1", echo.str("id")); assertEquals(mapOf("v" to "é"), echo.field("result"))
        peer.send("""{"jsonrpc":"2.0","id":7,"method":"nope"}""")
        assertEquals(-32601L, peer.receive().field("error").long("code"))
        // A handler that throws (as ProposalBook does on bad diff/open params) is answered, and the link stays up.
        peer.send("""{"jsonrpc":"2.0","id":8,"method":"throws","params":{}}""")
        val thrown = peer.receive()
        assertEquals(-32602L, thrown.field("error").long("code"))
        assertEquals("bad params", thrown.field("error").str("message"))
        peer.send("""{"jsonrpc":"2.0","id":9,"method":"echo","params":1}""")
        assertEquals(1L, peer.receive().field("result"))
        peer.send("""{"jsonrpc":"2.0","method":"status","params":{"connectedClients":1}}""")
        assertEquals("""note status {"connectedClients":1}""", rec.next())
        peer.toLink.close()
        assertEquals("closed", rec.next())
        assertTrue(!link.isOpen)
        assertFailsWith<ExecutionException> { link.request("late", null).get(1, TimeUnit.SECONDS) }
    }
    test("link: a request pending when the peer goes fails instead of hanging") {
        val peer = Peer(); val rec = Recorder()
        val link = Link(peer.linkIn, peer.linkOut, Ndjson, rec).start()
        val f = link.request("never", null)
        peer.receive()
        peer.toLink.close()
        assertFailsWith<ExecutionException> { f.get(10, TimeUnit.SECONDS) }
    }
}

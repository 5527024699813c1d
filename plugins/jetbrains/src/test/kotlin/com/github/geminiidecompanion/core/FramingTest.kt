package com.github.geminiidecompanion.core

import java.io.ByteArrayInputStream
import java.io.ByteArrayOutputStream
import java.io.InputStream
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertNull

/** Delivers at most [step] bytes per read, to split frames at every boundary. */
private class Trickle(private val data: ByteArray, private val step: Int) : InputStream() {
    private var pos = 0
    override fun read(): Int = if (pos < data.size) data[pos++].toInt() and 0xff else -1
    override fun read(b: ByteArray, off: Int, len: Int): Int {
        if (pos >= data.size) return -1
        val n = minOf(len, step, data.size - pos)
        System.arraycopy(data, pos, b, off, n)
        pos += n
        return n
    }
}

fun framingTests() {
    val messages = listOf("""{"a":1}""", """{"text":"é😀 ü"}""", "{\"big\":\"" + "x".repeat(200_000) + "\"}")
    for (framing in listOf(Ndjson, Lsp)) {
        test("framing ${framing.name}: messages survive writes and reads split at any size") {
            val out = ByteArrayOutputStream()
            messages.forEach { framing.write(out, it) }
            for (step in listOf(1, 3, 7, 4096, 1 shl 20)) {
                val r = framing.reader(Trickle(out.toByteArray(), step))
                for (m in messages) assertEquals(m, r.next())
                assertNull(r.next())
            }
        }
    }
    test("framing ndjson: CRLF endings, blank lines and a last line without newline") {
        val r = Ndjson.reader(ByteArrayInputStream("{\"a\":1}\r\n\n\n{\"b\":2}".toByteArray()))
        assertEquals("{\"a\":1}", r.next())
        assertEquals("{\"b\":2}", r.next())
        assertNull(r.next())
    }
    test("framing ndjson: a line over the limit is skipped whole and the next one arrives") {
        val r = NdjsonFraming(maxBytes = 100).reader(Trickle(("x".repeat(1000) + "\n{\"ok\":true}\n").toByteArray(), 64))
        val e = assertFailsWith<FrameTooLarge> { r.next() }
        assertEquals(1000L, e.size)
        assertEquals("{\"ok\":true}", r.next())
    }
    test("framing lsp: a body over the limit is skipped whole and the next one arrives") {
        val out = ByteArrayOutputStream()
        Lsp.write(out, "y".repeat(500)); Lsp.write(out, "{}")
        val r = LspFraming(maxBytes = 100).reader(ByteArrayInputStream(out.toByteArray()))
        assertFailsWith<FrameTooLarge> { r.next() }
        assertEquals("{}", r.next())
    }
    test("framing ndjson: refuses to write a message with a newline in it") {
        assertFailsWith<IllegalArgumentException> { Ndjson.write(ByteArrayOutputStream(), "{\n}") }
    }
    test("framing lsp: a header block without a valid Content-Length is skipped; other headers are ignored") {
        val text = "Content-Length: x\r\n\r\n" + "Content-Type: application/json\r\n\r\n" +
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}"
        val r = Lsp.reader(ByteArrayInputStream(text.toByteArray()))
        assertFailsWith<FrameSkipped> { r.next() }
        assertFailsWith<FrameSkipped> { r.next() }
        assertEquals("{}", r.next())
        assertNull(r.next())
    }
}

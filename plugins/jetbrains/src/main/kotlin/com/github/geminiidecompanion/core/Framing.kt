package com.github.geminiidecompanion.core

import java.io.ByteArrayOutputStream
import java.io.IOException
import java.io.InputStream
import java.io.OutputStream

/**
 * How JSON-RPC messages are cut out of the sidecar's byte stream. Editor link
 * version 1 uses [Ndjson]; the `lsp` framing (Content-Length headers, [Lsp])
 * is ready for the sidecar's `--framing=lsp`. Everything above this interface
 * deals in whole message texts only.
 */
interface Framing {
    /** The name the sidecar knows the framing by (`--framing=<name>`). */
    val name: String

    /** A reader of whole messages from [input]. */
    fun reader(input: InputStream): FrameReader

    /** Writes one message; the caller serialises concurrent writers. */
    fun write(output: OutputStream, message: String)
}

/** Reads one message at a time. */
interface FrameReader {
    /** The next message, or null at the end of the stream. */
    fun next(): String?
}

/** Thrown for a frame the reader had to skip; the stream stays usable. */
class FrameTooLarge(val size: Long) : IOException("message of $size bytes is over the limit")

/** Largest message accepted (the sidecar's own limit). */
const val MAX_MESSAGE_BYTES = 256 * 1024 * 1024

/** Editor link v1's framing with the default limit. */
val Ndjson = NdjsonFraming()

/** The `lsp` framing with the default limit. */
val Lsp = LspFraming()

/** One JSON object per line, UTF-8, ending in `\n` (editor link v1); longer lines than [maxBytes] are skipped whole. */
class NdjsonFraming(private val maxBytes: Int = MAX_MESSAGE_BYTES) : Framing {
    override val name = "ndjson"

    override fun reader(input: InputStream): FrameReader = object : FrameReader {
        private val buf = ByteArray(64 * 1024)
        private var start = 0
        private var end = 0
        private val line = ByteArrayOutputStream()
        private var skipping = false
        private var skipped = 0L

        override fun next(): String? {
            while (true) {
                if (start == end) {
                    val n = input.read(buf)
                    if (n < 0) {
                        if (line.size() == 0 || skipping) return null
                        val last = line.toString(Charsets.UTF_8)
                        line.reset()
                        return last
                    }
                    start = 0
                    end = n
                }
                var i = start
                while (i < end && buf[i] != '\n'.code.toByte()) i++
                val chunk = i - start
                if (skipping) skipped += chunk else if (line.size().toLong() + chunk > maxBytes) {
                    skipping = true
                    skipped = line.size().toLong() + chunk
                    line.reset()
                } else {
                    line.write(buf, start, chunk)
                }
                if (i == end) { start = end; continue }
                start = i + 1
                if (skipping) {
                    skipping = false
                    throw FrameTooLarge(skipped)
                }
                var text = line.toString(Charsets.UTF_8)
                line.reset()
                if (text.endsWith("\r")) text = text.dropLast(1)
                if (text.isBlank()) continue
                return text
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

/** LSP base protocol framing: `Content-Length: N\r\n\r\n` then N bytes of UTF-8; bodies over [maxBytes] are skipped. */
class LspFraming(private val maxBytes: Int = MAX_MESSAGE_BYTES) : Framing {
    override val name = "lsp"

    override fun reader(input: InputStream): FrameReader = object : FrameReader {
        private val inp = input.buffered()

        private fun headerLine(): String? {
            val sb = StringBuilder()
            while (true) {
                val b = inp.read()
                if (b < 0) return if (sb.isEmpty()) null else throw IOException("end of stream inside a header")
                if (b == '\n'.code) return sb.toString().removeSuffix("\r")
                if (sb.length > 8192) throw IOException("header line too long")
                sb.append(b.toChar())
            }
        }

        override fun next(): String? {
            var length = -1L
            while (true) {
                val h = headerLine() ?: return null
                if (h.isEmpty()) {
                    if (length < 0) continue
                    break
                }
                val colon = h.indexOf(':')
                if (colon > 0 && h.substring(0, colon).trim().equals("Content-Length", ignoreCase = true)) {
                    length = h.substring(colon + 1).trim().toLongOrNull()
                        ?: throw IOException("bad Content-Length: $h")
                }
            }
            if (length > maxBytes) {
                var left = length
                while (left > 0) {
                    val n = inp.skip(left)
                    if (n <= 0) { if (inp.read() < 0) return null; left-- } else left -= n
                }
                throw FrameTooLarge(length)
            }
            val body = inp.readNBytes(length.toInt())
            if (body.size < length) return null
            return String(body, Charsets.UTF_8)
        }
    }

    override fun write(output: OutputStream, message: String) {
        val body = message.toByteArray(Charsets.UTF_8)
        output.write("Content-Length: ${body.size}\r\n\r\n".toByteArray(Charsets.US_ASCII))
        output.write(body)
        output.flush()
    }
}

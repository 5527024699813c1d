package com.github.geminiidecompanion.core

/**
 * A small JSON codec over plain Kotlin values, so the core needs nothing but
 * the Kotlin standard library (the IDE ships its own JSON libraries, but the
 * core must also run outside the IDE, in our tests).
 *
 * Values: `null`, [Boolean], [String], [Long] (integers that fit), [Double]
 * (other numbers), [List] and [Map] with [String] keys (insertion-ordered).
 */
object Json {
    /** Thrown for text that is not one well-formed JSON value. */
    class ParseError(message: String) : IllegalArgumentException(message)

    /** Nesting deeper than this is refused instead of overflowing the stack. */
    const val MAX_DEPTH = 512

    /** Parses exactly one JSON value (surrounding whitespace allowed). */
    fun parse(text: String): Any? {
        val p = Parser(text)
        p.skipWs()
        val v = p.value(0)
        p.skipWs()
        if (p.pos != text.length) throw p.error("unexpected text after the value")
        return v
    }

    /** Encodes [value] as compact JSON; non-ASCII text is kept as UTF-16 text. */
    fun stringify(value: Any?): String = StringBuilder().also { write(it, value) }.toString()

    private fun write(sb: StringBuilder, v: Any?) {
        when (v) {
            null -> sb.append("null")
            is Boolean -> sb.append(if (v) "true" else "false")
            is String -> quote(sb, v)
            is Int, is Long, is Short, is Byte -> sb.append(v.toString())
            is Double -> writeDouble(sb, v)
            is Float -> writeDouble(sb, v.toDouble())
            is Number -> writeDouble(sb, v.toDouble())
            is Map<*, *> -> {
                sb.append('{')
                var first = true
                for ((k, value) in v) {
                    require(k is String) { "JSON object keys must be strings, not $k" }
                    if (!first) sb.append(',')
                    first = false
                    quote(sb, k)
                    sb.append(':')
                    write(sb, value)
                }
                sb.append('}')
            }
            is Iterable<*> -> {
                sb.append('[')
                var first = true
                for (item in v) {
                    if (!first) sb.append(',')
                    first = false
                    write(sb, item)
                }
                sb.append(']')
            }
            is Array<*> -> write(sb, v.asList())
            else -> throw IllegalArgumentException("cannot encode ${v::class.java.name} as JSON")
        }
    }

    private fun writeDouble(sb: StringBuilder, d: Double) {
        require(!d.isNaN() && !d.isInfinite()) { "JSON has no NaN or Infinity" }
        if (d == Math.rint(d) && Math.abs(d) < 1e15) sb.append(d.toLong()) else sb.append(d.toString())
    }

    private fun quote(sb: StringBuilder, s: String) {
        sb.append('"')
        var i = 0
        while (i < s.length) {
            val c = s[i]
            when {
                c == '"' -> sb.append("\\\"")
                c == '\\' -> sb.append("\\\\")
                c == '\n' -> sb.append("\\n")
                c == '\r' -> sb.append("\\r")
                c == '\t' -> sb.append("\\t")
                c.isHighSurrogate() && i + 1 < s.length && s[i + 1].isLowSurrogate() -> {
                    sb.append(c).append(s[i + 1])
                    i++
                }
                // Controls, lone surrogates and U+2028/2029 travel escaped so
                // the message stays valid UTF-8 on one line.
                c < ' ' || c.isSurrogate() || c == '\u2028' || c == '\u2029' ->
                    sb.append("\\u").append(String.format("%04x", c.code))
                else -> sb.append(c)
            }
            i++
        }
        sb.append('"')
    }

    private class Parser(val s: String) {
        var pos = 0

        fun error(msg: String) = ParseError("JSON: $msg at offset $pos")

        fun skipWs() {
            while (pos < s.length) {
                val c = s[pos]
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r') pos++ else break
            }
        }

        fun value(depth: Int): Any? {
            if (depth > MAX_DEPTH) throw error("nested deeper than $MAX_DEPTH")
            if (pos >= s.length) throw error("unexpected end")
            return when (val c = s[pos]) {
                '{' -> obj(depth)
                '[' -> arr(depth)
                '"' -> str()
                't' -> lit("true", true)
                'f' -> lit("false", false)
                'n' -> lit("null", null)
                else -> if (c == '-' || c in '0'..'9') num() else throw error("unexpected '${c}'")
            }
        }

        fun lit(word: String, v: Any?): Any? {
            if (!s.startsWith(word, pos)) throw error("bad literal")
            pos += word.length
            return v
        }

        fun obj(depth: Int): Map<String, Any?> {
            pos++
            val m = LinkedHashMap<String, Any?>()
            skipWs()
            if (pos < s.length && s[pos] == '}') { pos++; return m }
            while (true) {
                skipWs()
                if (pos >= s.length || s[pos] != '"') throw error("expected a string key")
                val k = str()
                skipWs()
                if (pos >= s.length || s[pos] != ':') throw error("expected ':'")
                pos++
                skipWs()
                m[k] = value(depth + 1)
                skipWs()
                if (pos >= s.length) throw error("unexpected end in object")
                when (s[pos++]) {
                    ',' -> continue
                    '}' -> return m
                    else -> { pos--; throw error("expected ',' or '}'") }
                }
            }
        }

        fun arr(depth: Int): List<Any?> {
            pos++
            val l = ArrayList<Any?>()
            skipWs()
            if (pos < s.length && s[pos] == ']') { pos++; return l }
            while (true) {
                skipWs()
                l.add(value(depth + 1))
                skipWs()
                if (pos >= s.length) throw error("unexpected end in array")
                when (s[pos++]) {
                    ',' -> continue
                    ']' -> return l
                    else -> { pos--; throw error("expected ',' or ']'") }
                }
            }
        }

        fun str(): String {
            pos++
            val sb = StringBuilder()
            while (true) {
                if (pos >= s.length) throw error("unterminated string")
                val c = s[pos++]
                when {
                    c == '"' -> return sb.toString()
                    c == '\\' -> {
                        if (pos >= s.length) throw error("unterminated escape")
                        when (val e = s[pos++]) {
                            '"' -> sb.append('"')
                            '\\' -> sb.append('\\')
                            '/' -> sb.append('/')
                            'b' -> sb.append('\b')
                            'f' -> sb.append('\u000C')
                            'n' -> sb.append('\n')
                            'r' -> sb.append('\r')
                            't' -> sb.append('\t')
                            'u' -> {
                                if (pos + 4 > s.length) throw error("short \\u escape")
                                var code = 0
                                for (i in 0 until 4) {
                                    val d = Character.digit(s[pos + i], 16)
                                    if (d < 0) throw error("bad \\u escape")
                                    code = code * 16 + d
                                }
                                pos += 4
                                sb.append(code.toChar())
                            }
                            else -> throw error("bad escape '\\$e'")
                        }
                    }
                    c < ' ' -> { pos--; throw error("control character in string") }
                    else -> sb.append(c)
                }
            }
        }

        fun num(): Any {
            val start = pos
            if (s[pos] == '-') pos++
            if (pos >= s.length) throw error("bad number")
            if (s[pos] == '0') pos++
            else if (s[pos] in '1'..'9') { while (pos < s.length && s[pos] in '0'..'9') pos++ }
            else throw error("bad number")
            var integral = true
            if (pos < s.length && s[pos] == '.') {
                integral = false
                pos++
                val d = pos
                while (pos < s.length && s[pos] in '0'..'9') pos++
                if (pos == d) throw error("bad fraction")
            }
            if (pos < s.length && (s[pos] == 'e' || s[pos] == 'E')) {
                integral = false
                pos++
                if (pos < s.length && (s[pos] == '+' || s[pos] == '-')) pos++
                val d = pos
                while (pos < s.length && s[pos] in '0'..'9') pos++
                if (pos == d) throw error("bad exponent")
            }
            val text = s.substring(start, pos)
            if (integral) text.toLongOrNull()?.let { return it }
            return text.toDouble()
        }
    }
}

/** The value at [key] of a JSON object, or null when [this] is not an object. */
fun Any?.field(key: String): Any? = (this as? Map<*, *>)?.get(key)

/** [field] as a String, or null. */
fun Any?.str(key: String): String? = field(key) as? String

/** [field] as a Long (integral JSON number), or null. */
fun Any?.long(key: String): Long? = when (val v = field(key)) {
    is Long -> v
    is Double -> if (v == Math.rint(v)) v.toLong() else null
    else -> null
}

/** The string-to-string entries of a JSON object (environment maps). */
fun stringMap(v: Any?): Map<String, String> =
    (v as? Map<*, *>)?.entries?.mapNotNull { (k, value) -> if (k is String && value is String) k to value else null }?.toMap() ?: emptyMap()

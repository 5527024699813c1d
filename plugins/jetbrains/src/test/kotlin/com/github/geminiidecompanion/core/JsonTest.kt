package com.github.geminiidecompanion.core

import kotlin.random.Random
import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertTrue

fun jsonTests() {
    test("json: parses every kind of value") {
        val v = Json.parse(""" {"a": [1, -2.5, 3e2, true, false, null], "b": "x\"\\\/\n\u00e9\ud83d\ude00", "c": {}} """)
        assertEquals(mapOf("a" to listOf(1L, -2.5, 300.0, true, false, null), "b" to "x\"\\/\né😀", "c" to emptyMap<String, Any?>()), v)
    }
    test("json: encodes control characters, lone surrogates and line separators escaped") {
        assertEquals("\"a\\nb\\u0001\\ud800\\u2028😀\"", Json.stringify("a\nb\u0001\ud800\u2028😀"))
        assertEquals("""{"n":null,"i":42,"d":1.5,"l":[true]}""", Json.stringify(mapOf("n" to null, "i" to 42, "d" to 1.5, "l" to listOf(true))))
    }
    test("json: malformed input is a ParseError naming the offset") {
        for (bad in listOf("", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "\"a", "tru", "{} x", "\"\u0001\"", "-", "1e")) {
            val e = assertFailsWith<Json.ParseError>("input <$bad>") { Json.parse(bad) }
            assertTrue(e.message!!.contains("offset"), e.message)
        }
    }
    test("json: deep nesting is refused, not a stack overflow") {
        assertFailsWith<Json.ParseError> { Json.parse("[".repeat(100_000)) }
        assertEquals(1, (Json.parse("[".repeat(100) + "]".repeat(100)) as List<*>).size)
    }
    test("json: fuzz, random values survive a round trip") {
        val rnd = Random(7)
        fun randomString(): String = buildString { repeat(rnd.nextInt(12)) { append(rnd.nextInt(0, 0x10000).toChar()) } }
        fun randomValue(depth: Int): Any? = when (if (depth > 3) rnd.nextInt(5) else rnd.nextInt(7)) {
            0 -> null
            1 -> rnd.nextBoolean()
            2 -> rnd.nextLong(-1L shl 52, 1L shl 52)
            3 -> rnd.nextDouble() * 1000 + 0.5
            4 -> randomString()
            5 -> List(rnd.nextInt(4)) { randomValue(depth + 1) }
            else -> (0 until rnd.nextInt(4)).associate { randomString() to randomValue(depth + 1) }
        }
        repeat(3000) {
            val v = randomValue(0)
            val text = Json.stringify(v)
            assertTrue('\n' !in text && '\u2028' !in text, "encoded value spans lines: $text")
            val back = Json.parse(text)
            // Lone surrogates come back as themselves through \\u escapes.
            assertEquals(v, back, "round trip of $text")
        }
    }
    test("json: fuzz, garbage only ever raises ParseError") {
        val rnd = Random(11)
        val alphabet = "{}[]\":,.-+eE0123456789truefalsn \\u\t\n"
        repeat(20000) {
            val s = buildString { repeat(rnd.nextInt(1, 24)) { append(alphabet[rnd.nextInt(alphabet.length)]) } }
            try { Json.parse(s) } catch (_: Json.ParseError) {}
        }
    }
}

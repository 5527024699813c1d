package com.github.geminiidecompanion.core

import java.io.File
import kotlin.test.assertEquals
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertTrue

fun contextTests() {
    test("context: cursor is 1-based line, UTF-16 units + 1") {
        val text = "first\n😀é x\n"
        assertEquals(Cursor(1, 1), Cursor.atOffset(text, 0))
        assertEquals(Cursor(1, 6), Cursor.atOffset(text, 5))
        // After the emoji (2 UTF-16 units) and é (1): column 3 + 1.
        assertEquals(Cursor(2, 4), Cursor.atOffset(text, 6 + 3))
        assertEquals(Cursor(2, 1), Cursor.atOffset(text, 6 + 1), "never inside a surrogate pair")
        assertEquals(Cursor(3, 1), Cursor.atOffset(text, text.length))
        assertEquals(Cursor(4, 8), Cursor.fromZeroBased(3, 7))
    }
    test("context: only local files with absolute paths count") {
        val abs = File(System.getProperty("java.io.tmpdir"), "a.txt").absolutePath
        assertTrue(ContextRules.countsAsFile("file", abs, false))
        assertFalse(ContextRules.countsAsFile("file", abs, true), "directory")
        assertFalse(ContextRules.countsAsFile("jar", abs, false), "jar entry")
        assertFalse(ContextRules.countsAsFile("mock", abs, false), "light virtual file")
        assertFalse(ContextRules.countsAsFile("file", "relative/a.txt", false))
        assertFalse(ContextRules.countsAsFile(null, null, false))
    }
    test("context: selections are cut to the policy's byte limit without splitting a character") {
        assertNull(ContextRules.selectionToSend(""))
        assertEquals("abc", ContextRules.selectionToSend("abc"))
        // 8 bytes allowed: "aé" is 3 bytes, the emoji 4, so the next "é" (2) does not fit.
        assertEquals("aé😀", ContextRules.selectionToSend("aé😀éb", 8))
        assertEquals("aé😀é", ContextRules.selectionToSend("aé😀éb", 9))
        assertEquals("aé", ContextRules.selectionToSend("aé😀éb", 6), "never half an emoji")
        val big = "x".repeat(Policy.DEFAULT.maxSelectionBytes + 10)
        assertEquals(Policy.DEFAULT.maxSelectionBytes, ContextRules.selectionToSend(big)!!.length)
        assertTrue(Policy.DEFAULT.maxSelectionBytes > Policy.DEFAULT.maxSelectedTextUtf16, "still longer than the CLI keeps, so the sidecar marks it truncated")
    }
    test("context: repeats are dropped, closes and renames are sent, replay ends with the active file") {
        val sent = ArrayList<String>()
        val r = ContextReporter { m, p -> sent.add("$m ${Json.stringify(p)}") }
        r.fileFocused("/p/a.kt", Cursor(1, 1), null)
        r.selectionChanged("/p/a.kt", Cursor(1, 1), null)
        r.selectionChanged("/p/a.kt", Cursor(2, 3), "sel")
        r.selectionChanged("/p/a.kt", Cursor(2, 3), "sel")
        r.fileFocused("/p/b.kt", null, null)
        r.fileRenamed("/p/b.kt", "/p/c.kt")
        r.fileFocused("/p/a.kt", Cursor(2, 3), null)
        assertEquals(listOf(
            """context/fileFocused {"path":"/p/a.kt","cursor":{"line":1,"character":1}}""",
            """context/selectionChanged {"path":"/p/a.kt","cursor":{"line":1,"character":1}}""".let { null },
            """context/selectionChanged {"path":"/p/a.kt","cursor":{"line":2,"character":3},"selectedText":"sel"}""",
            """context/fileFocused {"path":"/p/b.kt"}""",
            """context/fileRenamed {"oldPath":"/p/b.kt","newPath":"/p/c.kt"}""",
            """context/fileFocused {"path":"/p/a.kt","cursor":{"line":2,"character":3}}""",
        ).filterNotNull(), sent)
        sent.clear()
        r.replay()
        assertEquals(listOf(
            """context/fileFocused {"path":"/p/c.kt"}""",
            """context/fileFocused {"path":"/p/a.kt","cursor":{"line":2,"character":3}}""",
        ), sent)
        r.fileClosed("/p/c.kt")
        assertEquals(listOf("/p/a.kt"), r.openFiles())
    }
}

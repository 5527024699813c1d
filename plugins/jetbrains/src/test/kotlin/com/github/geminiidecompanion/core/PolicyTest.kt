package com.github.geminiidecompanion.core

import kotlin.test.assertEquals
import kotlin.test.assertNull

fun policyTests() {
    test("policy: restart delays follow the count within the window, clamped to the last; give up at maxRestarts") {
        val p = Policy.DEFAULT
        assertEquals(listOf(100L, 500L, 1000L, 2000L, 5000L), (0..4).map { p.delayAfter(it) })
        assertNull(p.delayAfter(5))
        val q = p.copy(delaysMs = listOf(10, 20), maxRestarts = 4)
        assertEquals(listOf(10L, 20L, 20L, 20L, null), (0..4).map { q.delayAfter(it) })
    }
    test("policy: parsed from initialize; missing or mistyped fields keep the previous values") {
        val p = Policy.parse(Json.parse("""{"restart":{"delaysMs":[1,2],"windowMs":1000,"maxRestarts":2},
            "limits":{"maxSelectionBytes":100,"maxOpenFiles":"ten"},
            "messages":{"gaveUp":"gave up after {count} ({reason}); run X","restarted":7}}"""))
        assertEquals(listOf(1L, 2L), p.delaysMs); assertEquals(1000L, p.windowMs); assertEquals(2, p.maxRestarts)
        assertEquals(100, p.maxSelectionBytes); assertEquals(Policy.DEFAULT.maxOpenFiles, p.maxOpenFiles)
        assertEquals(Policy.DEFAULT.restarted, p.restarted)
        assertEquals("gave up after 3 (signal 9); run X", Policy.fill(p.gaveUp, "signal 9", 3))
        assertEquals(Policy.DEFAULT, Policy.parse(null))
        assertEquals(Policy.DEFAULT.delaysMs, Policy.parse(Json.parse("""{"restart":{"delaysMs":[1,-2]}}""")).delaysMs, "a negative delay is refused")
    }
    test("policy: texts are shown as is; only {reason} and {count} are replaced") {
        assertEquals("exited (exit code 2) {x}", Policy.fill("exited ({reason}) {x}", "exit code 2"))
        assertEquals(SidecarCapabilities(), SidecarCapabilities.parse(null))
        assertEquals(SidecarCapabilities(diffStates = true, terminalEnv = true), SidecarCapabilities.parse(mapOf("diffStates" to true, "terminalEnv" to true, "agent" to "yes")))
    }
}

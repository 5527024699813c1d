package com.github.geminiidecompanion.core

/** A registered test. */
class TestCase(val name: String, val body: () -> Unit)

/** Collects tests; each suite file adds its own with [test]. */
object Registry {
    val tests = ArrayList<TestCase>()
}

/** Registers a test named [name]. */
fun test(name: String, body: () -> Unit) { Registry.tests.add(TestCase(name, body)) }

/**
 * A tiny test runner: runs every registered test (or those whose name
 * contains the first argument), prints each result and
 * "N passed, N failed", and exits non-zero on failure.
 */
fun main(args: Array<String>) {
    jsonTests(); framingTests(); linkTests(); policyTests(); contextTests(); proposalTests(); transcriptTests(); sidecarTests(); toolsTests(); terminalEnvTests()
    val filter = args.firstOrNull().orEmpty()
    var passed = 0
    var failed = 0
    for (t in Registry.tests) {
        if (filter.isNotEmpty() && !t.name.contains(filter)) continue
        val started = System.nanoTime()
        try {
            t.body()
            passed++
            println("ok   ${t.name} (${(System.nanoTime() - started) / 1_000_000} ms)")
        } catch (e: Throwable) {
            failed++
            println("FAIL ${t.name}: $e")
            e.stackTrace.take(6).forEach { println("       at $it") }
        }
    }
    println("$passed passed, $failed failed")
    System.out.flush()
    Runtime.getRuntime().halt(if (failed == 0 && passed > 0) 0 else 1)
}

package com.github.geminiidecompanion.core

import kotlin.test.assertEquals
import kotlin.test.assertFailsWith
import kotlin.test.assertFalse
import kotlin.test.assertNull
import kotlin.test.assertSame
import kotlin.test.assertTrue

fun proposalTests() {
    fun params(path: String, new: String, orig: Any? = "old\n") = mapOf("filePath" to path, "newContent" to new, "originalContent" to orig, "unifiedDiff" to "", "title" to "t")
    test("proposals: accept sends the edited right side once; later decisions are ignored") {
        val sent = ArrayList<String>()
        val book = ProposalBook { m, p -> sent.add("$m ${Json.stringify(p)}") }
        val p = book.open(params("/p/a.txt", "new\n")).proposal
        assertEquals(ProposalState.OPEN, p.state)
        assertTrue(book.accept(p, "new, edited\n"))
        assertFalse(book.accept(p, "again"))
        assertFalse(book.reject(p))
        assertEquals(listOf("""diff/accepted {"filePath":"/p/a.txt","content":"new, edited\n"}"""), sent)
        assertEquals(ProposalState.ACCEPTED, p.state)
        assertNull(book.current("/p/a.txt"))
    }
    test("proposals: a second diff/open for a path replaces the first, which can no longer be decided") {
        val sent = ArrayList<String>()
        val book = ProposalBook { m, _ -> sent.add(m) }
        val first = book.open(params("/p/a.txt", "1")).proposal
        val second = book.open(params("/p/a.txt", "2", null))
        assertSame(first, second.replaced)
        assertNull(second.proposal.original, "a new file has no original")
        assertEquals(ProposalState.CLOSED, first.state)
        assertFalse(book.reject(first))
        assertTrue(book.reject(second.proposal))
        assertEquals(listOf("diff/rejected"), sent)
    }
    test("proposals: diff/close ends the proposal without a decision") {
        val sent = ArrayList<String>()
        val book = ProposalBook { m, _ -> sent.add(m) }
        val p = book.open(params("/p/a.txt", "1")).proposal
        assertSame(p, book.close("/p/a.txt"))
        assertNull(book.close("/p/a.txt"))
        assertFalse(book.accept(p, "x"))
        assertEquals(emptyList(), sent)
    }
    test("proposals: bad diff/open params are -32602 naming the field") {
        val book = ProposalBook { _, _ -> }
        for ((bad, field) in listOf(
            mapOf("newContent" to "x") to "filePath",
            mapOf("filePath" to "rel/a.txt", "newContent" to "x") to "absolute",
            mapOf("filePath" to "/p/a", "newContent" to 3L) to "newContent",
            mapOf("filePath" to "/p/a", "newContent" to "x", "originalContent" to 1L) to "originalContent",
        )) {
            val e = assertFailsWith<LinkError> { book.open(bad) }
            assertEquals(LinkError.INVALID_PARAMS, e.code)
            assertTrue(e.message!!.contains(field), e.message)
        }
        assertEquals(emptyList(), book.all())
    }
}

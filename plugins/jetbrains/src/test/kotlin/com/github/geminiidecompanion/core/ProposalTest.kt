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
        assertEquals(Decision.SENT, book.accept(p, "new, edited\n"))
        assertEquals(Decision.NOT_OPEN, book.accept(p, "again"))
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
        assertEquals(Decision.NOT_OPEN, book.accept(p, "x"))
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
    test("proposals: decisions echo diffId; diff/open's owner, queue and notice are kept") {
        val sent = ArrayList<String>()
        val book = ProposalBook { m, p -> sent.add("$m ${Json.stringify(p)}") }
        val p = book.open(params("/p/a.txt", "1") + mapOf("diffId" to 7L, "owner" to "cli 1", "queued" to 2L, "outsideWorkspace" to true, "notice" to "outside")).proposal
        assertEquals(7L, p.diffId); assertEquals("cli 1", p.owner); assertEquals(2, p.queued); assertEquals("outside", p.notice)
        assertEquals("[outside the workspace] [2 more proposals queued]", p.label())
        assertTrue(book.reject(p))
        assertEquals(listOf("""diff/rejected {"filePath":"/p/a.txt","diffId":7}"""), sent)
    }
    test("proposals: over a change on disk the first accept asks, the second sends overDiskChange; unchangedOnDisk clears it") {
        val sent = ArrayList<String>()
        val book = ProposalBook { m, p -> sent.add("$m ${Json.stringify(p)}") }
        val p = book.open(params("/p/a.txt", "new") + mapOf("diffId" to 3L)).proposal
        val u = book.onState(mapOf("filePath" to "/p/a.txt", "diffId" to 3L, "state" to "changedOnDisk", "message" to "a.txt changed on disk", "diskContent" to "theirs"))
        assertSame(p, u.proposal); assertEquals("a.txt changed on disk", u.message); assertEquals("warn", u.level)
        assertEquals("changedOnDisk", p.disk); assertEquals("theirs", p.diskContent)
        book.onState(mapOf("filePath" to "/p/a.txt", "diffId" to 3L, "state" to "unchangedOnDisk", "message" to ""))
        assertNull(p.disk)
        book.onState(mapOf("filePath" to "/p/a.txt", "diffId" to 3L, "state" to "deletedOnDisk", "message" to "gone"))
        assertEquals(Decision.NEEDS_CONFIRMATION, book.accept(p, "mine"))
        assertEquals(emptyList(), sent, "nothing is sent before the second accept")
        assertEquals(Decision.SENT, book.accept(p, "mine"))
        assertEquals(listOf("""diff/accepted {"filePath":"/p/a.txt","content":"mine","overDiskChange":true,"diffId":3}"""), sent)
    }
    test("proposals: a state about another diffId leaves the view alone; queued counts update; orphaned is labelled") {
        val book = ProposalBook { _, _ -> }
        val p = book.open(params("/p/a.txt", "1") + mapOf("diffId" to 1L)).proposal
        assertNull(book.onState(mapOf("filePath" to "/p/a.txt", "diffId" to 9L, "state" to "changedOnDisk", "message" to "x")).proposal)
        assertNull(p.disk)
        book.onState(mapOf("filePath" to "/p/a.txt", "diffId" to 2L, "state" to "queued", "queued" to 1L, "message" to "queued"))
        assertEquals(1, p.queued)
        book.onState(mapOf("filePath" to "/p/a.txt", "diffId" to 1L, "state" to "orphaned", "message" to "gone"))
        assertTrue(p.orphaned)
        assertTrue(p.label().contains("ORPHANED"))
    }
    test("proposals: needsConfirmation opens the refused accept again as the user left it; expired hands back the text") {
        val sent = ArrayList<String>()
        val book = ProposalBook { m, _ -> sent.add(m) }
        val dir = java.nio.file.Files.createTempDirectory("gic-prop").toFile()
        val path = java.io.File(dir, "a.txt").apply { writeText("on disk now") }.absolutePath
        val p = book.open(params(path, "new") + mapOf("diffId" to 5L)).proposal
        assertEquals(Decision.SENT, book.accept(p, "new, edited"))
        val u = book.onState(mapOf("filePath" to path, "diffId" to 5L, "state" to "needsConfirmation", "message" to "changed on disk: confirm"))
        assertTrue(u.reopened)
        val again = u.proposal!!
        assertEquals("new, edited", again.proposed); assertEquals("on disk now", again.diskContent); assertEquals(5L, again.diffId)
        assertSame(again, book.current(path))
        assertEquals(Decision.SENT, book.accept(again, again.proposed), "the user was asked: this accept overwrites")
        val x = book.onState(mapOf("filePath" to path, "diffId" to 5L, "state" to "expired", "message" to "expired", "content" to "new, edited"))
        assertEquals("new, edited", x.unwritten)
        assertEquals(listOf("diff/accepted", "diff/accepted"), sent)
        dir.deleteRecursively()
    }
}

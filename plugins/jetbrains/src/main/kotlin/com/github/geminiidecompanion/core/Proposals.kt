package com.github.geminiidecompanion.core

import java.io.File
import java.util.concurrent.atomic.AtomicLong

/** Where a proposal is in its life. */
enum class ProposalState { OPEN, ACCEPTED, REJECTED, CLOSED }

/** One proposed edit, shown as a diff: [original] (null for a new file) against [proposed]. */
class Proposal(
    val id: Long,
    val filePath: String,
    val original: String?,
    val proposed: String,
    val title: String,
) {
    /** Changes only through [ProposalBook]. */
    @Volatile
    var state: ProposalState = ProposalState.OPEN
        internal set

    override fun toString() = "Proposal($id, $filePath, $state)"
}

/**
 * The proposal state machine. At most one open proposal per file; a new
 * `diff/open` for the same path replaces the old one (which closes without a
 * decision). A decision is sent once; after the sidecar's `diff/close`, or
 * after a decision, later decisions for that proposal are ignored.
 */
class ProposalBook(private val send: (method: String, params: Map<String, Any?>) -> Unit) {
    private val ids = AtomicLong(1)
    private val byPath = LinkedHashMap<String, Proposal>()

    /** Result of [open]: the new proposal and the one it replaced, if any. */
    data class Opened(val proposal: Proposal, val replaced: Proposal?)

    /** Validates `diff/open` params and records the proposal; throws [LinkError] (-32602) on bad params. */
    @Synchronized
    fun open(params: Any?): Opened {
        val path = params.field("filePath") as? String
            ?: throw LinkError(LinkError.INVALID_PARAMS, "diff/open: filePath must be a string")
        if (!File(path).isAbsolute) throw LinkError(LinkError.INVALID_PARAMS, "diff/open: filePath must be absolute: $path")
        val proposed = params.field("newContent") as? String
            ?: throw LinkError(LinkError.INVALID_PARAMS, "diff/open: newContent must be a string")
        val originalRaw = params.field("originalContent")
        if (originalRaw != null && originalRaw !is String) {
            throw LinkError(LinkError.INVALID_PARAMS, "diff/open: originalContent must be a string or null")
        }
        val title = (params.field("title") as? String)?.takeIf { it.isNotBlank() } ?: File(path).name
        val p = Proposal(ids.getAndIncrement(), path, originalRaw, proposed, title)
        val replaced = byPath.put(path, p)
        replaced?.state = ProposalState.CLOSED
        return Opened(p, replaced)
    }

    /** The user accepted [p] with [content] (the right side, with their edits). False when no longer open. */
    @Synchronized
    fun accept(p: Proposal, content: String): Boolean {
        if (!settle(p, ProposalState.ACCEPTED)) return false
        send("diff/accepted", mapOf("filePath" to p.filePath, "content" to content))
        return true
    }

    /** The user rejected [p] (or closed its view). False when no longer open. */
    @Synchronized
    fun reject(p: Proposal): Boolean {
        if (!settle(p, ProposalState.REJECTED)) return false
        send("diff/rejected", mapOf("filePath" to p.filePath))
        return true
    }

    /**
     * The sidecar's `diff/close`: forgets the open proposal for [filePath] and
     * returns it (the caller reads its right side and closes the view), or null.
     */
    @Synchronized
    fun close(filePath: String): Proposal? {
        val p = byPath.remove(filePath) ?: return null
        p.state = ProposalState.CLOSED
        return p
    }

    /** The open proposal for [filePath], if any. */
    @Synchronized
    fun current(filePath: String): Proposal? = byPath[filePath]

    /** All open proposals, oldest first. */
    @Synchronized
    fun all(): List<Proposal> = byPath.values.toList()

    /** Closes every proposal without a decision (the sidecar went away). */
    @Synchronized
    fun clear(): List<Proposal> {
        val all = byPath.values.toList()
        all.forEach { it.state = ProposalState.CLOSED }
        byPath.clear()
        return all
    }

    private fun settle(p: Proposal, to: ProposalState): Boolean {
        if (p.state != ProposalState.OPEN || byPath[p.filePath] !== p) return false
        p.state = to
        byPath.remove(p.filePath)
        return true
    }
}

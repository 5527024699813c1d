package com.github.geminiidecompanion.core

import java.io.File
import java.io.IOException
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
    /** The sidecar's id for it (echoed in decisions); null from a protocol-1 sidecar. */
    val diffId: Long? = null,
    /** A short label of the proposing Gemini CLI session. */
    val owner: String? = null,
    /** A sentence to show with the view (e.g. for a file outside the workspace). */
    val notice: String? = null,
    val outsideWorkspace: Boolean = false,
) {
    /** Changes only through [ProposalBook]. */
    @Volatile var state: ProposalState = ProposalState.OPEN; internal set
    /** How many proposals for the same file wait behind this one. */
    @Volatile var queued: Int = 0; internal set
    /** Its Gemini CLI session is gone: accepting writes nothing. */
    @Volatile var orphaned: Boolean = false; internal set
    /** `changedOnDisk` / `deletedOnDisk` since it was shown, else null. */
    @Volatile var disk: String? = null; internal set
    /** The file as it is on disk now (after `changedOnDisk`); the view shows it as the "before" side. */
    @Volatile var diskContent: String? = null; internal set
    /** The next accept overwrites a change on disk (the user was asked, or accepted once already). */
    @Volatile var confirmed: Boolean = false; internal set

    /** The view's label: its state in words, for the diff's title; UI text, not protocol. */
    fun label(): String = buildList {
        if (outsideWorkspace) add("outside the workspace")
        if (orphaned) add("ORPHANED: its Gemini CLI is gone, accepting writes nothing")
        when (disk) {
            "changedOnDisk" -> add("CHANGED ON DISK")
            "deletedOnDisk" -> add("DELETED ON DISK")
        }
        if (confirmed && disk != null) add("accept again to overwrite")
        if (queued > 0) add(if (queued == 1) "1 more proposal queued" else "$queued more proposals queued")
    }.joinToString("] [", "[", "]").takeIf { it != "[]" } ?: ""

    override fun toString() = "Proposal($id, $filePath, $state, diffId=$diffId)"
}

/** What an accept did. */
enum class Decision {
    /** `diff/accepted` was sent. */
    SENT,
    /** The file changed on disk since the proposal was shown: nothing was sent; the next accept overwrites it. */
    NEEDS_CONFIRMATION,
    /** The proposal is no longer open (decided, replaced or closed by the sidecar). */
    NOT_OPEN,
}

/** What a `diff/state` notification means for the UI. */
data class StateUpdate(
    /** The view it is about, if one is open (or was opened again: [reopened]). */
    val proposal: Proposal?,
    val reopened: Boolean,
    /** The sidecar's sentence, shown as is (empty: nothing to show), at [level]. */
    val message: String,
    val level: String,
    /** Text the user accepted that was not written (`expired`, `undelivered`): keep it for them. */
    val unwritten: String?,
)

/**
 * The proposal state machine. At most one open proposal per file; a new
 * `diff/open` for the same path replaces the old one (closed without a
 * decision). A decision is sent once, with the proposal's `diffId`; after the
 * sidecar's `diff/close` or a decision, later decisions are ignored. Accepting
 * over a change on disk takes a second, explicit accept. `diff/state` updates
 * labels, and an accept the sidecar refused (`needsConfirmation`) is opened
 * again as the user left it.
 */
class ProposalBook(private val send: (method: String, params: Map<String, Any?>) -> Unit) {
    private val ids = AtomicLong(1)
    private val byPath = LinkedHashMap<String, Proposal>()
    private class Sent(val proposal: Proposal, val content: String)
    private val sent = HashMap<String, Sent>() // accepts not yet settled, by path

    /** Result of [open]: the new proposal and the one it replaced, if any. */
    data class Opened(val proposal: Proposal, val replaced: Proposal?)

    /** Validates `diff/open` params and records the proposal; throws [LinkError] (-32602) on bad params. */
    @Synchronized
    fun open(params: Any?): Opened {
        val path = params.field("filePath") as? String ?: throw LinkError(LinkError.INVALID_PARAMS, "diff/open: filePath must be a string")
        if (!File(path).isAbsolute) throw LinkError(LinkError.INVALID_PARAMS, "diff/open: filePath must be absolute: $path")
        val proposed = params.field("newContent") as? String ?: throw LinkError(LinkError.INVALID_PARAMS, "diff/open: newContent must be a string")
        val originalRaw = params.field("originalContent")
        if (originalRaw != null && originalRaw !is String) throw LinkError(LinkError.INVALID_PARAMS, "diff/open: originalContent must be a string or null")
        val title = (params.field("title") as? String)?.takeIf { it.isNotBlank() } ?: File(path).name
        val p = Proposal(ids.getAndIncrement(), path, originalRaw as String?, proposed, title,
            diffId = params.long("diffId"), owner = params.str("owner"), notice = params.str("notice")?.takeIf { it.isNotBlank() },
            outsideWorkspace = params.field("outsideWorkspace") == true)
        p.queued = params.long("queued")?.toInt()?.coerceAtLeast(0) ?: 0
        return Opened(p, put(p))
    }

    private fun put(p: Proposal): Proposal? {
        sent.remove(p.filePath)
        val replaced = byPath.put(p.filePath, p)
        replaced?.state = ProposalState.CLOSED
        return replaced
    }

    /**
     * The user accepted [p] with [content] (the right side, with their edits).
     * Over a change on disk the first accept only asks ([Decision.NEEDS_CONFIRMATION]).
     */
    @Synchronized
    fun accept(p: Proposal, content: String): Decision {
        if (!isOpen(p)) return Decision.NOT_OPEN
        if (p.disk != null && !p.confirmed) { p.confirmed = true; return Decision.NEEDS_CONFIRMATION }
        settle(p, ProposalState.ACCEPTED)
        sent[p.filePath] = Sent(p, content)
        send("diff/accepted", decision(p, "content" to content, "overDiskChange" to (if (p.confirmed) true else null)))
        return Decision.SENT
    }

    /** The user chose to accept although the file changed on disk: sends at once with `overDiskChange`. */
    @Synchronized
    fun acceptOverDiskChange(p: Proposal, content: String): Decision {
        if (!isOpen(p)) return Decision.NOT_OPEN
        p.confirmed = true
        return accept(p, content)
    }

    /** The user rejected [p] or closed its view. False when it is no longer open. */
    @Synchronized
    fun reject(p: Proposal): Boolean {
        if (!isOpen(p)) return false
        settle(p, ProposalState.REJECTED)
        send("diff/rejected", decision(p))
        return true
    }

    /** The sidecar's `diff/close`: forgets the proposal for [filePath] and returns it (the caller reads and closes its view), or null. */
    @Synchronized
    fun close(filePath: String): Proposal? {
        sent.remove(filePath)
        val p = byPath.remove(filePath) ?: return null
        p.state = ProposalState.CLOSED
        return p
    }

    /** Applies a `diff/state` notification. */
    @Synchronized
    fun onState(params: Any?): StateUpdate {
        val path = params.str("filePath") ?: ""
        val state = params.str("state") ?: ""
        val diffId = params.long("diffId")
        var p = byPath[path]?.takeIf { diffId == null || it.diffId == null || it.diffId == diffId || state == "queued" }
        var reopened = false
        var unwritten: String? = null
        var level = "warn"
        when (state) {
            "queued" -> { level = "info"; p?.let { it.queued = params.long("queued")?.toInt()?.coerceAtLeast(0) ?: (it.queued + 1) } }
            "orphaned" -> p?.orphaned = true
            "changedOnDisk", "deletedOnDisk", "unchangedOnDisk" -> {
                if (state == "unchangedOnDisk") level = "info"
                p?.let {
                    it.disk = if (state == "unchangedOnDisk") null else state
                    it.diskContent = if (state == "changedOnDisk") params.str("diskContent") else null
                    it.confirmed = false
                }
            }
            "needsConfirmation" -> {
                // The accept raced a change on disk: show the proposal again, as the user left it.
                val last = sent[path]
                if (p == null && last != null && (diffId == null || last.proposal.diffId == null || last.proposal.diffId == diffId)) {
                    val before = last.proposal
                    val disk = try { File(path).takeIf { it.isFile }?.readText() } catch (_: IOException) { null }
                    val again = Proposal(ids.getAndIncrement(), path, before.original, last.content, before.title,
                        diffId ?: before.diffId, before.owner, before.notice, before.outsideWorkspace)
                    again.disk = if (disk != null) "changedOnDisk" else "deletedOnDisk"
                    again.diskContent = disk
                    put(again)
                    p = again
                    reopened = true
                }
                p?.let { it.disk = it.disk ?: "changedOnDisk"; it.confirmed = true }
            }
            "expired", "undelivered" -> { sent.remove(path); unwritten = params.str("content") }
        }
        return StateUpdate(p, reopened, params.str("message") ?: "", level, unwritten)
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
        sent.clear()
        return all
    }

    private fun isOpen(p: Proposal) = p.state == ProposalState.OPEN && byPath[p.filePath] === p

    private fun settle(p: Proposal, to: ProposalState) {
        p.state = to
        byPath.remove(p.filePath)
    }

    private fun decision(p: Proposal, vararg extra: Pair<String, Any?>): Map<String, Any?> {
        val m = linkedMapOf<String, Any?>("filePath" to p.filePath)
        for ((k, v) in extra) if (v != null) m[k] = v
        p.diffId?.let { m["diffId"] = it }
        return m
    }
}

package com.github.geminiidecompanion.core

import java.io.File

/** A caret position as the editor link counts it: 1-based line, UTF-16 units + 1. */
data class Cursor(val line: Int, val character: Int) {
    /** The JSON form. */
    fun toJson(): Map<String, Any?> = mapOf("line" to line, "character" to character)

    companion object {
        /**
         * From the IDE's 0-based line and the caret's UTF-16 offset inside that
         * line (a Document offset minus its line start: Java strings are UTF-16,
         * so no conversion is needed, only the +1s).
         */
        fun fromZeroBased(line0: Int, column0: Int) = Cursor(line0 + 1, column0 + 1)

        /** From an offset into [text] (lines end in `\n`, as in an IDE Document). */
        fun atOffset(text: CharSequence, offset: Int): Cursor {
            require(offset in 0..text.length) { "offset $offset outside 0..${text.length}" }
            var line = 0
            var lineStart = 0
            for (i in 0 until offset) if (text[i] == '\n') { line++; lineStart = i + 1 }
            var col = offset - lineStart
            // Never report a column inside a surrogate pair.
            if (offset in 1 until text.length && text[offset].isLowSurrogate() && text[offset - 1].isHighSurrogate()) col--
            return fromZeroBased(line, col)
        }
    }
}

/** Which files are context, and how much of a selection travels. */
object ContextRules {
    /**
     * The selection as sent: null when empty, else cut to [maxBytes] bytes of
     * UTF-8 (`policy.limits.maxSelectionBytes`) at a character boundary. The
     * sidecar makes the exact cut the CLI expects (16384 UTF-16 units) and
     * marks it truncated; this only keeps a huge selection from travelling
     * whole on every caret move.
     */
    fun selectionToSend(selected: String?, maxBytes: Int = Policy.DEFAULT.maxSelectionBytes): String? {
        if (selected.isNullOrEmpty()) return null
        if (selected.length.toLong() * 3 <= maxBytes) return selected
        var bytes = 0L
        var i = 0
        while (i < selected.length) {
            val cp = selected.codePointAt(i)
            val n = when { cp < 0x80 -> 1; cp < 0x800 -> 2; cp < 0x10000 -> 3; else -> 4 }
            if (bytes + n > maxBytes) break
            bytes += n
            i += Character.charCount(cp)
        }
        return selected.substring(0, i)
    }

    /**
     * True when an editor's file counts as context: a file on the local file
     * system (the IDE's `file` protocol: not a jar entry, a scratch or light
     * in-memory file, a diff or console document), with an absolute path,
     * and not a directory.
     */
    fun countsAsFile(protocol: String?, path: String?, isDirectory: Boolean): Boolean {
        if (protocol != "file" || path.isNullOrEmpty() || isDirectory) return false
        return File(path).isAbsolute
    }
}

/**
 * Turns editor events into context notifications: skips files that do not
 * count, drops repeats of what was just sent, and remembers the open files so
 * a restarted sidecar can be told the state again ([replay]).
 */
class ContextReporter(
    private val maxSelectionBytes: () -> Int = { Policy.DEFAULT.maxSelectionBytes },
    private val send: (method: String, params: Map<String, Any?>) -> Unit,
) {
    private data class State(val path: String, val cursor: Cursor?, val selected: String?)

    private val open = LinkedHashMap<String, State>()
    private var last: State? = null
    private var active: String? = null

    /** A file editor became the selected one. */
    @Synchronized
    fun fileFocused(path: String, cursor: Cursor?, selected: String?) {
        val st = State(path, cursor, ContextRules.selectionToSend(selected, maxSelectionBytes()))
        open.remove(path)
        open[path] = st
        active = path
        last = st
        send("context/fileFocused", params(st))
    }

    /** The caret or selection moved in [path]. */
    @Synchronized
    fun selectionChanged(path: String, cursor: Cursor, selected: String?) {
        val st = State(path, cursor, ContextRules.selectionToSend(selected, maxSelectionBytes()))
        if (st == last) return
        open.remove(path)
        open[path] = st
        active = path
        last = st
        send("context/selectionChanged", params(st))
    }

    /** The last editor of [path] closed. */
    @Synchronized
    fun fileClosed(path: String) {
        open.remove(path)
        if (active == path) { active = null; last = null }
        send("context/fileClosed", mapOf("path" to path))
    }

    /** [oldPath] was renamed or moved to [newPath]. */
    @Synchronized
    fun fileRenamed(oldPath: String, newPath: String) {
        val st = open.remove(oldPath)
        if (st != null) open[newPath] = st.copy(path = newPath)
        if (active == oldPath) active = newPath
        last = null
        send("context/fileRenamed", mapOf("oldPath" to oldPath, "newPath" to newPath))
    }

    /** Files this reporter believes open, least recent first. */
    @Synchronized
    fun openFiles(): List<String> = open.keys.toList()

    /** Sends the remembered state again (after a sidecar restart): each open file, the active one last. */
    @Synchronized
    fun replay() {
        for ((path, st) in open) if (path != active) send("context/fileFocused", params(st))
        active?.let { open[it] }?.let { send("context/fileFocused", params(it)); last = it }
    }

    private fun params(st: State): Map<String, Any?> {
        val m = LinkedHashMap<String, Any?>()
        m["path"] = st.path
        st.cursor?.let { m["cursor"] = it.toJson() }
        st.selected?.let { m["selectedText"] = it }
        return m
    }
}

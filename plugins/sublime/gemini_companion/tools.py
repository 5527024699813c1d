"""The editor tools: the sidecar's ``editor/*`` requests, answered from the
editor's own knowledge (docs/editor-tools.md).

When an agent calls ``getDefinition`` or another editor tool, the sidecar
sends this package an ``editor/*`` request. ``Tools`` answers it: it checks
the params, finds the name at the position, asks the editor (the *source*,
``plugin.py``) what it knows, converts every position to the tools' units
(1-based lines, 1-based columns in characters, that is code points) and stops
at ``maxResults``, saying ``truncated``. What the editor cannot answer here
is answered with ``NOT_AVAILABLE`` and a message that says what to install
or open; a position the file does not have with ``-32602``.

The source (plugin.py) provides, all called on the UI thread:

    tool_text(path)              the text of a file: the buffer if it is open
                                 (unsaved changes included), else the file on
                                 disk; None if neither exists
    tool_diagnostics(path)       [(path, LSP diagnostic dict)] of one file, or
                                 of every file when path is None; positions
                                 as LSP has them (0-based, UTF-16 units)
    tool_definitions(name)       [(path, row, col)] where name is defined,
                                 1-based row and column in characters
    tool_references(name)        [(path, row, col)] where name is used
    tool_symbols(path)           [(name, kind, row, col)] of an open file,
                                 0-based, kind as Sublime's (id, letter,
                                 description)
    tool_workspace_symbols(query)  [(name, kind, path, row, col)], 1-based
    tool_open_editors()          [{path, active, cursor: (row, col),
                                 selection: ((row, col), (row, col)) or None,
                                 selected_text, dirty}], 0-based, columns in
                                 characters
    tool_open_file(path, line, end_line)  show it (1-based lines or None)

Each may raise ``NotAvailable(message)``. Nothing here imports ``sublime``.
"""

import os
import re

from . import positions
from .link import LinkError, INVALID_PARAMS

# Error codes of the editor tools (companion/protocol/editor.go).
NOT_AVAILABLE = -32010
DEADLINE_PASSED = -32011

# What this package answers (initialize's capabilities). Sublime Text has no
# type or documentation text of its own, so no hover.
CAPABILITIES = {"diagnostics": True, "definition": True, "references": True,
                "hover": False, "documentSymbols": True, "workspaceSymbols": True,
                "openEditors": True, "openFile": True}

SEVERITIES = ("error", "warning", "info", "hint")
LSP_SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
DEFAULT_MAX_RESULTS = 200
MAX_TEXT_CHARS = 400            # Location.text
MAX_SELECTED_UTF16 = 16384      # OpenEditor.selectedText, as in IDE mode
MAX_QUERY_CHARS = 256

# Sublime's kinds (sublime.KIND_ID_*) and the descriptions syntaxes give
# them, as the tools' symbol kinds (LSP's names).
_KIND_IDS = {2: "class", 3: "function", 4: "namespace", 7: "variable"}
_KIND_WORDS = {
    "function": "function", "method": "method", "class": "class", "struct": "struct",
    "interface": "interface", "enum": "enum", "constant": "constant", "variable": "variable",
    "namespace": "namespace", "module": "module", "package": "package", "field": "field",
    "property": "property", "constructor": "constructor", "type": "class",
    "trait": "interface", "macro": "function", "heading": "string", "key": "key",
}

_NAME = re.compile(r"\w+", re.UNICODE)


class NotAvailable(Exception):
    """The editor has no source for this feature here; the message says what
    to install or open."""


def _int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _lines(text):
    """The lines of ``text``; a final line break ends the last line (as the
    sidecar counts them)."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


def _bad(message):
    return LinkError(message, INVALID_PARAMS)


def symbol_kind(kind):
    """The tools' kind for Sublime's (kind id, letter, description)."""
    if isinstance(kind, (tuple, list)) and len(kind) == 3:
        word = str(kind[2]).strip().lower()
        if word in _KIND_WORDS:
            return _KIND_WORDS[word]
        if kind[0] in _KIND_IDS:
            return _KIND_IDS[kind[0]]
    return "other"


class Tools(object):
    """Answers one window's ``editor/*`` requests from ``source``."""

    def __init__(self, link, source, editor="Sublime Text"):
        self.source, self.editor = source, editor
        for method, handler in (
                ("editor/getDiagnostics", self.diagnostics),
                ("editor/getDefinition", lambda p: self._locations(p, self.source.tool_definitions)),
                ("editor/getReferences", lambda p: self._locations(p, self.source.tool_references)),
                ("editor/getDocumentSymbols", self.document_symbols),
                ("editor/searchWorkspaceSymbols", self.workspace_symbols),
                ("editor/getOpenEditors", self.open_editors),
                ("editor/openFile", self.open_file)):
            link.on(method, self._guarded(handler))

    @staticmethod
    def _guarded(handler):
        def answer(params):
            try:
                return handler(params if isinstance(params, dict) else {})
            except NotAvailable as exc:
                raise LinkError(str(exc), NOT_AVAILABLE)
        return answer

    # ------------------------------------------------------------- helpers

    @staticmethod
    def _max(params):
        value = params.get("maxResults")
        return value if _int(value) and value > 0 else DEFAULT_MAX_RESULTS

    @staticmethod
    def _path(params):
        path = params.get("path")
        if not isinstance(path, str) or not os.path.isabs(path):
            raise _bad("path must be an absolute path, not %r" % (path,))
        return path

    def _text(self, path):
        text = self.source.tool_text(path)
        if text is None:
            raise _bad("%s does not exist" % (path,))
        return text

    def _name_at(self, params):
        """(path, lines, name) of the name at params' line and character."""
        path = self._path(params)
        line, character = params.get("line"), params.get("character")
        if not _int(line) or line < 1:
            raise _bad("line must be 1 or more")
        if not _int(character) or character < 1:
            raise _bad("character must be 1 or more")
        lines = _lines(self._text(path))
        name = os.path.basename(path)
        if line > len(lines):
            raise _bad("line %d is past the end of %s (%d lines)" % (line, name, len(lines)))
        text = lines[line - 1]
        if character > len(text) + 1:
            raise _bad("character %d is past the end of line %d of %s (%d characters)"
                       % (character, line, name, len(text)))
        col = character - 1
        for found in _NAME.finditer(text):
            if found.start() <= col < found.end() or (found.end() == col and col == len(text)):
                return path, found.group()
        raise _bad("%s:%d:%d is not on a name" % (name, line, character))

    def _line_text(self, cache, path, row):
        """Line ``row`` (1-based) of ``path``, at most MAX_TEXT_CHARS, or None."""
        if path not in cache:
            text = self.source.tool_text(path)
            cache[path] = _lines(text) if text is not None else None
        lines = cache[path]
        if lines is None or not 1 <= row <= len(lines):
            return None
        return lines[row - 1][:MAX_TEXT_CHARS]

    # ------------------------------------------------------------ requests

    def _locations(self, params, lookup):
        _, name = self._name_at(params)
        limit, cache, seen, out = self._max(params), {}, set(), []
        truncated = False
        for path, row, col in lookup(name):
            if not (isinstance(path, str) and _int(row) and _int(col)) or (path, row, col) in seen:
                continue
            seen.add((path, row, col))
            if len(out) == limit:
                truncated = True
                break
            location = {"path": path, "range": {
                "start": {"line": row, "character": col},
                "end": {"line": row, "character": col + len(name)}}}
            text = self._line_text(cache, path, row)
            if text is not None:
                location["text"] = text
            out.append(location)
        result = {"locations": out}
        if truncated:
            result["truncated"] = True
        return result

    def diagnostics(self, params):
        path = params.get("path")
        if path is not None:
            path = self._path(params)
        severity = params.get("severity")
        if severity is not None and severity not in SEVERITIES:
            raise _bad("severity must be one of %s" % ", ".join(SEVERITIES))
        worst = SEVERITIES.index(severity) if severity else len(SEVERITIES) - 1
        found, cache = [], {}
        for file_path, diag in self.source.tool_diagnostics(path):
            if not isinstance(diag, dict) or not isinstance(file_path, str):
                continue
            level = LSP_SEVERITIES.get(diag.get("severity"), "error")
            if SEVERITIES.index(level) > worst:
                continue
            found.append(self._diagnostic(cache, file_path, diag, level))
        found = [d for d in found if d is not None]
        found.sort(key=lambda d: (SEVERITIES.index(d["severity"]), d["path"],
                                  d["range"]["start"]["line"], d["range"]["start"]["character"]))
        limit = self._max(params)
        result = {"diagnostics": found[:limit]}
        if len(found) > limit:
            result["truncated"] = True
        return result

    def _diagnostic(self, cache, path, diag, level):
        rng = diag.get("range")
        try:
            start, end = rng["start"], rng["end"]
            points = [self._from_lsp(cache, path, p["line"], p["character"]) for p in (start, end)]
        except (KeyError, TypeError, ValueError):
            return None
        out = {"path": path, "range": {"start": points[0], "end": points[1]},
               "severity": level, "message": str(diag.get("message", ""))}
        if diag.get("source"):
            out["source"] = str(diag["source"])
        if diag.get("code") is not None and diag.get("code") != "":
            out["code"] = str(diag["code"])
        return out

    def _from_lsp(self, cache, path, line, utf16):
        """A tools position for an LSP one (0-based line, UTF-16 units)."""
        if not (_int(line) and _int(utf16)) or line < 0 or utf16 < 0:
            raise ValueError("bad position")
        if path not in cache:
            text = self.source.tool_text(path)
            cache[path] = _lines(text) if text is not None else None
        lines = cache[path]
        text = lines[line] if lines is not None and line < len(lines) else None
        col = positions.codepoint_column(text, utf16) if text is not None else utf16
        return {"line": line + 1, "character": col + 1}

    def document_symbols(self, params):
        path = self._path(params)
        if self.source.tool_text(path) is None:
            raise _bad("%s does not exist" % (path,))
        limit, out = self._max(params), []
        symbols = self.source.tool_symbols(path)
        for name, kind, row, col in symbols[:limit]:
            point = {"line": row + 1, "character": col + 1}
            out.append({"name": name, "kind": symbol_kind(kind),
                        "range": {"start": point, "end": dict(point)}})
        result = {"symbols": out}
        if len(symbols) > limit:
            result["truncated"] = True
        return result

    def workspace_symbols(self, params):
        query = params.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _bad("query must be a non-empty string")
        if len(query) > MAX_QUERY_CHARS:
            raise _bad("query must be at most %d characters" % MAX_QUERY_CHARS)
        limit, out, seen = self._max(params), [], set()
        truncated = False
        for name, kind, path, row, col in self.source.tool_workspace_symbols(query.strip()):
            if (name, path, row, col) in seen:
                continue
            seen.add((name, path, row, col))
            if len(out) == limit:
                truncated = True
                break
            point = {"line": row, "character": col}
            out.append({"name": name, "kind": symbol_kind(kind), "path": path,
                        "range": {"start": point, "end": {"line": row, "character": col + len(name)}}})
        result = {"symbols": out}
        if truncated:
            result["truncated"] = True
        return result

    def open_editors(self, params):
        limit, out = self._max(params), []
        editors = sorted(self.source.tool_open_editors(), key=lambda e: not e.get("active"))
        for editor in editors[:limit]:
            item = {"path": editor["path"]}
            if editor.get("active"):
                item["active"] = True
            cursor = editor.get("cursor")
            if cursor is not None:
                item["cursor"] = {"line": cursor[0] + 1, "character": cursor[1] + 1}
            selection = editor.get("selection")
            if selection is not None:
                (r0, c0), (r1, c1) = selection
                item["selection"] = {"start": {"line": r0 + 1, "character": c0 + 1},
                                     "end": {"line": r1 + 1, "character": c1 + 1}}
            text = editor.get("selected_text")
            if text:
                item["selectedText"] = _cut_utf16(text, MAX_SELECTED_UTF16)
            if editor.get("dirty"):
                item["dirty"] = True
            out.append(item)
        result = {"editors": out}
        if len(editors) > limit:
            result["truncated"] = True
        return result

    def open_file(self, params):
        path = self._path(params)
        line, end_line = params.get("line"), params.get("endLine")
        for key, value in (("line", line), ("endLine", end_line)):
            if value is not None and (not _int(value) or value < 1):
                raise _bad("%s must be 1 or more" % key)
        if end_line is not None and line is None:
            raise _bad("endLine needs line")
        lines = _lines(self._text(path))
        if line is not None and max(line, end_line or 0) > len(lines):
            raise _bad("line %d is past the end of %s (%d lines)"
                       % (max(line, end_line or 0), os.path.basename(path), len(lines)))
        if end_line is not None and end_line < line:
            raise _bad("endLine must not be before line")
        self.source.tool_open_file(path, line, end_line)
        return {}


def _cut_utf16(text, limit):
    """At most ``limit`` UTF-16 units of ``text``, whole characters."""
    if positions.utf16_length(text) <= limit:
        return text
    units = 0
    for index, ch in enumerate(text):
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > limit:
            return text[:index]
    return text

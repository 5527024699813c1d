"""Gemini Companion: Gemini CLI's IDE mode for Sublime Text 4.

This file is the only module Sublime Text loads from the package. It adapts
Sublime's events and commands to the editor-independent core in
``gemini_companion/`` (which never imports ``sublime``): one ``Session`` per
window, each with its own gemini-ide-companion sidecar.
"""

import html
import os
import shlex
import shutil
import subprocess
import threading
import sys

import sublime
import sublime_plugin

# Sublime reloads this file when the package changes; make it reload the core
# modules too instead of keeping the old ones from sys.modules.
_CORE = (__package__ or "") + ".gemini_companion"
for _name in [m for m in list(sys.modules) if m == _CORE or m.startswith(_CORE + ".")]:
    del sys.modules[_name]

from .gemini_companion import locate, positions  # noqa: E402
from .gemini_companion import session as sessionmod  # noqa: E402
from .gemini_companion import tools as toolsmod  # noqa: E402

SETTINGS_FILE = "Gemini Companion.sublime-settings"
STATUS_KEY = "gemini_companion"
DIFF_SETTING = "gemini_companion_diff"            # path a diff view proposes for
DETACHED_SETTING = "gemini_companion_diff_detached"
STATE_SETTING = "gemini_companion_diff_state"      # what diff/state said last
UNWRITTEN_SETTING = "gemini_companion_unwritten"   # path accepted text was for
NEW_FILE_SETTING = "gemini_companion_new_file"     # the proposal creates the file
PROPOSAL_SETTING = "gemini_companion_proposal"    # key binding context
PHANTOM_KEY = "gemini_companion_diff"
GEMINI_INSTALL = "npm install -g @google/gemini-cli"

_sessions = {}      # window id -> Session
_view_paths = {}    # view id -> file name last seen (to notice renames)
_closing = {}       # view id -> window id, between on_pre_close and on_close
_reported = set()   # error dialogs already shown
_reveal = {}        # view id -> (line, end_line) to show once it has loaded

MAX_TOOL_FILE = 16 << 20   # the most of a file the editor tools read from disk
LSP_INSTALL = ("install the LSP package (Package Control: Install Package, LSP) and "
               "a language server for it (for Go, LSP-gopls)")


# --------------------------------------------------------------------- helpers

def console(text):
    """A line for Sublime's console (View > Show Console). Thread-safe."""
    print("Gemini Companion: " + text)


def _settings():
    return sublime.load_settings(SETTINGS_FILE)


def _setting(name, default):
    value = _settings().get(name, default)
    return default if value is None else value


def _session_options():
    return {
        "binary": _setting("binary", ""),
        "log_level": _setting("log_level", "info"),
        "log_file": _setting("log_file", ""),
        "env": _setting("env", {}),
        "restart": bool(_setting("restart_on_exit", True)),
        "process_id": os.getpid(),
        "ide_name": "sublimetext",
        "ide_display_name": "Sublime Text",
        "restart_command": "Gemini Companion: Restart",   # its command palette entry
    }


def _find_window(window_id):
    for window in sublime.windows():
        if window.id() == window_id:
            return window
    return None


def _find_view(view_id):
    for window in sublime.windows():
        for view in window.views():
            if view.id() == view_id:
                return view
    return None


def _context_path(view):
    """The file a view shows, if it is a real file the CLI should know of."""
    if view is None or not view.is_valid():
        return None
    settings = view.settings()
    if settings.get("is_widget") or settings.get(DIFF_SETTING) \
            or settings.get(DETACHED_SETTING):
        return None
    if view.element() is not None:     # panels, inputs, other UI elements
        return None
    if view.is_scratch():
        return None
    path = view.file_name()
    if not path or not os.path.isabs(path):
        return None
    return path


def _caret(view, limit):
    """(cursor, selectedText) of the view's primary selection; at most
    ``limit`` characters of the selection are read (the session cuts it to
    the sidecar's byte limit)."""
    selection = view.sel()
    if len(selection) == 0:
        return None, None
    region = selection[0]
    point = region.b
    row, col = view.rowcol(point)
    line_start = view.text_point(row, 0)
    before = view.substr(sublime.Region(line_start, point))
    cursor = positions.cursor(row, col, before)
    selected = None
    if not region.empty():
        begin = region.begin()
        end = min(region.end(), begin + limit)
        selected = view.substr(sublime.Region(begin, end))
    return cursor, selected


def _session_for_diff(view_id):
    for session in _sessions.values():
        if session.diff_path(view_id) is not None:
            return session
    return None


def _check_rename(view):
    """Tell the window's session when a view's file name changed."""
    path = view.file_name()
    old = _view_paths.get(view.id())
    if path:
        _view_paths[view.id()] = path
    if not old or not path or old == path:
        return
    window = view.window()
    session = _sessions.get(window.id()) if window is not None else None
    if session is not None and _context_path(view) is not None:
        session.file_renamed(old, path)


def _sync_folders(window):
    session = _sessions.get(window.id())
    if session is not None:
        session.set_folders(window.folders())


def ensure_session(window, start=True):
    """The window's session, created (and started) if needed."""
    session = _sessions.get(window.id())
    if session is None:
        session = sessionmod.Session(SublimeHost(window.id()), _session_options())
        _sessions[window.id()] = session
        active = window.active_view()
        path = _context_path(active)
        if path is not None:
            _view_paths[active.id()] = path
            session.file_focused(path, *_caret(active, session.selection_limit))
    if start and session.state in (sessionmod.STOPPED, sessionmod.FAILED):
        session.configure(_session_options())
        session.start(window.folders())
    return session


def stop_session(window_id, quiet=False):
    session = _sessions.pop(window_id, None)
    if session is not None:
        session.stop(quiet=quiet)


# ------------------------------------------------------------------------ host

class SublimeHost(object):
    """What a Session needs from Sublime, for one window."""

    def __init__(self, window_id):
        self.window_id = window_id

    def window(self):
        return _find_window(self.window_id)

    def call_soon(self, fn):
        sublime.set_timeout(fn, 0)

    def call_later(self, ms, fn):
        sublime.set_timeout(fn, ms)

    def log(self, text):
        console(text)

    def log_stderr(self, text):
        console("companion: " + sessionmod.format_log_line(text))

    def announce(self, text):
        window = self.window()
        if window is not None:
            window.status_message(text)
        else:
            sublime.status_message(text)

    def report_error(self, text):
        if text in _reported:
            self.announce("Gemini Companion: " + text.splitlines()[0])
            return
        _reported.add(text)
        sublime.error_message("Gemini Companion\n\n" + text)

    def show_state(self, session):
        window = self.window()
        if window is None:
            return
        text = session.describe() if _setting("status_bar", True) else ""
        for view in window.views():
            if text:
                view.set_status(STATUS_KEY, text)
            else:
                view.erase_status(STATUS_KEY)

    def open_diff_view(self, path, new_content, original, title):
        window = self.window()
        if window is None:
            raise RuntimeError("the window is closed")
        first_line = new_content.split("\n", 1)[0][:1024]
        syntax = sublime.find_syntax_for_file(path, first_line)
        view = window.new_file(0, syntax.path if syntax is not None else "")
        settings = view.settings()
        settings.set(DIFF_SETTING, path)
        settings.set(PROPOSAL_SETTING, True)
        settings.set("mini_diff", True)
        settings.set(NEW_FILE_SETTING, original is None)
        view.set_scratch(True)
        view.set_name(title or os.path.basename(path) + " (Gemini proposal)")
        view.run_command("gemini_companion_replace_text", {"text": new_content})
        view.set_reference_document(original if original is not None else "")
        view.clear_undo_stack()
        view.sel().clear()
        view.sel().add(sublime.Region(0, 0))
        _show_diff_bar(view, path, original is None)
        window.focus_view(view)
        if _setting("show_inline_diff", True):
            sublime.set_timeout(lambda: _toggle_inline_diff(view), 50)
        return view.id()

    def diff_view_text(self, handle):
        view = _find_view(handle)
        if view is None or not view.is_valid():
            return None
        return view.substr(sublime.Region(0, view.size()))

    def close_diff_view(self, handle):
        view = _find_view(handle)
        if view is None or not view.is_valid():
            return
        view.erase_phantoms(PHANTOM_KEY)
        view.set_scratch(True)
        # Close after the current command (the accept command runs on this
        # view) has returned.
        sublime.set_timeout(view.close, 0)

    def show_diff_state(self, handle, state):
        view = _find_view(handle)
        if view is None or not view.is_valid():
            return
        if state.get("disk_content") is not None:
            # The "before" side is the file as it is on disk now (also once
            # it is back to what it was: then the original again).
            view.set_reference_document(state.get("disk_content"))
        settings = view.settings()
        path = settings.get(DIFF_SETTING) or ""
        settings.set(STATE_SETTING, state)
        is_new = bool(settings.get(NEW_FILE_SETTING)) and state.get("disk") is None
        _show_diff_bar(view, path, is_new, state)

    def keep_unwritten(self, path, content):
        window = self.window()
        if window is None:
            return
        view = window.new_file()
        view.run_command("gemini_companion_replace_text", {"text": content})
        view.set_name(os.path.basename(path) + " (not written)")
        view.settings().set(UNWRITTEN_SETTING, path)
        view.add_phantom(
            PHANTOM_KEY, sublime.Region(0, 0),
            '<body id="gemini-companion-diff"><div style="padding: 0.3rem">'
            '<b>Nothing was written to %s.</b> This is the text you accepted; '
            'save it yourself if you want it.</div></body>' % html.escape(path),
            sublime.LAYOUT_BLOCK)
        window.focus_view(view)

    def mark_diff_detached(self, handle):
        view = _find_view(handle)
        if view is None or not view.is_valid():
            return
        path = view.settings().get(DIFF_SETTING)
        view.settings().erase(DIFF_SETTING)
        view.settings().set(PROPOSAL_SETTING, False)
        view.settings().set(DETACHED_SETTING, path or True)
        view.erase_phantoms(PHANTOM_KEY)
        view.add_phantom(
            PHANTOM_KEY, sublime.Region(0, 0),
            '<body id="gemini-companion-diff"><div style="padding: 0.3rem">'
            '<b>Gemini CLI is no longer waiting for this proposal</b> (its '
            'companion stopped). Copy what you need, then close this tab.'
            '</div></body>',
            sublime.LAYOUT_BLOCK)

    # -------------------------------------------------- editor tools (source)
    # What the editor tools (gemini_companion/tools.py) ask Sublime Text:
    # its symbol index, the symbols of open views, the LSP package's
    # diagnostics, the open views. Rows and columns as tools.py says.

    def _tool_window(self):
        window = self.window()
        if window is None:
            raise toolsmod.NotAvailable("the Sublime Text window is closed")
        return window

    def tool_text(self, path):
        window = self.window()
        view = window.find_open_file(path) if window is not None else None
        if view is not None and not view.is_loading():
            return view.substr(sublime.Region(0, view.size()))
        try:
            with open(path, encoding="utf-8", errors="replace", newline="") as f:
                return f.read(MAX_TOOL_FILE)
        except (OSError, ValueError):
            return None

    def tool_diagnostics(self, path):
        name = os.path.basename(path) if path else "this window"
        try:
            from LSP.plugin.core.registry import windows as lsp_windows
        except ImportError:
            raise toolsmod.NotAvailable(
                "Sublime Text has no diagnostics for %s: %s" % (name, LSP_INSTALL))
        manager = lsp_windows.lookup(self._tool_window())
        sessions = list(manager.get_sessions()) if manager is not None else []
        if not sessions:
            raise toolsmod.NotAvailable(
                "Sublime Text has no language server running for %s: %s, then open "
                "a file it serves" % (name, LSP_INSTALL))
        found = []
        for lsp_session in sessions:
            try:
                stored = list(lsp_session.diagnostics.items())
            except (AttributeError, TypeError):
                raise toolsmod.NotAvailable(
                    "this version of the LSP package keeps its diagnostics where "
                    "Gemini Companion cannot read them: update the LSP package")
            for (scheme, file_path), diagnostics in stored:
                if scheme != "file" or (path is not None and file_path != path):
                    continue
                found.extend((file_path, d) for d in diagnostics)
        return found

    def _symbol_locations(self, name, in_index, in_open_files):
        """(path, row, col) of SymbolLocations: the open files' own (they
        may have unsaved changes), then the index's for the other files."""
        window = self._tool_window()
        opened = [_location(loc) for loc in in_open_files(window)(name)]
        open_paths = {loc[0] for loc in opened}
        indexed = [_location(loc) for loc in in_index(window)(name)]
        return opened + [loc for loc in indexed if loc[0] not in open_paths]

    def tool_definitions(self, name):
        return self._symbol_locations(name, lambda w: w.lookup_symbol_in_index,
                                      lambda w: w.lookup_symbol_in_open_files)

    def tool_references(self, name):
        return self._symbol_locations(name, lambda w: w.lookup_references_in_index,
                                      lambda w: w.lookup_references_in_open_files)

    def tool_symbols(self, path):
        view = self._tool_window().find_open_file(path)
        if view is None or view.is_loading():
            raise toolsmod.NotAvailable(
                "Sublime Text lists the symbols of open files only, and %s is not "
                "open: open it (openFile) and ask again" % os.path.basename(path))
        out = []
        for symbol in view.symbol_regions():
            row, col = view.rowcol(symbol.region.begin())
            out.append((symbol.name, symbol.kind, row, col))
        return out

    def tool_workspace_symbols(self, query):
        window = self._tool_window()
        found = []
        for lookup in (window.lookup_symbol_in_open_files, window.lookup_symbol_in_index):
            for loc in lookup(query):
                path, row, col = _location(loc)
                found.append((query, getattr(loc, "kind", None), path, row, col))
        needle = query.lower()
        for view in window.views():
            path = _context_path(view)
            if path is None:
                continue
            for symbol in view.symbol_regions():
                if needle in symbol.name.lower():
                    row, col = view.rowcol(symbol.region.begin())
                    found.append((symbol.name, symbol.kind, path, row + 1, col + 1))
        return found

    def tool_open_editors(self):
        window = self._tool_window()
        active = window.active_view()
        out = []
        for view in window.views():
            path = _context_path(view)
            if path is None:
                continue
            item = {"path": path, "active": view == active, "dirty": view.is_dirty()}
            selection = view.sel()
            if len(selection) > 0:
                region = selection[0]
                item["cursor"] = view.rowcol(region.b)
                if not region.empty():
                    begin, end = region.begin(), region.end()
                    item["selection"] = (view.rowcol(begin), view.rowcol(end))
                    item["selected_text"] = view.substr(sublime.Region(
                        begin, min(end, begin + toolsmod.MAX_SELECTED_UTF16)))
            out.append(item)
        return out

    def tool_open_file(self, path, line, end_line):
        window = self._tool_window()
        if line is None:
            window.open_file(path)
            return
        view = window.open_file("%s:%d" % (path, line), sublime.ENCODED_POSITION)
        if view.is_loading():
            _reveal[view.id()] = (line, end_line)
        else:
            _reveal_lines(view, line, end_line)


def _location(loc):
    """(path, row, col) of a SymbolLocation (older builds: a tuple
    (path, display name, (row, col)))."""
    if isinstance(loc, tuple):
        return loc[0], loc[2][0], loc[2][1]
    return loc.path, loc.row, loc.col


def _reveal_lines(view, line, end_line):
    """Put the caret on ``line`` (1-based) or select ``line``..``end_line``."""
    start = view.text_point(line - 1, 0)
    end = view.line(view.text_point(end_line - 1, 0)).end() if end_line else start
    region = sublime.Region(start, end)
    view.sel().clear()
    view.sel().add(region)
    view.show(region)


# What the diff bar says about a proposal's state, in order.
_STATE_NOTES = (
    ("outside", "Outside the workspace"),
    ("orphaned", "Orphaned: its Gemini CLI is gone, accepting writes nothing"),
)


def _state_notes(state):
    notes = [text for key, text in _STATE_NOTES if state.get(key)]
    if state.get("disk") == "changedOnDisk":
        notes.append("Changed on disk: the reference is the file as it is now")
    elif state.get("disk") == "deletedOnDisk":
        notes.append("Deleted on disk: accepting creates it again")
    queued = state.get("queued") or 0
    if queued:
        notes.append("%d more proposal%s queued" % (queued, "" if queued == 1 else "s"))
    return notes


def _show_diff_bar(view, path, is_new_file, state=None):
    state = state or {}
    what = "create" if is_new_file else "change"
    who = " (CLI %s)" % html.escape(state["owner"]) if state.get("owner") else ""
    notes = "".join('<br><span style="color: var(--redish)">%s</span>' % html.escape(n)
                    for n in _state_notes(state))
    message = ""
    if state.get("message"):
        message = "<br><i>%s</i>" % html.escape(state["message"])
    body = (
        '<body id="gemini-companion-diff"><div style="padding: 0.3rem">'
        '<b>Gemini CLI%s proposes to %s</b> %s%s%s<br>'
        'Edit this tab if you like, then '
        '<a href="accept">Accept</a> &nbsp; <a href="reject">Reject</a>'
        ' &nbsp; <a href="inline">Toggle inline diff</a>'
        '</div></body>' % (who, what, html.escape(path), notes, message))
    view.erase_phantoms(PHANTOM_KEY)

    def navigate(href):
        if href == "accept":
            view.run_command("gemini_accept_diff")
        elif href == "reject":
            view.run_command("gemini_reject_diff")
        elif href == "inline":
            _toggle_inline_diff(view)

    view.add_phantom(PHANTOM_KEY, sublime.Region(0, 0), body,
                     sublime.LAYOUT_BLOCK, navigate)


def _toggle_inline_diff(view):
    if not view.is_valid():
        return
    selection = view.sel()
    saved = list(selection)
    selection.clear()
    selection.add(sublime.Region(0, view.size()))
    view.run_command("toggle_inline_diff")
    selection.clear()
    selection.add_all(saved)


# ---------------------------------------------------------------- terminal env

def export_lines(env, platform=None):
    """Shell lines that put ``env`` into a terminal by hand."""
    platform = platform or sublime.platform()
    lines = []
    for name in sorted(env):
        value = str(env[name])
        if platform == "windows":
            lines.append("$env:%s = '%s'" % (name, value.replace("'", "''")))
        else:
            lines.append("export %s=%s" % (name, shlex.quote(value)))
    return "\n".join(lines) + "\n"


def _terminus_installed():
    return any(r.startswith("Packages/Terminus/")
               for r in sublime.find_resources("Terminus.sublime-settings"))


def _terminal_cwd(window, session):
    folders = session.folders
    if folders:
        return folders[0]
    view = window.active_view()
    if view is not None and view.file_name():
        return os.path.dirname(view.file_name())
    return os.path.expanduser("~")


def _copy_env(window, session, why):
    def copy(env):
        if env is None:
            return
        sublime.set_clipboard(export_lines(env))
        window.status_message(
            "Gemini Companion: %scopied the environment for Gemini CLI to the "
            "clipboard; paste it into a terminal in %s, then run gemini"
            % (why, _terminal_cwd(window, session)))
    session.terminal_env(copy)


# -------------------------------------------------------------------- commands

class GeminiStartCommand(sublime_plugin.WindowCommand):
    """Start this window's companion (again, if it failed)."""

    def run(self):
        session = ensure_session(self.window)
        session.when_ready(lambda ok: ok and self.window.status_message(
            "Gemini Companion: ready on port %s" % (session.port,)))


class GeminiRestartCommand(sublime_plugin.WindowCommand):
    def run(self):
        session = ensure_session(self.window, start=False)
        session.configure(_session_options())
        session.set_folders(self.window.folders())
        session.restart()


class GeminiStopCommand(sublime_plugin.WindowCommand):
    def run(self):
        session = _sessions.get(self.window.id())
        if session is not None:
            session.stop()
            self.window.status_message("Gemini Companion: stopped")

    def is_enabled(self):
        session = _sessions.get(self.window.id())
        return session is not None and session.running


class GeminiStatusCommand(sublime_plugin.WindowCommand):
    def run(self):
        session = ensure_session(self.window)
        session.when_ready(lambda ok: self._show(session, ok))

    def _show(self, session, ok):
        if not ok:
            sublime.message_dialog("Gemini Companion\n\nThe companion is not "
                                   "running.\n\n" + (session.last_error or ""))
            return

        def show(result, error):
            if error is not None:
                sublime.message_dialog("Gemini Companion\n\n%s" % (error,))
                return
            lines = [
                "Gemini Companion",
                "",
                "Gemini CLI sessions: %s" % result.get("connectedClients"),
                "Port: %s" % result.get("port"),
                "Discovery file: %s" % (result.get("discoveryFile") or "(none)"),
                "Workspace: %s" % (", ".join(result.get("workspaceFolders") or [])
                                   or "(no folder open)"),
                "Open proposals: %s" % (", ".join(result.get("openDiffs") or [])
                                        or "none"),
                "Companion: %s %s (pid %s)" % (session.binary,
                                              result.get("serverVersion", ""),
                                              session.sidecar_pid),
            ]
            sublime.message_dialog("\n".join(lines))

        session.status_info(show)


def doctor_argv(binary, env, cwd, environ=None):
    """The doctor command for a terminal of this window: the companion's
    terminal environment (``terminal/env``, container rule included) added,
    as the Gemini CLI opened from here gets it. Returns (argv, environment)."""
    environ = dict(os.environ if environ is None else environ)
    environ.update(env or {})
    return [binary, "doctor", "--workspace", cwd], environ


class GeminiDoctorCommand(sublime_plugin.WindowCommand):
    """Show `gemini-ide-companion doctor`: would a Gemini CLI started from
    this window connect, and if not, what to do."""

    def run(self):
        session = ensure_session(self.window)
        session.when_ready(lambda ok: session.terminal_env(lambda env: self._run(session, env)))

    def _run(self, session, env):
        window = self.window
        binary = session.binary
        if not binary:
            sublime.message_dialog("Gemini Companion: Doctor\n\n" + (session.last_error or "No companion binary found."))
            return
        base = dict(session.environ)
        if isinstance(session.extra_env, dict):
            base.update(session.extra_env)  # the companion's own "env" setting
        argv, environ = doctor_argv(binary, env, _terminal_cwd(window, session), environ=base)

        def work():
            try:
                proc = subprocess.run(argv, env=environ, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, timeout=60)
                text = proc.stdout.decode("utf-8", "replace")
            except (OSError, subprocess.SubprocessError) as exc:
                text = "Could not run %s: %s" % (binary, exc)
            sublime.set_timeout(lambda: sublime.message_dialog("Gemini Companion: Doctor\n\n" + text), 0)

        threading.Thread(target=work, name="gemini-companion-doctor", daemon=True).start()


class GeminiOpenTerminalCommand(sublime_plugin.WindowCommand):
    """Run Gemini CLI in Terminus, connected to this window."""

    def run(self):
        session = ensure_session(self.window)
        session.when_ready(lambda ok: self._open(session) if ok else None)

    def _open(self, session):
        window = self.window
        if not _terminus_installed():
            _copy_env(window, session, "Terminus is not installed; ")
            return
        command = _setting("terminal_command", ["gemini"])
        if isinstance(command, str):
            command = [command]
        if not command or not all(isinstance(c, str) for c in command):
            sublime.error_message("Gemini Companion\n\nThe \"terminal_command\" "
                                  "setting must be a list of strings.")
            return
        search = os.environ.get("PATH", os.defpath)
        if shutil.which(command[0], path=search) is None:
            sublime.error_message(
                "Gemini Companion\n\nCould not find %r on PATH. Install Gemini CLI "
                "with:\n\n    %s\n\nor set \"terminal_command\" in "
                "Gemini Companion.sublime-settings." % (command[0], GEMINI_INSTALL))
            return

        def open_terminal(env):
            # The sidecar's terminal/env, asked each time: after folder
            # changes or a restart the variables differ.
            if env is not None:
                window.run_command("terminus_open", {
                    "cmd": command,
                    "cwd": _terminal_cwd(window, session),
                    "env": env,
                    "title": "Gemini CLI",
                    "auto_close": False,
                })
        session.terminal_env(open_terminal)


class GeminiCopyEnvCommand(sublime_plugin.WindowCommand):
    """Copy `export` lines for a terminal outside Sublime Text."""

    def run(self):
        session = ensure_session(self.window)
        session.when_ready(lambda ok: _copy_env(self.window, session, "")
                           if ok else None)


class GeminiAcceptDiffCommand(sublime_plugin.TextCommand):
    def run(self, edit):
        view = self.view
        session = _session_for_diff(view.id())
        if session is None:
            sublime.status_message(
                "Gemini Companion: this tab is not a pending Gemini proposal")
            return
        path = session.diff_path(view.id())
        content = view.substr(sublime.Region(0, view.size()))
        if session.accept_diff(view.id(), content):
            sublime.status_message("Gemini Companion: accepted; Gemini CLI writes %s"
                                   % os.path.basename(path))

    def is_enabled(self):
        return bool(self.view.settings().get(DIFF_SETTING))

    def is_visible(self):
        return self.is_enabled()


class GeminiRejectDiffCommand(sublime_plugin.TextCommand):
    def run(self, edit):
        view = self.view
        session = _session_for_diff(view.id())
        if session is None:
            view.close()
            return
        path = session.diff_path(view.id())
        if session.reject_diff(view.id()):
            sublime.status_message("Gemini Companion: rejected the change to %s"
                                   % os.path.basename(path))

    def is_enabled(self):
        settings = self.view.settings()
        return bool(settings.get(DIFF_SETTING) or settings.get(DETACHED_SETTING))

    def is_visible(self):
        return self.is_enabled()


class GeminiToggleInlineDiffCommand(sublime_plugin.TextCommand):
    def run(self, edit):
        _toggle_inline_diff(self.view)

    def is_enabled(self):
        return bool(self.view.settings().get(DIFF_SETTING))

    def is_visible(self):
        return self.is_enabled()


class GeminiCompanionReplaceTextCommand(sublime_plugin.TextCommand):
    """Internal: replace a view's whole text."""

    def run(self, edit, text=""):
        self.view.replace(edit, sublime.Region(0, self.view.size()), text)

    def is_visible(self):
        return False


# ---------------------------------------------------------------------- events

class GeminiCompanionListener(sublime_plugin.EventListener):

    def on_new_window(self, window):
        if _setting("auto_start", True):
            ensure_session(window)

    def on_pre_close_window(self, window):
        stop_session(window.id())

    def on_load_project(self, window):
        _sync_folders(window)

    def on_post_save_project(self, window):
        _sync_folders(window)

    def on_post_window_command(self, window, command_name, args):
        if window.id() not in _sessions:
            return
        _sync_folders(window)
        for view in window.views():
            _check_rename(view)

    def on_activated(self, view):
        window = view.window()
        if window is None:
            return
        session = _sessions.get(window.id())
        if session is None:
            return
        text = session.describe() if _setting("status_bar", True) else ""
        if text:
            view.set_status(STATUS_KEY, text)
        session.set_folders(window.folders())
        _check_rename(view)
        path = _context_path(view)
        if path is not None:
            session.file_focused(path, *_caret(view, session.selection_limit))

    def on_load(self, view):
        reveal = _reveal.pop(view.id(), None)
        if reveal is not None:
            _reveal_lines(view, *reveal)
        window = view.window()
        if window is None or window.id() not in _sessions:
            return
        _check_rename(view)
        if window.active_view() == view:
            path = _context_path(view)
            if path is not None:
                session = _sessions[window.id()]
                session.file_focused(path, *_caret(view, session.selection_limit))

    def on_post_save(self, view):
        _check_rename(view)

    def on_selection_modified(self, view):
        window = view.window()
        if window is None or window.active_view() != view:
            return
        session = _sessions.get(window.id())
        if session is None:
            return
        path = _context_path(view)
        if path is not None:
            session.selection_changed(path, *_caret(view, session.selection_limit))

    def on_pre_close(self, view):
        window = view.window()
        if window is not None:
            _closing[view.id()] = window.id()

    def on_close(self, view):
        window_id = _closing.pop(view.id(), None)
        path = _view_paths.pop(view.id(), None)
        session = _session_for_diff(view.id())
        if session is not None:
            session.diff_view_closed(view.id())
            return
        if window_id is None or path is None:
            return
        session = _sessions.get(window_id)
        window = _find_window(window_id)
        if session is None or window is None:
            return
        if window.find_open_file(path) is None:
            session.file_closed(path)

    def on_exit(self):
        # Sublime's API is already shut down here: stop the sidecars without
        # touching any window.
        for window_id in list(_sessions):
            stop_session(window_id, quiet=True)


# ------------------------------------------------------------------- lifecycle

def plugin_loaded():
    if _setting("auto_start", True):
        for window in sublime.windows():
            ensure_session(window)


def plugin_unloaded():
    for window_id in list(_sessions):
        window = _find_window(window_id)
        stop_session(window_id)
        if window is not None:
            for view in window.views():
                view.erase_status(STATUS_KEY)

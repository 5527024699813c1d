"""One editor window's companion: sidecar lifecycle, context, diffs.

A ``Session`` owns one sidecar process (through ``link.Link``), restarts it
when it dies, remembers what the user has focused so a new sidecar can be
told at once, and keeps the registry of open diff views.

All of a session's state is touched on the editor's UI thread only: the link
delivers messages on its own threads, and the session hops to the UI thread
through ``host.call_soon`` before it looks at anything. The host is the thin
editor adapter (``plugin.py`` for Sublime Text); it must provide:

    call_soon(fn)                 run fn on the UI thread (thread-safe)
    call_later(ms, fn)            same, after ms milliseconds (thread-safe)
    log(text)                     a line for the editor's console
    announce(text)                a transient message for the user
    report_error(text)            a problem the user must act on
    show_state(session)           refresh the status bar from the session
    open_diff_view(path, new_content, original_content, title) -> handle
                                  show a proposal; raise on failure
    diff_view_text(handle)        the proposal as it is now, or None if gone
    close_diff_view(handle)       close it without asking to save
    mark_diff_detached(handle)    the proposal can no longer be answered
    show_diff_state(handle, state)  (optional) show what happened to a
                                  proposal: state has owner, outside,
                                  notice, queued, orphaned, disk (the
                                  diff/state name or None), disk_content,
                                  message; refresh the view from it
    keep_unwritten(path, content) (optional) open text that was accepted
                                  but not written, for the user to save

Nothing here imports ``sublime``.
"""

import collections
import json
import os
import threading
import time

from . import link as linkmod
from . import locate

STOPPED = "stopped"
STARTING = "starting"
READY = "ready"
RESTARTING = "restarting"
FAILED = "failed"

PROTOCOL_VERSION = 1
INITIALIZE_TIMEOUT = 15.0

# A sidecar that exits this many times within CRASH_WINDOW seconds is not
# restarted again until the user asks.
MAX_CRASHES = 5
CRASH_WINDOW = 60.0

# How many recently focused files a session remembers to tell a restarted
# sidecar about (the CLI itself keeps 10).
REMEMBERED_FILES = 32

# Diff states.
DIFF_OPEN = "open"
DIFF_ACCEPTED = "accepted"
DIFF_REJECTED = "rejected"
DIFF_CLOSED = "closed"          # closed by the sidecar (diff/close)
DIFF_REPLACED = "replaced"      # a newer diff/open for the same file
DIFF_DETACHED = "detached"      # its sidecar went away


# Disk states a proposal's file can be in (diff/state names).
CHANGED_ON_DISK = "changedOnDisk"
DELETED_ON_DISK = "deletedOnDisk"
UNCHANGED_ON_DISK = "unchangedOnDisk"


class DiffRecord(object):
    __slots__ = ("path", "handle", "state", "generation", "diff_id", "owner",
                 "outside", "notice", "queued", "orphaned", "disk",
                 "disk_content", "confirmed", "message")

    def __init__(self, path, handle, generation, params=None):
        params = params or {}
        self.path = path
        self.handle = handle
        self.state = DIFF_OPEN
        self.generation = generation
        diff_id = params.get("diffId")
        self.diff_id = diff_id if isinstance(diff_id, int) and not isinstance(diff_id, bool) else None
        owner = params.get("owner")
        self.owner = owner if isinstance(owner, str) else ""
        self.outside = params.get("outsideWorkspace") is True
        notice = params.get("notice")
        self.notice = notice if isinstance(notice, str) else ""
        queued = params.get("queued")
        self.queued = queued if isinstance(queued, int) and not isinstance(queued, bool) else 0
        self.orphaned = False
        self.disk = None
        self.disk_content = None
        self.confirmed = False
        self.message = ""

    def as_state(self):
        """What the host shows about this proposal."""
        return {
            "diff_id": self.diff_id, "owner": self.owner, "outside": self.outside,
            "notice": self.notice, "queued": self.queued, "orphaned": self.orphaned,
            "disk": self.disk if self.disk != UNCHANGED_ON_DISK else None,
            "disk_content": self.disk_content, "message": self.message,
        }


def _valid_path(value):
    return isinstance(value, str) and value != "" and os.path.isabs(value)


class Session(object):
    """The companion of one editor window."""

    def __init__(self, host, options=None):
        self.host = host
        self.configure(options)

        self.state = STOPPED
        self.last_error = ""
        self.binary = None
        self.port = None
        self.auth_token = None
        self.discovery_file = None
        self.ide_pid = None
        self.server_version = None
        self.sidecar_pid = None
        self.connected_clients = 0
        self.restarts = 0

        self._env = {}
        self._link = None
        self._generation = 0
        self._exits = collections.deque(maxlen=MAX_CRASHES)
        self._folders = []
        self._sent_folders = None
        # Most recently focused last: path -> {"cursor":..., "selectedText":...}
        self._files = collections.OrderedDict()
        self._last_selection = None
        self._diffs = {}
        self._by_handle = {}
        self._sent = {}     # path -> (accepted text, diff id), until answered
        self._waiters = []

    def configure(self, options=None):
        """Take (new) settings; they apply from the next (re)start."""
        options = dict(options or {})
        self.binary_setting = options.get("binary", "")
        self.log_level = options.get("log_level", "")
        self.log_file = options.get("log_file", "")
        self.extra_env = options.get("env", {})
        if self.extra_env is None:
            self.extra_env = {}
        self.environ = options.get("environ")
        if self.environ is None:
            self.environ = dict(os.environ)
        self.process_id = options.get("process_id") or os.getpid()
        self.ide_name = options.get("ide_name", "sublimetext")
        self.ide_display_name = options.get("ide_display_name", "Sublime Text")
        self.restart_on_exit = options.get("restart", True)
        # Sublime Text has no workspace-trust model: report none unless the
        # embedder passes one, so the CLI's own folder-trust prompt decides.
        self.is_trusted = options.get("is_trusted")

    # ------------------------------------------------------------ lifecycle

    @property
    def running(self):
        return self.state in (STARTING, READY, RESTARTING)

    @property
    def env(self):
        """Environment a terminal needs to reach this window's sidecar."""
        return dict(self._env)

    def start(self, folders=None):
        """Start the sidecar (if it is not already running)."""
        if folders is not None:
            self._folders = self._clean_folders(folders)
        if self.state in (STARTING, READY):
            return
        self._exits.clear()
        self._spawn()

    def restart(self):
        """Stop the current sidecar, if any, and start a fresh one."""
        self.stop()
        self._exits.clear()
        self._spawn()

    def stop(self, quiet=False):
        """Stop the sidecar; open diff views stay, detached.

        ``quiet``: the editor is going away; touch none of its UI.
        """
        self._generation += 1
        old = self._link
        self._link = None
        if not quiet:
            self._detach_diffs()
        if old is not None:
            _close_in_background(old)
        self.state = STOPPED
        self.connected_clients = 0
        self._env = {}
        if not quiet:
            self._flush_waiters(False)
            self.host.show_state(self)

    def when_ready(self, callback):
        """Run ``callback(True)`` once the sidecar is ready (at once if it
        is), or ``callback(False)`` if it fails to start or is stopped."""
        if self.state == READY:
            callback(True)
        elif self.state in (STARTING, RESTARTING):
            self._waiters.append(callback)
        else:
            callback(False)

    def _flush_waiters(self, ok):
        waiters, self._waiters = self._waiters, []
        for callback in waiters:
            try:
                callback(ok)
            except Exception as exc:
                self.host.log("a waiting command failed: %r" % (exc,))

    def _argv(self):
        argv = [self.binary, "--stdio"]
        if self.log_level:
            argv += ["--log-level", str(self.log_level)]
        if self.log_file:
            argv += ["--log-file", os.path.expanduser(str(self.log_file))]
        return argv

    def _spawn(self):
        self._generation += 1
        generation = self._generation
        self.connected_clients = 0
        self._env = {}
        self.port = self.discovery_file = self.auth_token = None
        try:
            self.binary = locate.find_binary(self.binary_setting, self.environ)
        except locate.BinaryNotFound as exc:
            self._fail(str(exc), dialog=True)
            return
        env = dict(self.environ)
        if not isinstance(self.extra_env, dict):
            self._fail("The \"env\" setting must be an object of names and "
                       "strings, not %r." % (self.extra_env,), dialog=True)
            return
        bad = [k for k, v in self.extra_env.items()
               if not isinstance(k, str) or not isinstance(v, str)]
        if bad:
            self._fail("The \"env\" setting must map names to strings; "
                       "fix: %s" % ", ".join(repr(k) for k in bad), dialog=True)
            return
        env.update(self.extra_env)
        link = linkmod.Link(
            self._argv(), env=env,
            on_message=lambda m, p, i: self.host.call_soon(
                lambda: self._on_message(generation, m, p, i)),
            on_exit=lambda code: self.host.call_soon(
                lambda: self._on_exit(generation, code)),
            on_log=self._on_sidecar_log)
        try:
            link.start()
        except OSError as exc:
            self._fail("Could not start %s: %s" % (self.binary, exc), dialog=True)
            return
        self._link = link
        self.sidecar_pid = link.pid
        if self.state != RESTARTING:
            self.state = STARTING
        self.host.show_state(self)
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "ide": {"name": self.ide_name, "displayName": self.ide_display_name},
            "processId": self.process_id,
            "workspaceFolders": list(self._folders),
            # This plugin shows diff/state (queued, orphaned, changed on
            # disk, expired, undelivered).
            "capabilities": {"diffStates": True},
        }
        if self.is_trusted is not None:
            params["isTrusted"] = bool(self.is_trusted)
        link.request_async(
            "initialize", params,
            lambda result, error: self.host.call_soon(
                lambda: self._on_initialized(generation, result, error)),
            timeout=INITIALIZE_TIMEOUT)

    def _on_sidecar_log(self, text):
        # Runs on a link thread; the host's log must be thread-safe (print is).
        self.host.log("companion: " + format_log_line(text))

    def _fail(self, message, dialog=False):
        self.state = FAILED
        self.last_error = message
        self.host.log(message)
        if dialog:
            self.host.report_error(message)
        else:
            self.host.announce("Gemini Companion: " + message.splitlines()[0])
        self.host.show_state(self)
        self._flush_waiters(False)

    def _on_initialized(self, generation, result, error):
        if generation != self._generation:
            return
        if isinstance(error, linkmod.LinkClosed):
            return      # it died while starting; _on_exit restarts it
        link = self._link
        if error is not None or not isinstance(result, dict):
            detail = str(error) if error is not None else "unexpected answer %r" % (result,)
            tail = link.stderr_tail()[-3:] if link is not None else []
            if tail:
                detail += "\n" + "\n".join(tail)
            self._link = None
            self._generation += 1
            if link is not None:
                _close_in_background(link)
            self._fail("The companion did not start: " + detail)
            return
        was_restart = self.state == RESTARTING
        self.state = READY
        self.last_error = ""
        self.port = result.get("port")
        self.auth_token = result.get("authToken")
        self.discovery_file = result.get("discoveryFile")
        self.ide_pid = result.get("idePid")
        self.server_version = result.get("serverVersion")
        if isinstance(result.get("pid"), int):
            self.sidecar_pid = result["pid"]
        env = result.get("env")
        self._env = dict(env) if isinstance(env, dict) else {}
        self._sent_folders = list(self._folders)
        self._replay_context()
        if was_restart:
            self.restarts += 1
            self.host.announce("Gemini Companion: restarted the companion (port %s)"
                               % (self.port,))
        self.host.log("companion ready on port %s, discovery file %s"
                      % (self.port, self.discovery_file or "(none)"))
        self.host.show_state(self)
        self._flush_waiters(True)

    def _on_exit(self, generation, code):
        if generation != self._generation:
            return
        link = self._link
        self._link = None
        self.connected_clients = 0
        self._env = {}
        self._detach_diffs()
        tail = link.stderr_tail()[-3:] if link is not None else []
        reason = "the companion exited (code %s)" % (code,)
        if tail:
            self.host.log("companion's last words:\n  " + "\n  ".join(tail))
        if not self.restart_on_exit:
            self._fail(reason.capitalize() + ".")
            return
        now = time.monotonic()
        self._exits.append(now)
        if len(self._exits) >= MAX_CRASHES and now - self._exits[0] < CRASH_WINDOW:
            self._fail("%s; it stopped %d times within a minute, so it was not "
                       "restarted. Run \"Gemini Companion: Restart\" to try again."
                       % (reason.capitalize(), len(self._exits)))
            return
        self.state = RESTARTING
        self.host.announce("Gemini Companion: %s; restarting it" % (reason,))
        self.host.show_state(self)
        delay = int(250 * (2 ** (len(self._exits) - 1)))
        expected = self._generation

        def again():
            if self._generation == expected and self.state == RESTARTING:
                self._spawn()

        self.host.call_later(min(delay, 8000), again)

    # ------------------------------------------------------------- messages

    def _on_message(self, generation, method, params, request_id):
        if generation != self._generation or self._link is None:
            return
        link = self._link
        try:
            if method == "diff/open":
                self._diff_open(link, params, request_id)
            elif method == "diff/close":
                self._diff_close(link, params, request_id)
            elif method == "status":
                self._status(params)
            elif method == "log":
                self._log_message(params)
            elif method == "diff/state":
                self._diff_state(params)
            elif request_id is not None:
                link.respond_error(request_id, linkmod.METHOD_NOT_FOUND,
                                   "method not found: %s" % (method,))
        except linkmod.LinkError:
            pass  # the sidecar is gone; _on_exit deals with it

    def _status(self, params):
        if not isinstance(params, dict):
            return
        count = params.get("connectedClients")
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            self.connected_clients = count
            self.host.show_state(self)

    def _log_message(self, params):
        if not isinstance(params, dict) or not isinstance(params.get("message"), str):
            return
        level = params.get("level", "info")
        self.host.log("%s: %s" % (level, params["message"]))
        self.host.announce("Gemini: " + params["message"])

    def _diff_open(self, link, params, request_id):
        if request_id is None:
            return
        problem = None
        if not isinstance(params, dict):
            problem = "params must be an object"
        elif not _valid_path(params.get("filePath")):
            problem = "filePath must be an absolute path"
        elif not isinstance(params.get("newContent"), str):
            problem = "newContent must be a string"
        elif params.get("originalContent") is not None and \
                not isinstance(params.get("originalContent"), str):
            problem = "originalContent must be a string or null"
        if problem:
            link.respond_error(request_id, linkmod.INVALID_PARAMS, "diff/open: " + problem)
            return
        path = params["filePath"]
        title = params.get("title")
        if not isinstance(title, str):
            title = ""
        old = self._diffs.pop(path, None)
        if old is not None:
            old.state = DIFF_REPLACED
            self._by_handle.pop(old.handle, None)
            self._close_view_quietly(old.handle)
        try:
            handle = self.host.open_diff_view(
                path, params["newContent"], params.get("originalContent"), title)
        except Exception as exc:
            self.host.log("could not open a diff view for %s: %r" % (path, exc))
            link.respond_error(request_id, linkmod.INTERNAL_ERROR,
                               "Sublime Text could not show the diff: %s" % (exc,))
            return
        record = DiffRecord(path, handle, self._generation, params)
        self._diffs[path] = record
        self._by_handle[handle] = record
        if record.owner or record.outside or record.queued:
            self._show_record(record)
        if record.notice:
            self.host.announce("Gemini: " + record.notice)
        link.respond(request_id, {})

    def _reopen(self, path, diff_id):
        """Show again a proposal whose accept the sidecar refused (the file
        changed on disk just before), as the user left it."""
        sent = self._sent.pop(path, None)
        if sent is None or (isinstance(diff_id, int) and sent[1] not in (None, diff_id)):
            return None
        try:
            with open(path, encoding="utf-8", newline="") as f:
                disk = f.read()
        except (OSError, ValueError):
            disk = None
        try:
            handle = self.host.open_diff_view(path, sent[0], disk, os.path.basename(path))
        except Exception as exc:
            self.host.log("could not reopen a diff view for %s: %r" % (path, exc))
            return None
        record = DiffRecord(path, handle, self._generation, {"diffId": diff_id})
        record.disk = CHANGED_ON_DISK if disk is not None else DELETED_ON_DISK
        record.disk_content = disk or ""
        self._diffs[path] = record
        self._by_handle[handle] = record
        return record

    def _show_record(self, record):
        show = getattr(self.host, "show_diff_state", None)
        if show is None:
            return
        try:
            show(record.handle, record.as_state())
        except Exception as exc:
            self.host.log("could not show a diff state: %r" % (exc,))

    def _diff_state(self, params):
        """Something happened to a proposal (see docs/editor-link.md)."""
        if not isinstance(params, dict) or not _valid_path(params.get("filePath")):
            return
        path = params["filePath"]
        state = params.get("state")
        message = params.get("message") if isinstance(params.get("message"), str) else ""
        diff_id = params.get("diffId")
        record = self._diffs.get(path)
        if record is not None and state != "queued" and isinstance(diff_id, int) \
                and record.diff_id is not None and diff_id != record.diff_id:
            record = None   # about another proposal for the same file
        content = params.get("content")
        if state == "queued" and record is not None:
            queued = params.get("queued")
            record.queued = queued if isinstance(queued, int) else record.queued + 1
        elif state == "orphaned" and record is not None:
            record.orphaned = True
        elif state in (CHANGED_ON_DISK, DELETED_ON_DISK, UNCHANGED_ON_DISK) and record is not None:
            record.disk = state
            record.confirmed = False
            disk = params.get("diskContent")
            record.disk_content = disk if isinstance(disk, str) else ""
        elif state == "needsConfirmation":
            if record is None:
                record = self._reopen(path, diff_id)
            if record is not None:
                record.disk = record.disk or CHANGED_ON_DISK
                record.confirmed = True
        elif state in ("undelivered", "expired") and isinstance(content, str):
            keep = getattr(self.host, "keep_unwritten", None)
            if keep is not None:
                try:
                    keep(path, content)
                except Exception as exc:
                    self.host.log("could not keep the unwritten text: %r" % (exc,))
        if state in ("undelivered", "expired"):
            self._sent.pop(path, None)
        if record is not None:
            record.message = message
            self._show_record(record)
        if message:
            self.host.log("diff: " + message)
            self.host.announce("Gemini: " + message)

    def _diff_close(self, link, params, request_id):
        if request_id is None:
            return
        if not isinstance(params, dict) or not _valid_path(params.get("filePath")):
            link.respond_error(request_id, linkmod.INVALID_PARAMS,
                               "diff/close: filePath must be an absolute path")
            return
        record = self._diffs.pop(params["filePath"], None)
        if record is None:
            link.respond(request_id, {"content": None})
            return
        self._by_handle.pop(record.handle, None)
        record.state = DIFF_CLOSED
        try:
            content = self.host.diff_view_text(record.handle)
        except Exception as exc:
            self.host.log("could not read the diff view: %r" % (exc,))
            content = None
        self._close_view_quietly(record.handle)
        link.respond(request_id, {"content": content})

    def _close_view_quietly(self, handle):
        try:
            self.host.close_diff_view(handle)
        except Exception as exc:
            self.host.log("could not close a diff view: %r" % (exc,))

    def _detach_diffs(self):
        records = list(self._diffs.values())
        self._diffs.clear()
        self._by_handle.clear()
        for record in records:
            record.state = DIFF_DETACHED
            try:
                self.host.mark_diff_detached(record.handle)
            except Exception as exc:
                self.host.log("could not mark a diff view: %r" % (exc,))

    # ---------------------------------------------------------- diff answers

    def diff_path(self, handle):
        """The file a live diff view proposes changes to, or None."""
        record = self._by_handle.get(handle)
        return record.path if record is not None else None

    def open_diffs(self):
        return sorted(self._diffs)

    def accept_diff(self, handle, content):
        """The user accepted the proposal shown in ``handle``.

        Sends ``diff/accepted`` with ``content`` (the view's text, user edits
        included) and closes the view. Returns False if the view is not a
        pending proposal (already answered, or its sidecar went away).
        """
        record = self._by_handle.get(handle)
        if record is None:
            return False
        if record.disk in (CHANGED_ON_DISK, DELETED_ON_DISK) and not record.confirmed:
            # Accepting would overwrite a change made on disk (or create a
            # deleted file again): that takes a second, explicit accept.
            record.confirmed = True
            record.message = "%s %s on disk since Gemini proposed this change: " \
                "Accept again to overwrite it with this proposal, or Reject." % (
                    os.path.basename(record.path),
                    "was deleted" if record.disk == DELETED_ON_DISK else "changed")
            self._show_record(record)
            self.host.announce("Gemini: " + record.message)
            return False
        self._by_handle.pop(handle, None)
        self._diffs.pop(record.path, None)
        record.state = DIFF_ACCEPTED
        params = {"filePath": record.path, "content": content}
        if record.diff_id is not None:
            params["diffId"] = record.diff_id
        if record.confirmed:
            params["overDiskChange"] = True
        self._send("diff/accepted", params)
        self._sent[record.path] = (content, record.diff_id)
        self._close_view_quietly(handle)
        return True

    def reject_diff(self, handle, close_view=True):
        """The user rejected the proposal (or closed its view)."""
        record = self._by_handle.pop(handle, None)
        if record is None:
            return False
        self._diffs.pop(record.path, None)
        record.state = DIFF_REJECTED
        params = {"filePath": record.path}
        if record.diff_id is not None:
            params["diffId"] = record.diff_id
        self._send("diff/rejected", params)
        if close_view:
            self._close_view_quietly(handle)
        return True

    def diff_view_closed(self, handle):
        """A diff view went away; unless it was answered, that is a reject."""
        return self.reject_diff(handle, close_view=False)

    # --------------------------------------------------------------- context

    def _send(self, method, params):
        if self.state != READY or self._link is None:
            return False
        try:
            self._link.notify(method, params)
            return True
        except linkmod.LinkError:
            return False

    @staticmethod
    def _clean_folders(folders):
        clean = []
        for folder in folders or []:
            if _valid_path(folder) and folder not in clean:
                clean.append(folder)
        return clean

    def set_folders(self, folders):
        """The window's folders; tells the sidecar when they changed."""
        folders = self._clean_folders(folders)
        self._folders = folders
        if self.state == READY and folders != self._sent_folders:
            if self._send("workspace/foldersChanged", {"workspaceFolders": folders}):
                self._sent_folders = list(folders)
                if "GEMINI_CLI_IDE_WORKSPACE_PATH" in self._env:
                    self._env["GEMINI_CLI_IDE_WORKSPACE_PATH"] = os.pathsep.join(folders)

    @property
    def folders(self):
        return list(self._folders)

    def _remember(self, path, cursor, selected):
        entry = self._files.pop(path, None) or {}
        entry["cursor"] = cursor
        entry["selectedText"] = selected
        self._files[path] = entry
        while len(self._files) > REMEMBERED_FILES:
            self._files.popitem(last=False)

    @staticmethod
    def _context_params(path, cursor, selected):
        params = {"path": path}
        if cursor is not None:
            params["cursor"] = cursor
        if selected:
            params["selectedText"] = selected
        return params

    def file_focused(self, path, cursor=None, selected=None):
        if not _valid_path(path):
            return
        self._remember(path, cursor, selected)
        self._last_selection = (path, cursor, selected)
        self._send("context/fileFocused", self._context_params(path, cursor, selected))

    def selection_changed(self, path, cursor, selected=None):
        if not _valid_path(path) or cursor is None:
            return
        if self._last_selection == (path, cursor, selected):
            return
        self._remember(path, cursor, selected)
        self._last_selection = (path, cursor, selected)
        self._send("context/selectionChanged",
                   self._context_params(path, cursor, selected))

    def file_closed(self, path):
        if not _valid_path(path):
            return
        self._files.pop(path, None)
        if self._last_selection and self._last_selection[0] == path:
            self._last_selection = None
        self._send("context/fileClosed", {"path": path})

    def file_renamed(self, old_path, new_path):
        if not (_valid_path(old_path) and _valid_path(new_path)) or old_path == new_path:
            return
        entry = self._files.pop(old_path, None)
        if entry is not None:
            self._files[new_path] = entry
        if self._last_selection and self._last_selection[0] == old_path:
            self._last_selection = (new_path,) + self._last_selection[1:]
        self._send("context/fileRenamed", {"oldPath": old_path, "newPath": new_path})

    def tracked_files(self):
        """Paths the session knows, most recently focused last."""
        return list(self._files)

    def _replay_context(self):
        """Tell a fresh sidecar what is open, oldest first, the active file
        last with its cursor and selection."""
        paths = list(self._files)
        for index, path in enumerate(paths):
            if index == len(paths) - 1:
                entry = self._files[path]
                params = self._context_params(path, entry.get("cursor"),
                                              entry.get("selectedText"))
            else:
                params = {"path": path}
            self._send("context/fileFocused", params)

    # ---------------------------------------------------------------- status

    def status_info(self, callback):
        """Ask the sidecar for ``status/get``; ``callback(result, error)`` runs
        on the UI thread."""
        link = self._link
        if self.state != READY or link is None:
            callback(None, linkmod.LinkClosed("the companion is not running"))
            return
        link.request_async(
            "status/get", None,
            lambda result, error: self.host.call_soon(lambda: callback(result, error)),
            timeout=5.0)

    def describe(self):
        """One line for the status bar."""
        if self.state == READY:
            if self.connected_clients == 1:
                return "Gemini CLI connected"
            if self.connected_clients > 1:
                return "Gemini CLI connected (%d sessions)" % self.connected_clients
            return "Gemini: waiting for CLI"
        if self.state == STARTING:
            return "Gemini: starting"
        if self.state == RESTARTING:
            return "Gemini: restarting"
        if self.state == FAILED:
            return "Gemini: stopped (see console)"
        return ""


def format_log_line(text):
    """Make one of the sidecar's JSON log lines readable in a console."""
    try:
        record = json.loads(text)
    except ValueError:
        return text
    if not isinstance(record, dict) or not isinstance(record.get("message"), str):
        return text
    level = record.pop("level", "")
    message = record.pop("message")
    record.pop("time", None)
    extras = " ".join(
        "%s=%s" % (k, v if isinstance(v, str) else json.dumps(v))
        for k, v in sorted(record.items()))
    line = "%s: %s" % (level, message) if level else message
    return line + (" (%s)" % extras if extras else "")


def _close_in_background(link):
    t = threading.Thread(target=link.close, name="gemini-companion-close")
    t.daemon = True
    t.start()

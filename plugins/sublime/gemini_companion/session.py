"""One editor window's companion: context and diff views, over the link.

A ``Session`` owns one ``link.Link`` (the sidecar process and everything about
it), remembers what the user has focused so a restarted sidecar is told at
once, clips selections per the sidecar's ``policy.limits``, and keeps the
registry of open diff views. It uses the link only through ``request``,
``notify`` and ``on``; the link runs every handler on the editor's UI thread.

The host is the thin editor adapter (``plugin.py`` for Sublime Text); besides
what ``link.Link`` needs (call_soon, call_later, log, log_stderr, announce,
report_error) it provides:

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

from . import link as linkmod
from . import tools as toolsmod
from .link import STOPPED, STARTING, READY, RESTARTING, FAILED  # noqa: F401

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
        # A host that knows the editor's symbols answers the editor tools.
        self._offers = toolsmod.CAPABILITIES if hasattr(host, "tool_text") else {}
        self.link = linkmod.Link(host, self._with_offers(options))
        self._generation = 0
        self._folders = []
        self._sent_folders = None
        # Most recently focused last: path -> {"cursor":..., "selectedText":...}
        self._files = collections.OrderedDict()
        self._last_selection = None
        self._diffs = {}
        self._by_handle = {}
        self._sent = {}     # path -> (accepted text, diff id), until answered
        link = self.link
        link.on("diff/open", self._diff_open)
        link.on("diff/close", self._diff_close)
        link.on("diff/state", self._diff_state)
        link.on("@ready", self._on_ready)
        link.on("@exit", self._on_exit)
        link.on("@state", lambda: self.host.show_state(self))
        self.tools = toolsmod.Tools(link, host) if self._offers else None

    # ------------------------------------------------------------ lifecycle

    def configure(self, options=None):
        """Take (new) settings; they apply from the next (re)start."""
        self.link.configure(self._with_offers(options))

    def _with_offers(self, options):
        return dict(options or {}, capabilities=dict(self._offers))

    state = property(lambda self: self.link.state)
    last_error = property(lambda self: self.link.last_error)
    binary = property(lambda self: self.link.binary)
    environ = property(lambda self: self.link.environ)
    extra_env = property(lambda self: self.link.extra_env)
    sidecar_pid = property(lambda self: self.link.pid)
    connected_clients = property(lambda self: self.link.connected_clients)
    port = property(lambda self: self.link.info.get("port"))
    auth_token = property(lambda self: self.link.info.get("authToken"))
    discovery_file = property(lambda self: self.link.info.get("discoveryFile"))
    server_version = property(lambda self: self.link.info.get("serverVersion"))

    @property
    def running(self):
        return self.state in (STARTING, READY, RESTARTING)

    @property
    def env(self):
        """The last environment the sidecar gave for terminals (initialize,
        workspace/envChanged, terminal/env)."""
        return dict(self.link.env)

    @property
    def selection_limit(self):
        """How many bytes of UTF-8 of a selection to send (policy.limits)."""
        return self.link.limit("maxSelectionBytes")

    def terminal_env(self, callback):
        """``callback(env)`` with the sidecar's ``terminal/env`` for a terminal
        opened now, or None when the companion is not running."""
        self.link.terminal_env(callback)

    def start(self, folders=None):
        """Start the sidecar (if it is not already running)."""
        if folders is not None:
            self._folders = self._clean_folders(folders)
        self.link.start(self._folders)

    def restart(self):
        """Stop the current sidecar, if any, and start a fresh one."""
        self.link.folders = list(self._folders)
        self.link.restart()

    def stop(self, quiet=False):
        """Stop the sidecar; open diff views stay, detached.

        ``quiet``: the editor is going away; touch none of its UI.
        """
        self.link.stop(quiet)

    def when_ready(self, callback):
        """Run ``callback(True)`` once the sidecar is ready (at once if it
        is), or ``callback(False)`` if it fails to start or is stopped."""
        self.link.when_ready(callback)

    def _on_ready(self, result):
        self._generation += 1
        self._sent_folders = list(self.link.folders)
        self._replay_context()

    def _on_exit(self):
        self._generation += 1
        self._detach_diffs()

    # ------------------------------------------------------------- messages

    def _diff_open(self, params):
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
            raise linkmod.LinkError("diff/open: " + problem, linkmod.INVALID_PARAMS)
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
            raise linkmod.LinkError("Sublime Text could not show the diff: %s" % (exc,),
                                    linkmod.INTERNAL_ERROR)
        record = DiffRecord(path, handle, self._generation, params)
        self._diffs[path] = record
        self._by_handle[handle] = record
        if record.owner or record.outside or record.queued:
            self._show_record(record)
        if record.notice:
            self.host.announce(record.notice)
        return {}

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
            self.host.announce(message)

    def _diff_close(self, params):
        if not isinstance(params, dict) or not _valid_path(params.get("filePath")):
            raise linkmod.LinkError("diff/close: filePath must be an absolute path",
                                    linkmod.INVALID_PARAMS)
        record = self._diffs.pop(params["filePath"], None)
        if record is None:
            return {"content": None}
        self._by_handle.pop(record.handle, None)
        record.state = DIFF_CLOSED
        try:
            content = self.host.diff_view_text(record.handle)
        except Exception as exc:
            self.host.log("could not read the diff view: %r" % (exc,))
            content = None
        self._close_view_quietly(record.handle)
        return {"content": content}

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
        return self.link.notify(method, params)

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
        self._folders = self.link.folders = folders
        if self.state == READY and folders != self._sent_folders:
            if self._send("workspace/foldersChanged", {"workspaceFolders": folders}):
                self._sent_folders = list(folders)

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
        selected = clip_utf8(selected, self.selection_limit)
        self._remember(path, cursor, selected)
        self._last_selection = (path, cursor, selected)
        self._send("context/fileFocused", self._context_params(path, cursor, selected))

    def selection_changed(self, path, cursor, selected=None):
        if not _valid_path(path) or cursor is None:
            return
        selected = clip_utf8(selected, self.selection_limit)
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
        self.link.request("status/get", None, callback, timeout_ms=5000)

    def describe(self):
        """One line for the status bar: the sidecar's status text as is once
        it has sent one, else what the companion is doing."""
        if self.state == READY:
            return self.link.status_text or "Gemini: ready"
        if self.state == STARTING:
            return "Gemini: starting"
        if self.state == RESTARTING:
            return "Gemini: restarting"
        if self.state == FAILED:
            return "Gemini: stopped (see console)"
        return ""


def clip_utf8(text, limit):
    """``text`` cut to at most ``limit`` bytes of UTF-8, whole characters."""
    if text is None or len(text) * 4 <= limit:
        return text
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


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

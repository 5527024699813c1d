"""A small stand-in for Sublime Text 4's ``sublime`` module, for tests.

It implements only what plugin.py calls, and behaves as Sublime's API
reference documents it: regions and selections, views holding real text
(``rowcol`` counts code points, as Sublime does), settings, phantoms,
reference documents, scratch views, windows with folders and views, and
``set_timeout`` callbacks that run on a simulated UI loop.

The loop: ``set_timeout`` may be called from any thread; callbacks run only
when a test calls ``pump()``, on the test's thread, which plays Sublime's UI
(main) thread. Events Sublime would send to plugins (``on_activated`` after a
focus change, ``on_close`` after a close, ...) are queued on the same loop,
because Sublime delivers them after the plugin's current callback returns.

Not Sublime behaviour, but checks for the tests: calls to View and Window
methods from any thread but the UI thread are recorded in
``state.thread_violations``, and exceptions raised by plugin callbacks are
recorded in ``state.errors`` (Sublime would print them to its console).
"""

import heapq
import itertools
import os
import re
import threading
import time
import traceback

# ------------------------------------------------------------------ constants

LAYOUT_INLINE = 0
LAYOUT_BELOW = 1
LAYOUT_BLOCK = 2

HIDDEN = 256
PERSISTENT = 16
DRAW_NO_FILL = 32
DRAW_NO_OUTLINE = 512

DIALOG_CANCEL = 0
DIALOG_YES = 1
DIALOG_NO = 2

ENCODED_POSITION = 1
TRANSIENT = 4
FORCE_GROUP = 8

KIND_ID_AMBIGUOUS = 0
KIND_ID_TYPE = 2
KIND_ID_FUNCTION = 3
KIND_ID_VARIABLE = 7
SYMBOL_SOURCE_ANY = 0
SYMBOL_SOURCE_INDEX = 1
SYMBOL_SOURCE_OPEN_FILES = 2
SYMBOL_TYPE_ANY = 0
SYMBOL_TYPE_DEFINITION = 1
SYMBOL_TYPE_REFERENCE = 2


# ---------------------------------------------------------------- test state

class _State(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.lock = threading.Condition()
        self.queue = []            # heap of (due, seq, fn)
        self.seq = itertools.count()
        self.ui_thread = threading.current_thread()
        self.windows = []
        self.active_window_id = None
        self.settings = {}
        self.status_messages = []
        self.error_messages = []
        self.message_dialogs = []
        self.clipboard = ""
        self.resources = []
        self.thread_violations = []
        self.errors = []
        self.platform = "linux"
        self.listeners = []        # set by sublime_plugin


state = _State()
_ids = itertools.count(1)


def _check_thread(what):
    if threading.current_thread() is not state.ui_thread:
        state.thread_violations.append(
            "%s called on thread %s" % (what, threading.current_thread().name))


def _post(fn):
    """Queue ``fn`` on the UI loop (internal: event delivery)."""
    with state.lock:
        heapq.heappush(state.queue, (time.monotonic(), next(state.seq), fn))
        state.lock.notify_all()


def _dispatch(event, *args):
    """Queue an event for every registered listener that handles it."""
    def deliver():
        for listener in list(state.listeners):
            method = getattr(listener, event, None)
            if method is not None:
                _run_guarded(method, *args)
    _post(deliver)


def _run_guarded(fn, *args):
    try:
        return fn(*args)
    except Exception:
        state.errors.append(traceback.format_exc())
        return None


def pump(timeout=0.0):
    """Run due UI callbacks on the calling (UI) thread.

    Waits up to ``timeout`` seconds for the first callback to become due.
    Returns the number of callbacks run.
    """
    state.ui_thread = threading.current_thread()
    deadline = time.monotonic() + timeout
    ran = 0
    while True:
        with state.lock:
            now = time.monotonic()
            if state.queue and state.queue[0][0] <= now:
                _, _, fn = heapq.heappop(state.queue)
            else:
                if ran or now >= deadline:
                    return ran
                wait = deadline - now
                if state.queue:
                    wait = min(wait, state.queue[0][0] - now)
                state.lock.wait(max(wait, 0.0))
                continue
        _run_guarded(fn)
        ran += 1


def pending_callbacks():
    with state.lock:
        return len(state.queue)


def run_until(predicate, timeout=10.0, step=0.05):
    """Pump the UI loop until ``predicate()`` is true; False on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return bool(predicate())
        pump(min(step, remaining))


# -------------------------------------------------------------------- regions

class Region(object):
    __slots__ = ("a", "b", "xpos")

    def __init__(self, a, b=None, xpos=-1):
        if b is None:
            b = a
        self.a = int(a)
        self.b = int(b)
        self.xpos = xpos

    def __iter__(self):
        return iter((self.a, self.b))

    def __len__(self):
        return self.size()

    def __eq__(self, rhs):
        return isinstance(rhs, Region) and self.a == rhs.a and self.b == rhs.b

    def __hash__(self):
        return hash((self.a, self.b))

    def __lt__(self, rhs):
        lhs_begin, rhs_begin = self.begin(), rhs.begin()
        if lhs_begin == rhs_begin:
            return self.end() < rhs.end()
        return lhs_begin < rhs_begin

    def __repr__(self):
        return "Region(%d, %d)" % (self.a, self.b)

    def to_tuple(self):
        return (self.a, self.b)

    def empty(self):
        return self.a == self.b

    def begin(self):
        return min(self.a, self.b)

    def end(self):
        return max(self.a, self.b)

    def size(self):
        return abs(self.a - self.b)

    def contains(self, x):
        if isinstance(x, Region):
            return x.begin() >= self.begin() and x.end() <= self.end()
        return self.begin() <= x <= self.end()

    def cover(self, rhs):
        return Region(min(self.begin(), rhs.begin()), max(self.end(), rhs.end()))

    def intersects(self, rhs):
        return self.begin() < rhs.end() and rhs.begin() < self.end()


class Selection(object):
    """A view's selection: sorted, non-overlapping regions."""

    def __init__(self, view):
        self._view = view
        self._regions = []

    def __iter__(self):
        return iter(list(self._regions))

    def __len__(self):
        return len(self._regions)

    def __getitem__(self, index):
        return self._regions[index]

    def __eq__(self, rhs):
        return list(self) == list(rhs)

    def __repr__(self):
        return "Selection(%r)" % (self._regions,)

    def is_valid(self):
        return self._view.is_valid()

    def clear(self):
        self._regions = []

    def add(self, x):
        if not isinstance(x, Region):
            x = Region(x)
        keep = []
        for r in self._regions:
            touching = (r.intersects(x) or r.to_tuple() == x.to_tuple()
                        or (x.empty() and r.begin() < x.a < r.end())
                        or (r.empty() and x.begin() < r.a < x.end()))
            if touching:
                cov = r.cover(x)
                x = Region(cov.a, cov.b) if x.a <= x.b else Region(cov.b, cov.a)
            else:
                keep.append(r)
        keep.append(x)
        keep.sort()
        self._regions = keep

    def add_all(self, regions):
        for r in regions:
            self.add(r)

    def contains(self, region):
        return any(r.contains(region) for r in self._regions)

    def _clamp(self, size):
        self._regions = [Region(min(r.a, size), min(r.b, size)) for r in self._regions]


# ------------------------------------------------------------------- settings

class Settings(object):
    def __init__(self, values=None):
        self._values = dict(values or {})
        self._callbacks = {}

    def get(self, key, default=None):
        return self._values.get(key, default)

    def has(self, key):
        return key in self._values

    def set(self, key, value):
        self._values[key] = value
        for cb in list(self._callbacks.values()):
            cb()

    def erase(self, key):
        self._values.pop(key, None)

    def to_dict(self):
        return dict(self._values)

    def add_on_change(self, tag, callback):
        self._callbacks[tag] = callback

    def clear_on_change(self, tag):
        self._callbacks.pop(tag, None)

    def __getitem__(self, key):
        return self._values[key]

    def __contains__(self, key):
        return key in self._values


def load_settings(base_name):
    if base_name not in state.settings:
        state.settings[base_name] = Settings()
    return state.settings[base_name]


# ---------------------------------------------------------------------- syntax

class Syntax(object):
    def __init__(self, path, name, hidden=False, scope="text.plain"):
        self.path = path
        self.name = name
        self.hidden = hidden
        self.scope = scope

    def __eq__(self, rhs):
        return isinstance(rhs, Syntax) and self.path == rhs.path

    def __hash__(self):
        return hash(self.path)

    def __repr__(self):
        return "Syntax(%r)" % (self.path,)


_SYNTAXES = {
    ".py": Syntax("Packages/Python/Python.sublime-syntax", "Python", scope="source.python"),
    ".go": Syntax("Packages/Go/Go.sublime-syntax", "Go", scope="source.go"),
    ".md": Syntax("Packages/Markdown/Markdown.sublime-syntax", "Markdown",
                  scope="text.html.markdown"),
}
PLAIN_TEXT = Syntax("Packages/Text/Plain text.tmLanguage", "Plain Text")


def find_syntax_for_file(path, first_line=""):
    if not isinstance(first_line, str):
        raise TypeError("a str is required for first_line")
    if first_line.startswith("#!") and "python" in first_line:
        return _SYNTAXES[".py"]
    return _SYNTAXES.get(os.path.splitext(path)[1].lower(), PLAIN_TEXT)


# ----------------------------------------------------------------------- edit

class Edit(object):
    def __init__(self, view):
        self.view = view
        self.valid = True

    def __repr__(self):
        return "Edit(%r)" % (self.view,)


# -------------------------------------------------------------------- symbols
#
# Sublime Text indexes the symbols of a project's files (and of open views)
# with rules each syntax gives: definitions (functions, types, classes) and
# references (calls). The stand-in does the same for Go and Python with a few
# line rules, enough for the symbols the tests use. Rows and columns are
# 1-based in SymbolLocation, columns counted in characters (code points) as
# everywhere in Sublime's API; SymbolRegion regions are character offsets.

class SymbolRegion(object):
    __slots__ = ["name", "region", "syntax", "type", "kind"]

    def __init__(self, name, region, syntax, type, kind):
        self.name, self.region, self.syntax, self.type, self.kind = name, region, syntax, type, kind

    def __repr__(self):
        return "SymbolRegion(%r, %r)" % (self.name, self.region)


class SymbolLocation(object):
    __slots__ = ["path", "display_name", "row", "col", "syntax", "type", "kind"]

    def __init__(self, path, display_name, row, col, syntax, type, kind):
        self.path, self.display_name, self.row, self.col = path, display_name, row, col
        self.syntax, self.type, self.kind = syntax, type, kind

    def __repr__(self):
        return "SymbolLocation(%r, row=%r, col=%r)" % (self.path, self.row, self.col)


_KIND_FUNCTION = (KIND_ID_FUNCTION, "f", "Function")
_KIND_METHOD = (KIND_ID_FUNCTION, "m", "Method")
_KIND_TYPE = (KIND_ID_TYPE, "t", "Type")
_KIND_CLASS = (KIND_ID_TYPE, "c", "Class")
_DEFINITIONS = {
    ".go": [(re.compile(r"^\s*func\s+\([^)]*\)\s*(\w+)"), _KIND_METHOD),
            (re.compile(r"^\s*func\s+(\w+)"), _KIND_FUNCTION),
            (re.compile(r"^\s*type\s+(\w+)"), _KIND_TYPE)],
    ".py": [(re.compile(r"^\s*def\s+(\w+)"), _KIND_FUNCTION),
            (re.compile(r"^\s*class\s+(\w+)"), _KIND_CLASS)],
}
_CALL = re.compile(r"(\w+)\s*\(")
_KEYWORDS = {"func", "if", "for", "switch", "return", "def", "class", "print", "while"}


def _scan(path, text):
    """[(name, offset, type, kind)] of the symbols in ``text``."""
    rules = _DEFINITIONS.get(os.path.splitext(path or "")[1])
    if not rules:
        return []
    found, offset = [], 0
    for line in text.split("\n"):
        defined = None
        for rule, kind in rules:
            m = rule.match(line)
            if m:
                defined = m.start(1)
                found.append((m.group(1), offset + m.start(1), SYMBOL_TYPE_DEFINITION, kind))
                break
        for m in _CALL.finditer(line):
            if m.start(1) != defined and m.group(1) not in _KEYWORDS:
                found.append((m.group(1), offset + m.start(1), SYMBOL_TYPE_REFERENCE, _KIND_FUNCTION))
        offset += len(line) + 1
    return found


def _locations(path, display, text, name, type):
    out = []
    for symbol, offset, t, kind in _scan(path, text):
        if symbol == name and t == type:
            before = text[:offset]
            row = before.count("\n") + 1
            col = offset - (before.rfind("\n") + 1) + 1
            out.append(SymbolLocation(path, display, row, col, None, t, kind))
    return out


# ----------------------------------------------------------------------- views

class View(object):
    def __init__(self, window, file_name=None, text="", element=None):
        self._id = next(_ids)
        self._buffer_id = next(_ids)
        self._window = window
        self._file_name = file_name
        self._text = text
        self._name = ""
        self._scratch = False
        self._read_only = False
        self._saved_text = text
        self._valid = True
        self._element = element
        self._settings = Settings({"syntax": PLAIN_TEXT.path})
        self._sel = Selection(self)
        self._sel.add(Region(0))
        self._status = {}
        self._phantoms = {}        # id -> (key, region, content, layout, on_navigate)
        self._regions = {}
        self.reference_document = None
        self.undo_cleared = False
        self.commands_run = []     # built-in commands this fake does not implement
        self.close_prompts = []    # "save changes?" prompts Sublime would show

    # identity
    def id(self):
        return self._id

    def buffer_id(self):
        return self._buffer_id

    def __eq__(self, rhs):
        return isinstance(rhs, View) and self._id == rhs._id

    def __ne__(self, rhs):
        return not self.__eq__(rhs)

    def __hash__(self):
        return self._id

    def __bool__(self):
        return self._valid

    def __repr__(self):
        return "View(%d)" % (self._id,)

    def is_valid(self):
        return self._valid

    def is_primary(self):
        return True

    def element(self):
        _check_thread("View.element")
        return self._element

    def window(self):
        _check_thread("View.window")
        return self._window if self._valid else None

    def file_name(self):
        _check_thread("View.file_name")
        return self._file_name

    def retarget(self, new_fname):
        _check_thread("View.retarget")
        self._file_name = new_fname

    def name(self):
        return self._name

    def set_name(self, name):
        _check_thread("View.set_name")
        self._name = name

    def is_loading(self):
        return False

    def is_scratch(self):
        return self._scratch

    def set_scratch(self, scratch):
        _check_thread("View.set_scratch")
        self._scratch = bool(scratch)

    def is_dirty(self):
        return not self._scratch and self._text != self._saved_text

    def is_read_only(self):
        return self._read_only

    def set_read_only(self, read_only):
        _check_thread("View.set_read_only")
        self._read_only = bool(read_only)

    def settings(self):
        return self._settings

    def assign_syntax(self, syntax):
        _check_thread("View.assign_syntax")
        if isinstance(syntax, Syntax):
            syntax = syntax.path
        self._settings.set("syntax", syntax)

    def syntax(self):
        path = self._settings.get("syntax")
        for s in list(_SYNTAXES.values()) + [PLAIN_TEXT]:
            if s.path == path:
                return s
        return None

    # text
    def size(self):
        return len(self._text)

    def substr(self, x):
        if isinstance(x, Region):
            return self._text[x.begin():x.end()]
        if 0 <= x < len(self._text):
            return self._text[x]
        return "\x00"

    def sel(self):
        return self._sel

    def _check_edit(self, edit):
        if not isinstance(edit, Edit) or not edit.valid or edit.view != self:
            raise ValueError("Edit objects may not be used after the TextCommand's "
                             "run method has returned")
        if self._read_only:
            return False
        return True

    def insert(self, edit, pt, text):
        _check_thread("View.insert")
        if not self._check_edit(edit):
            return 0
        self._text = self._text[:pt] + text + self._text[pt:]
        self._sel._clamp(len(self._text))
        return len(text)

    def erase(self, edit, region):
        _check_thread("View.erase")
        if self._check_edit(edit):
            self._text = self._text[:region.begin()] + self._text[region.end():]
            self._sel._clamp(len(self._text))

    def replace(self, edit, region, text):
        _check_thread("View.replace")
        if self._check_edit(edit):
            self._text = self._text[:region.begin()] + text + self._text[region.end():]
            self._sel._clamp(len(self._text))

    def rowcol(self, tp):
        tp = max(0, min(tp, len(self._text)))
        before = self._text[:tp]
        row = before.count("\n")
        col = tp - (before.rfind("\n") + 1)
        return (row, col)

    def text_point(self, row, col, clamp_column=False):
        lines = self._text.split("\n")
        if row >= len(lines):
            return len(self._text)
        start = sum(len(l) + 1 for l in lines[:row])
        if clamp_column:
            col = min(col, len(lines[row]))
        return start + col

    def line(self, x):
        if isinstance(x, Region):
            begin, end = x.begin(), x.end()
        else:
            begin = end = x
        start = self._text.rfind("\n", 0, begin) + 1
        stop = self._text.find("\n", end)
        if stop < 0:
            stop = len(self._text)
        return Region(start, stop)

    def full_line(self, x):
        r = self.line(x)
        return Region(r.a, min(r.b + 1, len(self._text)))

    def show(self, x, show_surrounds=True, keep_to_left=False, animate=True):
        _check_thread("View.show")
        self.shown = x

    def symbol_regions(self):
        _check_thread("View.symbol_regions")
        return [SymbolRegion(name, Region(offset, offset + len(name)), None, t, kind)
                for name, offset, t, kind in _scan(self._file_name, self._text)
                if t == SYMBOL_TYPE_DEFINITION]

    # diff
    def set_reference_document(self, reference):
        _check_thread("View.set_reference_document")
        if not isinstance(reference, str):
            raise TypeError("reference must be a str")
        self.reference_document = reference

    def reset_reference_document(self):
        self.reference_document = None

    def clear_undo_stack(self):
        _check_thread("View.clear_undo_stack")
        self.undo_cleared = True

    # status, phantoms, regions
    def set_status(self, key, value):
        _check_thread("View.set_status")
        self._status[key] = value

    def get_status(self, key):
        return self._status.get(key, "")

    def erase_status(self, key):
        _check_thread("View.erase_status")
        self._status.pop(key, None)

    def add_phantom(self, key, region, content, layout, on_navigate=None):
        _check_thread("View.add_phantom")
        pid = next(_ids)
        self._phantoms[pid] = (key, region, content, layout, on_navigate)
        return pid

    def erase_phantoms(self, key):
        _check_thread("View.erase_phantoms")
        for pid in [p for p, v in self._phantoms.items() if v[0] == key]:
            del self._phantoms[pid]

    def erase_phantom_by_id(self, pid):
        self._phantoms.pop(pid, None)

    def phantoms(self, key=None):
        """Test helper: (content, layout, on_navigate) of the view's phantoms."""
        return [(v[2], v[3], v[4]) for v in self._phantoms.values()
                if key is None or v[0] == key]

    def add_regions(self, key, regions, scope="", icon="", flags=0, annotations=None,
                    annotation_color="", on_navigate=None, on_close=None):
        _check_thread("View.add_regions")
        self._regions[key] = (list(regions), annotations or [])

    def get_regions(self, key):
        return list(self._regions.get(key, ([], []))[0])

    def erase_regions(self, key):
        self._regions.pop(key, None)

    # commands
    def run_command(self, cmd, args=None):
        _check_thread("View.run_command")
        import sublime_plugin
        cls = sublime_plugin._find_command(cmd, "text")
        if cls is None:
            self.commands_run.append((cmd, args))
            return
        instance = cls(self)
        args = dict(args or {})
        if not _run_guarded(lambda: instance.is_enabled(**args)):
            return
        edit = Edit(self)
        try:
            _run_guarded(lambda: instance.run(edit, **args))
        finally:
            edit.valid = False

    def close(self, on_close=None):
        _check_thread("View.close")
        if not self._valid:
            return False
        if self.is_dirty():
            # Sublime would ask "save changes?"; record it and close anyway.
            self.close_prompts.append(self._name or self._file_name)
        window = self._window
        _dispatch("on_pre_close", self)
        if window is not None:
            window._remove(self)

        def finish():
            self._valid = False
            for listener in list(state.listeners):
                method = getattr(listener, "on_close", None)
                if method is not None:
                    _run_guarded(method, self)
            if on_close is not None:
                on_close(True)
        _post(finish)
        return True

    # test helpers: what a user does
    def user_select(self, *regions):
        """The user moves the caret / selects; Sublime sends on_selection_modified."""
        self._sel.clear()
        for r in regions:
            self._sel.add(r if isinstance(r, Region) else Region(r))
        _dispatch("on_selection_modified", self)

    def user_type(self, text, at=None):
        """The user types ``text`` at ``at`` (default: the caret)."""
        pt = self._sel[0].b if at is None else at
        self._text = self._text[:pt] + text + self._text[pt:]
        self._sel.clear()
        self._sel.add(Region(pt + len(text)))
        _dispatch("on_modified", self)
        _dispatch("on_selection_modified", self)

    def user_replace_all(self, text):
        """The user replaces the whole buffer with ``text`` (select all, type)."""
        self._text = text
        self._sel.clear()
        self._sel.add(Region(len(text)))
        _dispatch("on_modified", self)
        _dispatch("on_selection_modified", self)

    def user_save_as(self, new_path):
        """File > Save As: writes the text to ``new_path`` and retargets."""
        with open(new_path, "w", encoding="utf-8", newline="") as f:
            f.write(self._text)
        self._file_name = new_path
        self._saved_text = self._text
        _dispatch("on_pre_save", self)
        _dispatch("on_post_save", self)

    def text(self):
        """Test helper: the whole buffer."""
        return self._text


# --------------------------------------------------------------------- windows

class Window(object):
    def __init__(self, folders=None):
        self._id = next(_ids)
        self._views = []
        self._active = None
        self._valid = True
        self._project = {"folders": [{"path": f} for f in (folders or [])]}
        self.commands_run = []          # commands no plugin implements
        self.status = []

    def id(self):
        return self._id

    def __eq__(self, rhs):
        return isinstance(rhs, Window) and self._id == rhs._id

    def __hash__(self):
        return self._id

    def __bool__(self):
        return self._valid

    def __repr__(self):
        return "Window(%d)" % (self._id,)

    def is_valid(self):
        return self._valid

    def views(self, include_transient=False):
        _check_thread("Window.views")
        return list(self._views)

    def active_view(self):
        _check_thread("Window.active_view")
        return self._active

    def _activate(self, view):
        old = self._active
        if old == view:
            return
        self._active = view
        if old is not None and old.is_valid():
            _dispatch("on_deactivated", old)
        if view is not None:
            _dispatch("on_activated", view)

    def _remove(self, view):
        if view in self._views:
            self._views.remove(view)
        if self._active == view:
            self._active = None
            if self._views:
                self._activate(self._views[-1])

    def new_file(self, flags=0, syntax=""):
        _check_thread("Window.new_file")
        view = View(self)
        if syntax:
            view._settings.set("syntax", syntax)
        self._views.append(view)
        _dispatch("on_new", view)
        self._activate(view)
        return view

    def open_file(self, fname, flags=0, group=-1):
        _check_thread("Window.open_file")
        row = col = None
        if flags & ENCODED_POSITION:
            m = re.match(r"^(.*?):(\d+)(?::(\d+))?$", fname)
            if m:
                fname, row, col = m.group(1), int(m.group(2)), int(m.group(3) or 1)
        view = self.find_open_file(fname)
        if view is not None:
            self._activate(view)
        else:
            with open(fname, encoding="utf-8", newline="") as f:
                text = f.read().replace("\r\n", "\n")
            view = View(self, file_name=fname, text=text)
            self._views.append(view)
            self._activate(view)
            _dispatch("on_load", view)
        if row is not None:
            view._sel.clear()
            view._sel.add(Region(view.text_point(row - 1, col - 1, clamp_column=True)))
        return view

    def find_open_file(self, fname):
        _check_thread("Window.find_open_file")
        for view in self._views:
            if view._file_name == fname:
                return view
        return None

    def focus_view(self, view):
        _check_thread("Window.focus_view")
        if view in self._views:
            self._activate(view)

    # the symbol index: the project's files as they are on disk
    def _indexed_files(self):
        for folder in self.folders():
            for root, dirs, files in os.walk(folder):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    path = os.path.join(root, name)
                    if os.path.splitext(name)[1] in _DEFINITIONS:
                        with open(path, encoding="utf-8", errors="replace") as f:
                            yield path, os.path.relpath(path, folder), f.read()

    def _open_files(self):
        for view in self._views:
            if view._file_name:
                yield view._file_name, os.path.basename(view._file_name), view._text

    def lookup_symbol_in_index(self, sym):
        _check_thread("Window.lookup_symbol_in_index")
        return [l for f in self._indexed_files()
                for l in _locations(f[0], f[1], f[2], sym, SYMBOL_TYPE_DEFINITION)]

    def lookup_symbol_in_open_files(self, sym):
        _check_thread("Window.lookup_symbol_in_open_files")
        return [l for f in self._open_files()
                for l in _locations(f[0], f[1], f[2], sym, SYMBOL_TYPE_DEFINITION)]

    def lookup_references_in_index(self, sym):
        _check_thread("Window.lookup_references_in_index")
        return [l for f in self._indexed_files()
                for l in _locations(f[0], f[1], f[2], sym, SYMBOL_TYPE_REFERENCE)]

    def lookup_references_in_open_files(self, sym):
        _check_thread("Window.lookup_references_in_open_files")
        return [l for f in self._open_files()
                for l in _locations(f[0], f[1], f[2], sym, SYMBOL_TYPE_REFERENCE)]

    def folders(self):
        _check_thread("Window.folders")
        return [f["path"] for f in self._project.get("folders", [])]

    def project_data(self):
        return dict(self._project)

    def set_project_data(self, data):
        _check_thread("Window.set_project_data")
        self._project = dict(data)

    def status_message(self, msg):
        _check_thread("Window.status_message")
        self.status.append(msg)
        state.status_messages.append(msg)

    def extract_variables(self):
        folders = self.folders()
        return {"folder": folders[0] if folders else ""}

    def run_command(self, cmd, args=None):
        _check_thread("Window.run_command")
        import sublime_plugin
        cls = sublime_plugin._find_command(cmd, "window")
        args = dict(args or {})
        if cls is not None:
            instance = cls(self)
            if _run_guarded(lambda: instance.is_enabled(**args)):
                _run_guarded(lambda: instance.run(**args))
        elif sublime_plugin._find_command(cmd, "text") is not None and self._active:
            self._active.run_command(cmd, args)
        else:
            self.commands_run.append((cmd, args))
        _dispatch("on_post_window_command", self, cmd, args)

    # test helpers
    def user_add_folder(self, path):
        """Project > Add Folder: Sublime runs prompt_add_folder, then the
        folder shows up; plugins hear on_post_window_command."""
        self._project.setdefault("folders", []).append({"path": path})
        _dispatch("on_post_window_command", self, "prompt_add_folder", None)

    def user_close(self):
        """The user closes the window."""
        _dispatch("on_pre_close_window", self)

        def finish():
            for view in list(self._views):
                view.close()
            _post(lambda: _drop_window(self))
        _post(finish)


def _drop_window(window):
    window._valid = False
    if window in state.windows:
        state.windows.remove(window)


def new_window(folders=None):
    """Test helper: Sublime opens a window (plugins hear on_new_window)."""
    window = Window(folders)
    state.windows.append(window)
    state.active_window_id = window.id()
    _dispatch("on_new_window", window)
    return window


def add_window(folders=None):
    """Test helper: a window that existed before the plugin loaded."""
    window = Window(folders)
    state.windows.append(window)
    state.active_window_id = window.id()
    return window


# ------------------------------------------------------------- module functions

def version():
    return "4180"


def platform():
    return state.platform


def arch():
    return "x64"


def windows():
    return list(state.windows)


def active_window():
    for w in state.windows:
        if w.id() == state.active_window_id:
            return w
    return state.windows[0] if state.windows else None


def set_timeout(f, timeout_ms=0):
    """Run ``f`` on the UI loop after ``timeout_ms`` (thread-safe)."""
    with state.lock:
        heapq.heappush(state.queue, (time.monotonic() + timeout_ms / 1000.0,
                                     next(state.seq), f))
        state.lock.notify_all()


def status_message(msg):
    _check_thread("sublime.status_message")
    state.status_messages.append(msg)


def error_message(msg):
    _check_thread("sublime.error_message")
    state.error_messages.append(msg)


def message_dialog(msg):
    _check_thread("sublime.message_dialog")
    state.message_dialogs.append(msg)


def set_clipboard(text):
    state.clipboard = text


def get_clipboard(size_limit=16777216):
    return state.clipboard


def find_resources(pattern):
    return [r for r in state.resources if os.path.basename(r) == pattern]

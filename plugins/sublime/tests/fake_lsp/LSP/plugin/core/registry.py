"""A stand-in for the LSP package's registry (sublimelsp/LSP,
plugin/core/registry.py), for tests: only what the Gemini Companion reads.

In the LSP package, ``windows`` is the ``WindowRegistry``; ``lookup(window)``
gives the window's ``WindowManager`` (None when LSP is disabled for it),
whose ``get_sessions()`` yields one ``Session`` per running language server.
A session's ``diagnostics`` is a ``DiagnosticsStorage``: an OrderedDict from
the parsed document URI ``(scheme, path)`` to the list of LSP ``Diagnostic``
dicts the server last published for it (0-based lines, UTF-16 columns); an
empty publish removes the entry (plugin/core/diagnostics_storage.py).
"""

from collections import OrderedDict


class DiagnosticsStorage(OrderedDict):
    def add_diagnostics_async(self, document_uri, diagnostics):
        uri = ("file", document_uri[len("file://"):])
        if not diagnostics:
            self.pop(uri, None)
            return
        self[uri] = diagnostics
        self.move_to_end(uri)


class ClientConfig(object):
    def __init__(self, name):
        self.name = name


class Session(object):
    def __init__(self, name):
        self.config = ClientConfig(name)
        self.diagnostics = DiagnosticsStorage()


class WindowManager(object):
    def __init__(self):
        self._sessions = set()

    def get_sessions(self):
        yield from self._sessions


class WindowRegistry(object):
    def __init__(self):
        self._windows = {}

    def lookup(self, window):
        if not window or not window.is_valid():
            return None
        return self._windows.setdefault(window.id(), WindowManager())

    # test helpers: a language server starts, publishes diagnostics
    def start_server(self, window, name):
        session = Session(name)
        self.lookup(window)._sessions.add(session)
        return session

    def reset(self):
        self._windows.clear()


windows = WindowRegistry()

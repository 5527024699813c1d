"""A small stand-in for Sublime Text 4's ``sublime_plugin`` module, for tests.

Like Sublime, ``load_plugin(module)`` finds the module's command classes and
event listeners, names commands the way Sublime does (``GeminiAcceptDiffCommand``
is ``gemini_accept_diff``), instantiates each ``EventListener`` once and calls
the module's ``plugin_loaded()``. ``unload_plugin`` calls ``plugin_unloaded()``
and forgets them.
"""

import sublime


class Command(object):
    def name(self):
        return command_name(type(self).__name__)

    def is_enabled(self, **kwargs):
        return True

    def is_visible(self, **kwargs):
        return True

    def is_checked(self, **kwargs):
        return False

    def description(self, **kwargs):
        return None


class ApplicationCommand(Command):
    def run(self, **kwargs):
        pass


class WindowCommand(Command):
    def __init__(self, window):
        self.window = window

    def run(self, **kwargs):
        pass


class TextCommand(Command):
    def __init__(self, view):
        self.view = view

    def run(self, edit, **kwargs):
        pass


class EventListener(object):
    pass


class ViewEventListener(object):
    def __init__(self, view):
        self.view = view


def command_name(class_name):
    """Sublime's rule: an underscore before each capital that follows a
    lower-case letter, lower-cased, then the "_command" suffix dropped."""
    out = class_name[0].lower()
    previous_upper = False
    for ch in class_name[1:]:
        if ch.isupper() and not previous_upper:
            out += "_" + ch.lower()
        else:
            out += ch
        previous_upper = ch.isupper()
    if out.endswith("_command"):
        out = out[:-len("_command")]
    return out


_commands = {"text": {}, "window": {}, "application": {}}
_modules = []


def _find_command(name, kind):
    return _commands[kind].get(name)


def load_plugin(module):
    for value in list(vars(module).values()):
        if not isinstance(value, type) or value.__module__ != module.__name__:
            continue
        if issubclass(value, TextCommand):
            _commands["text"][command_name(value.__name__)] = value
        elif issubclass(value, WindowCommand):
            _commands["window"][command_name(value.__name__)] = value
        elif issubclass(value, ApplicationCommand):
            _commands["application"][command_name(value.__name__)] = value
        elif issubclass(value, EventListener):
            sublime.state.listeners.append(value())
    _modules.append(module)
    loaded = getattr(module, "plugin_loaded", None)
    if loaded is not None:
        loaded()


def unload_plugin(module):
    unloaded = getattr(module, "plugin_unloaded", None)
    if unloaded is not None:
        unloaded()
    for kind in _commands.values():
        for name in [n for n, c in kind.items() if c.__module__ == module.__name__]:
            del kind[name]
    sublime.state.listeners = [l for l in sublime.state.listeners
                               if type(l).__module__ != module.__name__]
    if module in _modules:
        _modules.remove(module)


def commands(kind):
    """Test helper: names of the registered commands of a kind."""
    return sorted(_commands[kind])

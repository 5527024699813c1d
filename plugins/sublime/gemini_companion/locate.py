"""Finding the gemini-ide-companion binary."""

import os
import shutil
import sys

BINARY_NAME = "gemini-ide-companion"
INSTALL_COMMAND = (
    "go install ./cmd/gemini-ide-companion "
    "(in a clone of the gemini-ide-companion repository)"
)


class BinaryNotFound(Exception):
    """The sidecar binary is not where the settings or PATH say it is."""


def _exe_name(name):
    if sys.platform.startswith("win") and not name.lower().endswith(".exe"):
        return name + ".exe"
    return name


def _is_executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def go_bin_dirs(environ):
    """Where ``go install`` puts binaries: $GOBIN, else each $GOPATH/bin,
    else ~/go/bin. Editors started from a desktop often lack these on PATH."""
    dirs = []
    gobin = environ.get("GOBIN")
    if gobin:
        dirs.append(gobin)
    gopath = environ.get("GOPATH")
    if gopath:
        for part in gopath.split(os.pathsep):
            if part:
                dirs.append(os.path.join(part, "bin"))
    else:
        home = environ.get("HOME") or os.path.expanduser("~")
        if home and home != "~":
            dirs.append(os.path.join(home, "go", "bin"))
    return dirs


def find_binary(configured="", environ=None):
    """Return the absolute path of the sidecar binary.

    ``configured`` is the ``binary`` setting: an explicit path (``~`` and
    environment variables are expanded) or a bare command name. Empty means
    "search PATH, then Go's install directories".

    Raises BinaryNotFound with a message a user can act on.
    """
    if environ is None:
        environ = os.environ
    if configured is not None and not isinstance(configured, str):
        raise BinaryNotFound(
            "The \"binary\" setting must be a string (a path to %s), not %r."
            % (BINARY_NAME, configured))
    configured = (configured or "").strip()
    if configured:
        expanded = os.path.expandvars(os.path.expanduser(configured))
        has_dir = os.sep in expanded or (os.altsep and os.altsep in expanded)
        if has_dir:
            if _is_executable(expanded):
                return os.path.abspath(expanded)
            if os.path.isdir(expanded):
                candidate = os.path.join(expanded, _exe_name(BINARY_NAME))
                if _is_executable(candidate):
                    return os.path.abspath(candidate)
            raise BinaryNotFound(
                "The \"binary\" setting points to %s, which is not an executable "
                "file. Fix the setting, or install the companion with:\n\n    %s"
                % (expanded, INSTALL_COMMAND))
        name = expanded
    else:
        name = BINARY_NAME

    found = shutil.which(name, path=environ.get("PATH", os.defpath))
    if found:
        return os.path.abspath(found)
    for directory in go_bin_dirs(environ):
        candidate = os.path.join(directory, _exe_name(name))
        if _is_executable(candidate):
            return os.path.abspath(candidate)
    raise BinaryNotFound(
        "Could not find %s on PATH or in Go's bin directory. Install it with:"
        "\n\n    %s\n\nor set \"binary\" in Gemini Companion.sublime-settings to "
        "its full path." % (name, INSTALL_COMMAND))

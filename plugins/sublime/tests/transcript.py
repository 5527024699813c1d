"""Reading editor-link transcripts and matching messages against them.

The format is fixed in docs/editor-link.md (transcripts): one JSON object per
line whose one key says who acts (``comment``, ``plugin``, ``sidecar``,
``cli``, ``user``, ``restart``). Patterns match when every key they name
matches (extra keys are allowed); arrays and scalars must be equal, except
the strings ``"<any>"``, ``"<string>"``, ``"<number>"`` and ``"<id>"``.
``${workspace}``, ``${file}``, ``${file2}``... inside strings stand for the
replayer's own paths.
"""

import json
import os
import re

ACTORS = ("comment", "plugin", "sidecar", "cli", "user", "restart")
_VARIABLE = re.compile(r"\$\{(workspace|file\d*)\}")


def load(path):
    """The steps of a transcript as (line number, actor, value)."""
    steps = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            step = json.loads(line)
            if not isinstance(step, dict) or len(step) != 1 or next(iter(step)) not in ACTORS:
                raise ValueError("%s:%d: not a transcript step: %s" % (path, number, line.strip()))
            actor, value = next(iter(step.items()))
            steps.append((number, actor, value))
    return steps


class Paths(object):
    """The replayer's own workspace and files for ${workspace}, ${file}..."""

    def __init__(self, workspace):
        self.workspace = workspace

    def get(self, name):
        if name == "workspace":
            return self.workspace
        return os.path.join(self.workspace, name + ".txt")

    def substitute(self, value):
        if isinstance(value, str):
            return _VARIABLE.sub(lambda m: self.get(m.group(1)), value)
        if isinstance(value, list):
            return [self.substitute(v) for v in value]
        if isinstance(value, dict):
            return {k: self.substitute(v) for k, v in value.items()}
        return value


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


PLACEHOLDERS = {"<any>": None, "<string>": "x", "<number>": 1}


def fill(value, bindings, key=None):
    """A message to send with its placeholders filled: each takes the value
    last matched by a placeholder under the same key, else a default."""
    if isinstance(value, dict):
        return {k: fill(v, bindings, k) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, bindings, key) for v in value]
    if isinstance(value, str) and value in PLACEHOLDERS:
        return bindings.get(key, PLACEHOLDERS[value])
    return value


def mismatch(pattern, actual, where="$", bindings=None, key=None):
    """None if ``actual`` matches ``pattern`` (already substituted), else a
    sentence saying where it differs. ``"<id>"`` matches any id here; the
    replayer checks which one. What placeholders matched goes into
    ``bindings`` under their key."""
    if isinstance(pattern, str) and pattern in PLACEHOLDERS and bindings is not None:
        problem = mismatch(pattern, actual, where)
        if problem is None:
            bindings[key] = actual
        return problem
    if pattern == "<any>":
        return None
    if pattern == "<string>":
        return None if isinstance(actual, str) else "%s: %r is not a string" % (where, actual)
    if pattern == "<number>":
        return None if _is_number(actual) else "%s: %r is not a number" % (where, actual)
    if pattern == "<id>":
        ok = isinstance(actual, str) or (_is_number(actual) and actual == int(actual))
        return None if ok else "%s: %r is not an id" % (where, actual)
    if isinstance(pattern, dict):
        if not isinstance(actual, dict):
            return "%s: expected an object, got %r" % (where, actual)
        for key, value in pattern.items():
            if key not in actual:
                return "%s: %r is missing" % (where, key)
            problem = mismatch(value, actual[key], "%s.%s" % (where, key), bindings, key)
            if problem:
                return problem
        return None
    if isinstance(pattern, list):
        if not isinstance(actual, list) or len(actual) != len(pattern):
            return "%s: expected %s, got %s" % (where, json.dumps(pattern), json.dumps(actual))
        for index, (p, a) in enumerate(zip(pattern, actual)):
            problem = mismatch(p, a, "%s[%d]" % (where, index), bindings, key)
            if problem:
                return problem
        return None
    if isinstance(pattern, bool) or isinstance(actual, bool):
        same = pattern is actual
    else:
        same = pattern == actual
    return None if same else "%s: expected %s, got %s" % (
        where, json.dumps(pattern), json.dumps(actual, ensure_ascii=False)[:300])

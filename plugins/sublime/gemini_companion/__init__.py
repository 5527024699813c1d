"""Editor-independent core of the Gemini Companion package for Sublime Text.

``link`` talks JSON-RPC to the gemini-ide-companion sidecar, ``session`` keeps
one window's sidecar, context and diff views, ``positions`` converts between
Sublime's code point columns and the link's UTF-16 characters, and ``locate``
finds the sidecar binary. None of them imports ``sublime``.
"""

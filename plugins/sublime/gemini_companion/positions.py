"""Text positions as the editor link counts them.

Sublime Text counts columns in Unicode code points (``View.rowcol``), while
the editor link (like VS Code and Gemini CLI) counts ``character`` in UTF-16
code units, 1-based. Characters outside the Basic Multilingual Plane (most
emoji, some CJK) are one code point but two UTF-16 units, so the two counts
drift apart on any line that holds one.

Nothing here imports ``sublime``: the functions take plain strings and ints.
"""


def utf16_length(text):
    """Number of UTF-16 code units needed to encode ``text``."""
    extra = 0
    for ch in text:
        if ord(ch) > 0xFFFF:
            extra += 1
    return len(text) + extra


def utf16_column(line_text, codepoint_column):
    """UTF-16 offset of the code point column ``codepoint_column`` in a line.

    ``line_text`` is the text of the line (without its newline). A column past
    the end of the line is clamped to the end.
    """
    if codepoint_column < 0:
        raise ValueError("column must not be negative: %r" % (codepoint_column,))
    return utf16_length(line_text[:codepoint_column])


def codepoint_column(line_text, utf16_col):
    """Code point column for a UTF-16 offset in ``line_text``.

    An offset that falls between the two halves of a surrogate pair is moved
    to the start of that character. An offset past the end is clamped.
    """
    if utf16_col < 0:
        raise ValueError("column must not be negative: %r" % (utf16_col,))
    units = 0
    for index, ch in enumerate(line_text):
        width = 2 if ord(ch) > 0xFFFF else 1
        if units + width > utf16_col:
            return index
        units += width
    return len(line_text)


def cursor(row, codepoint_col, line_text):
    """Editor-link cursor for a 0-based row and code point column.

    Returns ``{"line": row + 1, "character": utf16 offset + 1}``.
    """
    if row < 0:
        raise ValueError("row must not be negative: %r" % (row,))
    return {"line": row + 1, "character": utf16_column(line_text, codepoint_col) + 1}


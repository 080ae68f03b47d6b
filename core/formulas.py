"""Text a spreadsheet would run as a formula (CSV injection). No Django here.

A cell whose text starts with ``=``, ``+``, ``-`` or ``@`` (or their full-width and small
forms, ``＝ ＋ － ＠``, which some spreadsheets read alike), or with a tab or carriage
return, is a formula to Excel and LibreOffice. Winnow refuses such text wherever it comes
in (annotators' answers, every importer, the votes import), naming the row and the field,
so the release files can carry every accepted text byte for byte and still be safe to open.
Leading spaces do not hide the character: the first non-space character is what counts.
"""

from __future__ import annotations

import unicodedata

FORMULA_CHARACTERS = ("=", "+", "-", "@")
FORMULA_CONTROL_STARTS = ("\t", "\r")


def formula_start(text: str) -> str | None:
    """The character that makes ``text`` a spreadsheet formula, or None."""
    if not text:
        return None
    if text.startswith(FORMULA_CONTROL_STARTS):
        return text[0]
    first = text.lstrip()[:1]
    if first and unicodedata.normalize("NFKC", first) in FORMULA_CHARACTERS:
        return first
    return None


def formula_refusal(text: str) -> str | None:
    """Why ``text`` may not be accepted (the reason a user reads), or None."""
    start = formula_start(text)
    if start is None:
        return None
    return f"may not start with {start!r} (a spreadsheet would run it as a formula); begin with a word"

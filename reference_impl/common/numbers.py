"""Integers written as text in table metadata (properties, Avro key-value metadata, hint files).

``str.isdigit`` accepts characters ``int`` refuses (superscripts such as "²") and ``int`` accepts
digits of every script, underscores and spaces; metadata numbers are plain ASCII decimals.
"""

from __future__ import annotations

import re

_UNSIGNED = re.compile(r"[0-9]+\Z")
_SIGNED = re.compile(r"-?[0-9]+\Z")


MAX_DIGITS = 40  # beyond any integer type of any format (2**128 has 39 digits)


def ascii_int(text: object, *, signed: bool = False) -> int | None:
    """The integer ``text`` spells in ASCII decimal digits (a leading "-" if ``signed``), else None.

    More than ``MAX_DIGITS`` digits is None too: no metadata number is that long, and converting
    thousands of digits is slow (Python refuses past 4,300).
    """
    if not isinstance(text, str) or len(text) > MAX_DIGITS + 1 or not (_SIGNED if signed else _UNSIGNED).match(text):
        return None
    return int(text)

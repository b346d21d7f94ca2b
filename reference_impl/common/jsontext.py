"""JSON text from a table, parsed without letting its nesting depth escape as a RecursionError.

Python's decoder recurses once per nesting level and raises ``RecursionError`` past the
interpreter's limit. No metadata of any format nests anywhere near that deep, so such input is
simply not valid JSON for the kit: it becomes the ``ValueError`` every caller already handles.
"""

from __future__ import annotations

import json
from typing import Any


def loads(text: str | bytes, **kwargs: Any) -> Any:
    """``json.loads``, with too deep a nesting reported as a ``ValueError``."""
    try:
        return json.loads(text, **kwargs)
    except RecursionError:
        raise ValueError("JSON nests deeper than the parser allows") from None

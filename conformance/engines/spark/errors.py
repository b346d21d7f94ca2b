"""Spark's exceptions as the kit's error kinds: from the error class Spark names, or from the text
patterns a format's driver knows its runtime to raise.

A driver declares ``ERRORS = ErrorPatterns(...)``: error conditions (Spark's ``getCondition()``)
and message fragments that mean "valid table, feature not implemented" (``Unsupported``) and
"the table is broken" (``InvalidTable``), plus fragments that mean a broken table only when
reading (on a write they are the writer refusing an operation). Anything else stays an engine
error with the Java exception's first lines (and its innermost cause).
"""

from __future__ import annotations

from conformance.engines.errors import ErrorPatterns, translate as _translate

__all__ = ["ErrorPatterns", "java_condition", "short", "translate"]


def java_condition(exc: BaseException) -> str:
    """The error class Spark gives an exception (``getCondition``; ``getErrorClass`` before Spark 4)."""
    for attr in ("getCondition", "getErrorClass"):
        fn = getattr(exc, attr, None)
        if attr == "getErrorClass" and hasattr(exc, "getCondition"):
            break  # pyspark 4 deprecates getErrorClass (a FutureWarning) in favour of getCondition
        if fn is not None:
            try:
                value = fn()
            except Exception:  # noqa: BLE001
                value = None
            if value:
                return str(value)
    return ""


def short(exc: BaseException, limit: int = 600) -> str:
    """The first lines of a Java exception, without stack frames; its innermost cause when the
    outer one is a wrapper ("INTERNAL_ERROR", "Exception thrown in awaitResult") that says nothing."""
    full = str(exc).strip()
    text = full.split("\n\tat ", 1)[0]
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("at ")]
    text = " | ".join(lines[:6])
    causes = [ln.strip() for ln in full.splitlines() if ln.strip().startswith("Caused by:")]
    if causes and causes[-1][len("Caused by:"):].strip() not in text:
        cause = causes[-1][:300]
        return text[: max(0, limit - len(cause) - 3)] + " | " + cause
    return text[:limit]


def translate(exc: BaseException, *, where: str, patterns: ErrorPatterns, reading: bool = False) -> BaseException:
    """A Spark exception as the kit's error kinds, matched on its error condition and its text."""
    return _translate(exc, patterns, where=where, reading=reading, text=f"{java_condition(exc)} {exc}",
                      message=f"spark: {short(exc)}")

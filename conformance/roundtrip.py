"""The one round-trip helper every serialization test goes through (DESIGN.md convention 6).

``assert_roundtrip(value, encode, decode)`` checks ``decode(encode(value)) == value`` (after an
optional ``normalize``) and that the encoding is a fixed point: ``encode(decode(encode(v)))``
equals ``encode(v)``, so a writer that re-serialises what it read never drifts. On failure it
raises ``AssertionError`` naming the stage (encode, decode, compare, re-encode) with both sides
shown, which is what a shrunk hypothesis example should print.
"""

from __future__ import annotations

import math
from typing import Any, Callable, TypeVar

T = TypeVar("T")
E = TypeVar("E")


class RoundTripError(AssertionError):
    """A value did not survive encode -> decode (or the encoding was not stable)."""


def _short(x: Any, limit: int = 400) -> str:
    text = repr(x)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def nan_safe_equal(a: Any, b: Any) -> bool:
    """Structural equality where NaN equals NaN and -0.0 differs from 0.0 (bit-faithful floats)."""
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(nan_safe_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(nan_safe_equal(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool):  # True == 1 must not pass for a boolean column
        return type(a) is type(b) and a == b
    return a == b


def assert_roundtrip(
    value: T,
    encode: Callable[[T], E],
    decode: Callable[[E], T],
    *,
    normalize: Callable[[Any], Any] = lambda x: x,
    equal: Callable[[Any, Any], bool] = lambda a, b: a == b,
    stable: bool = True,
    label: str = "",
) -> E:
    """Assert ``decode(encode(value))`` equals ``value`` and the encoding is stable; return the encoding."""
    tag = f"[{label}] " if label else ""
    try:
        encoded = encode(value)
    except Exception as exc:  # the failing stage is the point of the message
        raise RoundTripError(f"{tag}encode failed for {_short(value)}: {type(exc).__name__}: {exc}") from exc
    try:
        decoded = decode(encoded)
    except Exception as exc:
        raise RoundTripError(
            f"{tag}decode failed for {_short(encoded)} (encoded from {_short(value)}): {type(exc).__name__}: {exc}"
        ) from exc
    if not equal(normalize(decoded), normalize(value)):
        raise RoundTripError(
            f"{tag}round trip changed the value\n  original: {_short(value)}\n  encoded:  {_short(encoded)}\n"
            f"  decoded:  {_short(decoded)}"
        )
    if stable:
        try:
            again = encode(decoded)
        except Exception as exc:
            raise RoundTripError(f"{tag}re-encode failed for {_short(decoded)}: {type(exc).__name__}: {exc}") from exc
        if again != encoded:
            raise RoundTripError(
                f"{tag}encoding is not stable\n  first:  {_short(encoded)}\n  second: {_short(again)}"
            )
    return encoded

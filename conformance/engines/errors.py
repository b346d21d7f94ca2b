"""An engine's exceptions as the kit's error kinds, from what the engine says.

A cell that expects an error passes only on a refusal of the table of the expected kind. So every
adapter turns what its engine raised into one of:

* ``InvalidTable``: the engine judged the table broken (a missing file the table references, a log
  it cannot reconcile, metadata that does not parse);
* ``Unsupported``: the engine judged the table valid but beyond what it implements;
* ``Internal``: the engine says the failure is its own bug;
* ``EngineError`` (kind ``error``): anything else, which is no verdict on the table at all.

The engine's own words decide: each adapter or driver declares ``ErrorPatterns`` (exception class
names and message fragments its library is known to use). Whatever the patterns say, some failures
never count as a verdict on the table: the engine could not be imported, the store could not be
reached or refused the credentials, the engine ran out of time or memory. The raw message is kept
in the error's text, prefixed with the exception class the engine raised.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Iterator

from reference_impl.errors import Internal, InvalidTable, LakeconfError, Unsupported


class EngineError(LakeconfError):
    """An engine failure that is no verdict on the table (kind ``error``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorPatterns:
    """What one engine (for one format) says when it refuses a table.

    Fragments are matched case-sensitively against the exception's class name and text (and, for
    Spark, its error condition). ``invalid_on_read`` means a broken table only on a read: on a write
    the same words are the writer refusing an operation.
    """

    unsupported: tuple[str, ...] = ()
    invalid: tuple[str, ...] = ()
    invalid_on_read: tuple[str, ...] = ()
    internal: tuple[str, ...] = ()
    unsupported_types: tuple[str, ...] = ()  # exception class names

    def __or__(self, other: "ErrorPatterns") -> "ErrorPatterns":
        return ErrorPatterns(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


# Failures that say nothing about the table, whatever an engine's patterns would make of them.
NO_VERDICT_TYPES: tuple[type[BaseException], ...] = (ImportError, MemoryError, ConnectionError, TimeoutError)
NO_VERDICT_TEXT = (
    "ModuleNotFoundError", "No module named", "cannot import name",
    "Connection refused", "connection refused", "Connection reset", "dns error", "Name or service not known",
    "timed out", "TimeoutError",
    # the store refused the request itself (credentials, signature, a malformed request), not the table
    "SignatureDoesNotMatch", "InvalidAccessKeyId", "AccessDenied", "Access Denied", "403 Forbidden", "HTTP 403",
    "XMinioInvalidResourceName", "InvalidBucketName", "NoSuchBucket", "500 Internal Server Error",
    "503 Service Unavailable", "SlowDown",
)


# A file the table references is not there: the table is broken (on a read; on a write it is the
# writer's own mistake). The words of Python, the Rust object_store and opendal crates, DuckDB's
# httpfs, Daft and the S3 API.
MISSING_FILE = ErrorPatterns(invalid_on_read=(
    "FileNotFoundError", "No such file or directory", "Path does not exist", "NoSuchKey", "HTTP 404",
    "404 Not Found", "Object at location", "DaftError::FileNotFound", "NotFound (persistent)",
    "AWS Error RESOURCE_NOT_FOUND",  # Arrow C++'s S3 filesystem on a missing key
))


def kind_of(exc: BaseException, patterns: ErrorPatterns, *, reading: bool = True, text: str | None = None) -> str:
    """``invalid_table``, ``unsupported``, ``internal`` or ``error`` for an engine's exception."""
    kind = getattr(exc, "kind", None)
    if isinstance(exc, LakeconfError) or kind in ("invalid_table", "unsupported", "internal"):
        return kind or "error"
    said = f"{type(exc).__name__}: {exc if text is None else text}"
    if isinstance(exc, NO_VERDICT_TYPES) or any(f in said for f in NO_VERDICT_TEXT):
        return "error"

    def says(fragments: tuple[str, ...]) -> bool:
        return any(f in said for f in fragments)

    if says(patterns.internal):
        return "internal"
    if says(patterns.unsupported) or type(exc).__name__ in patterns.unsupported_types:
        return "unsupported"
    if says(patterns.invalid) or (reading and (says(patterns.invalid_on_read) or says(MISSING_FILE.invalid_on_read))):
        return "invalid_table"
    return "error"


_CLASSES = {"invalid_table": InvalidTable, "unsupported": Unsupported, "internal": Internal, "error": EngineError}


def translate(exc: BaseException, patterns: ErrorPatterns, *, where: str | None = None, reading: bool = True,
              text: str | None = None, message: str | None = None) -> BaseException:
    """``exc`` as the kit's error of the kind ``kind_of`` gives; the kit's own errors pass through.

    ``text`` replaces ``str(exc)`` for matching (Spark adds its error condition); ``message``
    replaces ``"<class>: <text>"`` as the error's message.
    """
    if isinstance(exc, LakeconfError) or isinstance(exc, KeyboardInterrupt):
        return exc
    kind = kind_of(exc, patterns, reading=reading, text=text)
    words = message if message is not None else f"{type(exc).__name__}: {exc if text is None else text}"
    return _CLASSES[kind](words, path=where)


@contextmanager
def refusals(patterns: ErrorPatterns, where: str | None = None, *, reading: bool = True) -> Iterator[None]:
    """Run an engine call, raising what it raised as the kit's kinds (``translate``); a Rust panic
    (a ``BaseException``) passes through untouched and is an error of the cell."""
    try:
        yield
    except LakeconfError:
        raise
    except Exception as exc:  # noqa: BLE001 - every engine exception is judged by its words
        raise translate(exc, patterns, where=where, reading=reading) from None

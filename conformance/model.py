"""The core model of the harness, shared by every format: cases, steps, expectations, results.

A *case* is a table with known content: a list of writer-neutral *steps* that build it and the
*expected* outcome at each version (rows, metadata, or an error of a named kind). A writer engine
turns the steps into a real table; a reader engine reads it back; the harness compares. Nothing
here knows a format: format specifics live in the steps' payloads, in steps a format package
defines for itself (subclasses of ``Step``), in the engines and in the reference implementation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from typing import Any, Callable, Literal, Mapping

import pyarrow as pa

# ``partial``: what was checked matched, but part of the expectation could not be checked (the
# engine cannot describe a table's metadata): not a pass, and not a finding either.
Status = Literal["pass", "partial", "fail", "error", "unsupported", "skip"]
STATUSES: tuple[Status, ...] = ("pass", "partial", "fail", "error", "unsupported", "skip")


# --------------------------------------------------------------------------------------------
# Steps: what a writer does to build a case. Each writer engine implements the ones it can and
# raises ``Unsupported`` for the rest, which the harness reports as *unsupported* for that writer.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """Base of every build step."""


# A partition expression names a column and, optionally, the transform that derives the
# partition value from it, written the way Spark's DDL writes them. Plain column names are what
# Hive-style layouts know. A writer that cannot honour a transform raises ``Unsupported``.
PARTITION_TRANSFORMS = ("identity", "bucket", "truncate", "year", "month", "day", "hour", "void")
_PARTITION_EXPR = re.compile(r"^\s*(?:(\w+)\s*\(\s*(?:(-?\d+)\s*,\s*)?([^(),\s]+)\s*\)|([^(),\s]+))\s*$")


def parse_partition_expr(text: str) -> tuple[str, str, int | None]:
    """``"bucket(16, id)"`` -> ``("bucket", "id", 16)``; ``"id"`` -> ``("identity", "id", None)``.

    ``ValueError`` for a malformed expression, an unknown transform, or a parameter given to a
    transform that takes none (or missing from bucket/truncate).
    """
    m = _PARTITION_EXPR.match(text)
    if not m:
        raise ValueError(f"malformed partition expression {text!r}: use 'col' or 'transform([N, ]col)'")
    if m.group(4):
        return "identity", m.group(4), None
    name, param, column = m.group(1).lower(), m.group(2), m.group(3)
    if name not in PARTITION_TRANSFORMS:
        raise ValueError(f"unknown partition transform {name!r} in {text!r}: one of {', '.join(PARTITION_TRANSFORMS)}")
    takes_param = name in ("bucket", "truncate")
    if takes_param != (param is not None):
        need = "needs a width/count parameter" if takes_param else "takes no parameter"
        raise ValueError(f"partition transform {name!r} {need} ({text!r})")
    return name, column, int(param) if param is not None else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Create(Step):
    """Create the table: Arrow schema, partitioning, table properties, format features.

    ``partition_by`` holds partition expressions (``parse_partition_expr``): column names, or
    transforms of columns such as ``"day(ts)"``. ``features`` names format features to enable at
    creation, in the format's own spelling. Versions of the format itself (a protocol, a format
    version) are table properties, spelled as the format's writers take them.
    """

    schema: pa.Schema
    partition_by: tuple[str, ...] = ()
    properties: Mapping[str, str] = field(default_factory=dict)
    features: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Append(Step):
    """Insert rows (one commit). ``files`` > 1 splits the rows over that many data files.

    ``branch``: commit to that named branch instead of the main history (formats with branches).
    """

    rows: pa.Table
    files: int = 1
    branch: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Overwrite(Step):
    """Replace the whole content; a different schema replaces the schema too."""

    rows: pa.Table


@dataclass(frozen=True, slots=True, kw_only=True)
class Delete(Step):
    """Delete the rows matching a SQL predicate.

    ``how`` asks for one mechanism where the format offers several: ``copy-on-write``,
    ``position-deletes``, ``equality-deletes`` or ``deletion-vectors``; ``None`` leaves it to the
    writer and the table's settings. A writer that cannot honour the request raises
    ``Unsupported`` rather than silently using another mechanism.
    """

    where: str
    how: Literal["copy-on-write", "position-deletes", "equality-deletes", "deletion-vectors"] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Update(Step):
    """Set columns to SQL expressions on the rows matching a SQL predicate."""

    set: Mapping[str, str]
    where: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SetProperties(Step):
    """Change table properties (one metadata commit)."""

    properties: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class AddConstraint(Step):
    """Add a CHECK constraint."""

    name: str
    expression: str


@dataclass(frozen=True, slots=True, kw_only=True)
class AddColumn(Step):
    """Add a nullable column at the end of the schema."""

    field: pa.Field


@dataclass(frozen=True, slots=True, kw_only=True)
class RenameColumn(Step):
    """Rename a top-level column (some formats need a table feature for it)."""

    old: str
    new: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DropColumn(Step):
    """Drop a top-level column (some formats need a table feature for it)."""

    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChangeColumnType(Step):
    """Change a top-level column's type (type promotion, or widening)."""

    name: str
    type: pa.DataType


@dataclass(frozen=True, slots=True, kw_only=True)
class MoveColumn(Step):
    """Move a top-level column after another one (``after=None``: make it the first)."""

    name: str
    after: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SetPartitioning(Step):
    """Partition new writes by these expressions from now on (partition evolution)."""

    partition_by: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateRef(Step):
    """Name a version: a ``tag`` (fixed) or a ``branch`` (can take commits), at ``version``
    (``None``: the current one)."""

    name: str
    kind: Literal["branch", "tag"]
    version: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpireSnapshots(Step):
    """Forget old versions: keep the newest ``retain_last`` of the main history, and any version a
    named ref still points at."""

    retain_last: int = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Optimize(Step):
    """Compact the live files into one (a dataChange=false rewrite)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Raw(Step):
    """Change the table's files directly (negative cases, log layouts no writer API produces).

    Only the reference writer runs raw steps: ``fn(storage)`` gets the table's ``Storage``.
    """

    fn: Callable[[Any], None]
    description: str


# --------------------------------------------------------------------------------------------
# Cases and expectations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Expected:
    """What a correct reader returns at one version (``None`` = latest).

    Either ``rows`` (compared order-insensitively, types normalised) or ``error`` (the kind a
    correct reader raises: ``invalid_table`` or ``unsupported``). ``metadata`` holds the
    format's own facts to check (protocol, partition columns, configuration, ...).
    """

    version: int | None = None
    rows: pa.Table | None = None
    error: Literal["invalid_table", "unsupported"] | None = None
    # Where the spec lets a reader refuse instead ("readers MAY treat such commits as invalid"):
    # the rows are the lenient answer, and raising this kind is conformant too.
    error_allowed: Literal["invalid_table", "unsupported"] | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    timestamp: str | None = None  # read "as of" this ISO timestamp instead of a version
    ref: str | None = None  # read this named branch or tag instead of a version


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One table with known content, one feature or edge at a time."""

    id: str  # "<format>/<slug>"
    format: str
    description: str
    rules: tuple[str, ...]
    features: tuple[str, ...] = ()  # reader features the case needs (checked against capabilities)
    steps: tuple[Step, ...]
    expected: tuple[Expected, ...]
    writers: tuple[str, ...] | None = None  # restrict which writers build it (None: any that can)
    notes: str = ""  # what a reader of the report should know (a known spec ambiguity, ...)
    # The rule ids the built table breaks by design (a negative case, a layout readers must still
    # read): the reference validator must flag exactly these on the reference writer's table, and
    # they are expected, not a writer's finding, on any other writer's.
    violates: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        """The id without the format prefix (used for directory names)."""
        return self.id.split("/", 1)[1]


@dataclass(frozen=True, slots=True, kw_only=True)
class TableRef:
    """Where a built table lives and how to reach it."""

    format: str
    uri: str
    storage_options: Mapping[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:  # storage options may hold credentials
        return f"TableRef(format={self.format!r}, uri={self.uri!r})"


@dataclass(frozen=True, slots=True, kw_only=True)
class Result:
    """One cell of the matrix: (case, writer, reader, version) -> status."""

    case: str
    format: str
    writer: str
    reader: str
    version: int | None
    status: Status
    message: str = ""
    seconds: float = 0.0
    rules: tuple[str, ...] = ()
    diff: str = ""  # a minimal diff for a fail, the error for an error

    def to_dict(self) -> dict[str, Any]:
        """The results.json shape."""
        return {
            "case": self.case,
            "format": self.format,
            "writer": self.writer,
            "reader": self.reader,
            "version": self.version,
            "status": self.status,
            "message": self.message,
            "seconds": round(self.seconds, 4),
            "rules": list(self.rules),
            "diff": self.diff,
        }

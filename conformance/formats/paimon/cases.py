"""The Paimon case corpus: one feature or edge of the spec (docs/docs/concepts/spec/) per case.

Every expectation is written by hand from the spec and Paimon's documented semantics; rows are
never computed by a reader. Versions are snapshot ids (``facts.py``): every step that commits data
(``Append``, ``WriteChanges``, ``Overwrite``, ``Delete``/``Update`` that match rows, ``Optimize``)
makes the next snapshot; creating the table, schema changes, option changes, tags, branches and
expiry make none. Version 0 is the created table without a snapshot (no rows). What the steps mean
for Paimon is in ``steps.py`` (options in ``Create.properties``, ``primary-key`` among them).

Arrow spelling of Paimon types: ``int8`` TINYINT, ``int16`` SMALLINT, ``int32`` INT, ``int64``
BIGINT, ``float32`` FLOAT, ``float64`` DOUBLE, ``decimal128(p, s)`` DECIMAL, ``string`` STRING,
``binary`` BYTES, ``bool_`` BOOLEAN, ``date32`` DATE, ``timestamp(unit)`` TIMESTAMP(p) with
``s``/``ms``/``us``/``ns`` for precisions 0/3/6/9, a ``tz`` for WITH LOCAL TIME ZONE, lists, maps
and structs for ARRAY, MAP and ROW. A non-nullable Arrow field is ``NOT NULL`` (primary keys must be).

Tables where a reader must skip level-0 files (deletion vectors on a primary-key table, the
first-row engine) show the rule with versions: what a writer commits at level 0 is invisible until a
full compaction moves it up. Java writers compact on commit for those tables (more snapshots per
step), so these cases are built by writers that commit level-0 files only.
"""

from __future__ import annotations

import datetime as _dt
from typing import Iterable

import pyarrow as pa

from conformance.cases.values import D, INF, NAN, UTC, empty, ntz, rows
from conformance.cases.values import d as day  # a DATE
from conformance.cases.values import ts as ltz  # a TIMESTAMP WITH LOCAL TIME ZONE (an instant)
from conformance.formats.paimon import facts as F
from conformance.formats.paimon import raw
from conformance.formats.paimon.steps import WriteChanges
from conformance.model import (
    AddColumn,
    Append,
    Case,
    ChangeColumnType,
    Create,
    CreateRef,
    Delete,
    DropColumn,
    Expected,
    ExpireSnapshots,
    MoveColumn,
    Optimize,
    Overwrite,
    Raw,
    RenameColumn,
    SetProperties,
    Update,
)

FORMAT = "paimon"
RAW_ONLY = ("reference",)  # cases with raw steps
# Writers that commit level-0 files only (no compaction on commit): the level-0 visibility cases.
LEVEL0_WRITERS = ("reference", "pypaimon")


def ms(text: str) -> int:
    """Epoch milliseconds of a UTC ISO instant (commit times pinned by raw steps)."""
    return int(_dt.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def _raw(fn, description: str) -> Raw:
    return Raw(fn=fn, description=description)


_CASES: list[Case] = []


def read_features(steps: tuple, expected: tuple) -> tuple[str, ...]:
    """The reader features a case needs, from its table options and steps."""
    out: list[str] = []
    for s in steps:
        if isinstance(s, Create):
            o = {k: str(v).strip().lower() for k, v in s.properties.items()}
            if o.get("primary-key"):
                out.append(F.PRIMARY_KEY)
            engine = o.get("merge-engine", "deduplicate")
            out += {"partial-update": [F.PARTIAL_UPDATE], "aggregation": [F.AGGREGATION],
                    "first-row": [F.FIRST_ROW]}.get(engine, [])
            if o.get("deletion-vectors.enabled") == "true":
                out.append(F.DELETION_VECTORS)
            if o.get("sequence.field"):
                out.append(F.SEQUENCE_FIELD)
            if o.get("rowkind.field"):
                out.append(F.ROWKIND_FIELD)
            if o.get("file.format") in F.FILE_FORMATS:
                out.append(F.FILE_FORMATS[o["file.format"]])
        elif isinstance(s, Delete) and s.how == "deletion-vectors":
            out.append(F.DELETION_VECTORS)
        elif isinstance(s, (AddColumn, RenameColumn, DropColumn, ChangeColumnType, MoveColumn)):
            out.append(F.SCHEMA_EVOLUTION)
        elif isinstance(s, CreateRef) and s.kind == "branch":
            out.append(F.BRANCHES)
    return tuple(dict.fromkeys(out))


def case(slug: str, description: str, *, rules: Iterable[str], steps, expected, notes: str = "",
         writers=None, violates: Iterable[str] = ()) -> None:
    """Register one case of the corpus (its reader features derived from the steps)."""
    steps, expected = tuple(steps), tuple(expected)
    if writers is None and any(isinstance(s, Raw) for s in steps):
        writers = RAW_ONLY
    _CASES.append(Case(
        id=f"{FORMAT}/{slug}", format=FORMAT, description=description, rules=tuple(rules),
        features=read_features(steps, expected), steps=steps, expected=expected, writers=writers,
        notes=notes, violates=tuple(violates),
    ))


def pk(*keys: str, **options: str) -> dict[str, str]:
    """Options of a primary-key table (``bucket`` 2 unless given: fixed buckets every writer writes);
    keyword names spell options with ``_`` for ``-`` (dotted options go in a ``**{...}``)."""
    return {"primary-key": ",".join(keys), "bucket": "2", **{k.replace("_", "-"): v for k, v in options.items()}}


# --------------------------------------------------------------------------------------------
# Shared schemas and data
# --------------------------------------------------------------------------------------------

BASIC = pa.schema([("letter", pa.string()), ("number", pa.int64()), ("a_float", pa.float64())])
B1 = [("a", 1, 1.1), ("b", 2, 2.2), ("c", 3, 3.3)]
B2 = [("d", 4, 4.4), ("e", 5, 5.5)]

KEYED = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("score", pa.int64())])
K1 = [(1, "one", 10), (2, "two", 20), (3, "three", 30)]

PARTED = pa.schema([("part", pa.string()), ("id", pa.int32()), ("value", pa.string())])

# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------

PRIMITIVES = pa.schema([
    ("b", pa.bool_()), ("i8", pa.int8()), ("i16", pa.int16()), ("i32", pa.int32()), ("i64", pa.int64()),
    ("f32", pa.float32()), ("f64", pa.float64()), ("dec_small", pa.decimal128(10, 2)),
    ("dec_large", pa.decimal128(38, 10)), ("s", pa.string()), ("bin", pa.binary()), ("d", pa.date32()),
])
case(
    "types-primitives",
    "Every atomic type but time and timestamps, with extremes, and a row of nulls.",
    rules=("PAIMON-SCHEMA-017", "PAIMON-DATA-005", "PAIMON-STATS-001", "PAIMON-ROW-012", "PAIMON-ROW-014",
           "PAIMON-ROW-015", "PAIMON-ROW-020"),
    steps=[
        Create(schema=PRIMITIVES),
        Append(rows=rows(PRIMITIVES,
                         (True, -128, -32768, -2**31, -2**63, -1.5, -2.25, D("-99999999.99"),
                          D("-9999999999999999999999999999.9999999999"), "", b"", day("0001-01-01")),
                         (False, 127, 32767, 2**31 - 1, 2**63 - 1, 3.5, 1e300, D("99999999.99"),
                          D("9999999999999999999999999999.9999999999"), "a longer string value", b"\x00\xff" * 9,
                          day("9999-12-31")),
                         (None,) * 12)),
    ],
    expected=[Expected(rows=rows(PRIMITIVES,
                                 (True, -128, -32768, -2**31, -2**63, -1.5, -2.25, D("-99999999.99"),
                                  D("-9999999999999999999999999999.9999999999"), "", b"", day("0001-01-01")),
                                 (False, 127, 32767, 2**31 - 1, 2**63 - 1, 3.5, 1e300, D("99999999.99"),
                                  D("9999999999999999999999999999.9999999999"), "a longer string value",
                                  b"\x00\xff" * 9, day("9999-12-31")),
                                 (None,) * 12))],
)

FLOATS = pa.schema([("id", pa.int32()), ("f32", pa.float32()), ("f64", pa.float64())])
case(
    "types-float-specials",
    "NaN, infinities and negative zero in FLOAT and DOUBLE columns.",
    rules=("PAIMON-ROW-012", "PAIMON-STATS-005"),
    steps=[Create(schema=FLOATS),
           Append(rows=rows(FLOATS, (1, NAN, NAN), (2, INF, -INF), (3, -0.0, -0.0), (4, 1.0, None)))],
    expected=[Expected(rows=rows(FLOATS, (1, NAN, NAN), (2, INF, -INF), (3, -0.0, -0.0), (4, 1.0, None)))],
)

TS_NTZ = pa.schema([("id", pa.int32()), ("ts0", pa.timestamp("s")), ("ts3", pa.timestamp("ms")),
                    ("ts6", pa.timestamp("us")), ("ts9", pa.timestamp("ns"))])
_TS_ROWS = [
    (1, ntz("2024-02-29 12:34:56"), ntz("2024-02-29 12:34:56.789"), ntz("2024-02-29 12:34:56.789123"),
     1709210096789123456),  # TIMESTAMP(9) as epoch nanoseconds (Python's datetime stops at micros)
    (2, ntz("1969-12-31 23:59:59"), ntz("1969-12-31 23:59:59.999"), ntz("1969-12-31 23:59:59.999999"),
     -1),
    (3, None, None, None, None),
]
case(
    "types-timestamp-precisions",
    "TIMESTAMP(0), (3), (6) and (9) without time zone, before and after the epoch, and nulls.",
    rules=("PAIMON-SCHEMA-017", "PAIMON-ROW-017", "PAIMON-ROW-018", "PAIMON-ROW-038"),
    steps=[Create(schema=TS_NTZ), Append(rows=rows(TS_NTZ, *_TS_ROWS))],
    expected=[Expected(rows=rows(TS_NTZ, *_TS_ROWS))],
    notes="Parquet stores TIMESTAMP(0..3) as INT64 milliseconds, (4..6) as microseconds and (7..9) as INT96 "
          "in Java (pypaimon writes INT64 nanoseconds); every reader must return the same instants.",
)

TS_LTZ = pa.schema([("id", pa.int32()), ("ts0", pa.timestamp("s", tz="UTC")), ("ts3", pa.timestamp("ms", tz="UTC")),
                    ("ts6", pa.timestamp("us", tz="UTC")), ("ts9", pa.timestamp("ns", tz="UTC"))])
_LTZ_ROWS = [
    (1, ltz("2024-02-29 12:34:56"), ltz("2024-02-29 12:34:56.789"), ltz("2024-02-29 12:34:56.789123"),
     1709210096789123456),
    (2, ltz("1900-01-01 00:00:00"), ltz("1900-01-01 00:00:00.001"), ltz("1900-01-01 00:00:00.000001"),
     -2208988800000000000),
    (3, None, None, None, None),
]
case(
    "types-timestamp-ltz",
    "TIMESTAMP(p) WITH LOCAL TIME ZONE at precisions 0, 3, 6 and 9: instants, read as UTC.",
    rules=("PAIMON-SCHEMA-017", "PAIMON-ROW-017", "PAIMON-ROW-018"),
    steps=[Create(schema=TS_LTZ), Append(rows=rows(TS_LTZ, *_LTZ_ROWS))],
    expected=[Expected(rows=rows(TS_LTZ, *_LTZ_ROWS))],
)

NESTED = pa.schema([
    ("id", pa.int32()),
    ("tags", pa.list_(pa.string())),
    ("attrs", pa.map_(pa.string(), pa.int64())),
    ("point", pa.struct([("x", pa.float64()), ("y", pa.float64()), ("label", pa.string())])),
    ("events", pa.list_(pa.struct([("at", pa.int64()), ("what", pa.string())]))),
    ("matrix", pa.list_(pa.list_(pa.int32()))),
])
_NESTED_ROWS = [
    (1, ["a", "b"], [("k1", 1), ("k2", 2)], {"x": 1.0, "y": 2.0, "label": "p"}, [{"at": 1, "what": "x"}], [[1, 2], [3]]),
    (2, [], [], {"x": None, "y": None, "label": None}, [], [[]]),
    (3, ["c", None], [("k", None)], None, [{"at": None, "what": None}, None], [None, [None]]),
    (4, None, None, None, None, None),
]
case(
    "types-nested",
    "ARRAY, MAP, ROW and their nesting, with empty collections, null elements and null values.",
    rules=("PAIMON-SCHEMA-018", "PAIMON-SCHEMA-019", "PAIMON-SCHEMA-020", "PAIMON-SCHEMA-006"),
    steps=[Create(schema=NESTED), Append(rows=rows(NESTED, *_NESTED_ROWS))],
    expected=[Expected(rows=rows(NESTED, *_NESTED_ROWS))],
)

UNICODE = pa.schema([("id", pa.int32()), ("s", pa.string())])
_UNICODE_ROWS = [(1, "héllo wörld"), (2, "日本語テキスト"), (3, "emoji 🎉"), (4, "x" * 300), (5, "tab\tnew\nline")]
case(
    "types-strings-unicode",
    "Multi-byte UTF-8, a 300-character string (stats truncated) and control characters.",
    rules=("PAIMON-STATS-007", "PAIMON-ROW-020"),
    steps=[Create(schema=UNICODE), Append(rows=rows(UNICODE, *_UNICODE_ROWS))],
    expected=[Expected(rows=rows(UNICODE, *_UNICODE_ROWS))],
)

case(
    "types-decimal-keys",
    "DECIMAL(38, 4) and DECIMAL(9, 2) primary keys (non-compact and compact BinaryRow keys, bucketed by them).",
    rules=("PAIMON-ROW-014", "PAIMON-ROW-015", "PAIMON-BUCKET-002", "PAIMON-MANIFEST-017"),
    steps=[
        Create(schema=pa.schema([pa.field("big", pa.decimal128(38, 4), nullable=False),
                                 pa.field("small", pa.decimal128(9, 2), nullable=False), ("v", pa.string())]),
               properties=pk("big", "small")),
        Append(rows=rows(pa.schema([pa.field("big", pa.decimal128(38, 4), nullable=False),
                                    pa.field("small", pa.decimal128(9, 2), nullable=False), ("v", pa.string())]),
                         (D("12345678901234567890.1234"), D("1.50"), "a"), (D("-1.0000"), D("-1.50"), "b"),
                         (D("0.0000"), D("0.00"), "c"))),
        Append(rows=rows(pa.schema([pa.field("big", pa.decimal128(38, 4), nullable=False),
                                    pa.field("small", pa.decimal128(9, 2), nullable=False), ("v", pa.string())]),
                         (D("-1.0000"), D("-1.50"), "b2"))),
    ],
    expected=[Expected(rows=rows(pa.schema([("big", pa.decimal128(38, 4)), ("small", pa.decimal128(9, 2)),
                                            ("v", pa.string())]),
                                 (D("12345678901234567890.1234"), D("1.50"), "a"), (D("-1.0000"), D("-1.50"), "b2"),
                                 (D("0.0000"), D("0.00"), "c")))],
)

# --------------------------------------------------------------------------------------------
# Append tables
# --------------------------------------------------------------------------------------------

case(
    "append-basic",
    "An append table (bucket -1) with two commits; version 0 is the table before its first commit.",
    rules=("PAIMON-SNAP-001", "PAIMON-SNAP-009", "PAIMON-BUCKET-006", "PAIMON-DATA-005", "PAIMON-LAYOUT-001",
           "PAIMON-SCHEMA-001"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2))],
    expected=[
        Expected(version=0, rows=empty(BASIC)),
        Expected(version=1, rows=rows(BASIC, *B1), metadata={"snapshot_id": 1, "commit_kind": "APPEND"}),
        Expected(rows=rows(BASIC, *B1, *B2), metadata={
            "snapshot_id": 2, "schema_id": 0, "primary_keys": [], "partition_keys": [], "bucket": -1,
            "merge_engine": None, "commit_kind": "APPEND"}),
    ],
)

case(
    "append-many-files",
    "One commit of three data files, then one of two.",
    rules=("PAIMON-MANIFEST-001", "PAIMON-MLIST-007", "PAIMON-LAYOUT-009"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1), files=3), Append(rows=rows(BASIC, *B2), files=2)],
    expected=[Expected(version=1, rows=rows(BASIC, *B1)), Expected(rows=rows(BASIC, *B1, *B2))],
)

case(
    "append-fixed-bucket",
    "An append table with 4 fixed buckets on bucket-key number.",
    rules=("PAIMON-BUCKET-001", "PAIMON-BUCKET-002", "PAIMON-BUCKET-003", "PAIMON-LAYOUT-010"),
    steps=[Create(schema=BASIC, properties={"bucket": "4", "bucket-key": "number"}),
           Append(rows=rows(BASIC, *B1, *B2))],
    expected=[Expected(rows=rows(BASIC, *B1, *B2), metadata={"bucket": 4, "options": {"bucket-key": "number"}})],
)

_P1 = [("x", 1, "a"), ("y", 2, "b"), ("x", 3, "c")]
case(
    "append-partitioned",
    "An append table partitioned by a string column: one directory per value.",
    rules=("PAIMON-PART-001", "PAIMON-PART-005", "PAIMON-PART-006", "PAIMON-LAYOUT-012", "PAIMON-MLIST-008"),
    steps=[Create(schema=PARTED, partition_by=("part",)), Append(rows=rows(PARTED, *_P1))],
    expected=[Expected(rows=rows(PARTED, *_P1), metadata={"partition_keys": ["part"]})],
)

_P_ESC = [("a/b", 1, "slash"), ("k=v", 2, "equals"), ("sp ace", 3, "space"), ("per%cent", 4, "percent"),
          ("co:lon", 5, "colon"), ("q?#", 6, "query"), ("ünï", 7, "unicode")]
case(
    "append-partition-escaping",
    "Partition values that must be escaped in the directory name; the true values come from _PARTITION.",
    rules=("PAIMON-PART-001", "PAIMON-PART-003", "PAIMON-PART-005"),
    steps=[Create(schema=PARTED, partition_by=("part",)), Append(rows=rows(PARTED, *_P_ESC))],
    expected=[Expected(rows=rows(PARTED, *_P_ESC))],
)

_P_NULL = [(None, 1, "null"), ("", 2, "empty"), ("  ", 3, "blank"), ("z", 4, "plain")]
case(
    "append-partition-null",
    "A null, an empty and a blank partition value: written to __DEFAULT_PARTITION__, read back as they were.",
    rules=("PAIMON-PART-002", "PAIMON-PART-005"),
    steps=[Create(schema=PARTED, partition_by=("part",)), Append(rows=rows(PARTED, *_P_NULL))],
    expected=[Expected(rows=rows(PARTED, *_P_NULL))],
    notes="The directory name of null, '' and '  ' is the default partition name for all three; the values "
          "readers return come from the manifests' _PARTITION rows, which keep them apart.",
)

MULTIPART = pa.schema([("region", pa.string()), ("day", pa.date32()), ("n", pa.int32()), ("v", pa.float64())])
_MP = [("eu", day("2024-01-01"), 1, 1.0), ("eu", day("2024-01-02"), 2, 2.0), ("us", day("2024-01-01"), 3, 3.0),
       ("us", None, 4, 4.0)]
case(
    "append-partition-two-keys",
    "Two partition keys (STRING and DATE): nested directories in declared order.",
    rules=("PAIMON-PART-001", "PAIMON-PART-004", "PAIMON-LAYOUT-012", "PAIMON-PART-006"),
    steps=[Create(schema=MULTIPART, partition_by=("region", "day")), Append(rows=rows(MULTIPART, *_MP))],
    expected=[Expected(rows=rows(MULTIPART, *_MP), metadata={"partition_keys": ["region", "day"]})],
)

case(
    "append-overwrite",
    "INSERT OVERWRITE of an append table: every earlier file deleted in one OVERWRITE commit.",
    rules=("PAIMON-SNAP-012", "PAIMON-MANIFEST-005", "PAIMON-MANIFEST-010"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Overwrite(rows=rows(BASIC, *B2))],
    expected=[Expected(version=1, rows=rows(BASIC, *B1)),
              Expected(rows=rows(BASIC, *B2), metadata={"commit_kind": "OVERWRITE"})],
)

case(
    "append-delete-rewrite",
    "DELETE on an append table without deletion vectors: the files holding matches are rewritten.",
    rules=("PAIMON-MANIFEST-010", "PAIMON-MANIFEST-011", "PAIMON-SNAP-015"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           Delete(where="number IN (2, 4)", how="copy-on-write")],
    expected=[Expected(version=2, rows=rows(BASIC, *B1, *B2)),
              Expected(rows=rows(BASIC, ("a", 1, 1.1), ("c", 3, 3.3), ("e", 5, 5.5)))],
)

case(
    "append-update-rewrite",
    "UPDATE on an append table: the files holding matches are rewritten with the new values.",
    rules=("PAIMON-MANIFEST-010",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Update(set={"a_float": "a_float * 10"}, where="number >= 2")],
    expected=[Expected(rows=rows(BASIC, ("a", 1, 1.1), ("b", 2, 22.0), ("c", 3, 33.0)))],
)

DV_APPEND = {"deletion-vectors.enabled": "true"}
case(
    "append-deletion-vectors",
    "DELETE on an append table with deletion vectors: a DV index file marks the deleted rows.",
    rules=("PAIMON-INDEX-002", "PAIMON-INDEX-003", "PAIMON-INDEX-004", "PAIMON-INDEX-006", "PAIMON-INDEX-008",
           "PAIMON-IDXMAN-003", "PAIMON-IDXMAN-004", "PAIMON-SNAP-011", "PAIMON-LAYOUT-006", "PAIMON-LAYOUT-007"),
    steps=[Create(schema=BASIC, properties=DV_APPEND), Append(rows=rows(BASIC, *B1, *B2)),
           Delete(where="number IN (1, 3)", how="deletion-vectors")],
    expected=[Expected(version=1, rows=rows(BASIC, *B1, *B2)),
              Expected(rows=rows(BASIC, ("b", 2, 2.2), ("d", 4, 4.4), ("e", 5, 5.5)))],
)

case(
    "append-deletion-vectors-bitmap64",
    "Deletion vectors in the 64-bit (Iceberg-compatible) bitmap layout.",
    rules=("PAIMON-INDEX-005", "PAIMON-INDEX-009", "PAIMON-INDEX-008"),
    steps=[Create(schema=BASIC, properties={**DV_APPEND, "deletion-vectors.bitmap64": "true"}),
           Append(rows=rows(BASIC, *B1, *B2)), Delete(where="letter = 'c'", how="deletion-vectors")],
    expected=[Expected(rows=rows(BASIC, ("a", 1, 1.1), ("b", 2, 2.2), ("d", 4, 4.4), ("e", 5, 5.5)))],
)

case(
    "append-deletion-vectors-twice",
    "Two deletes on one file: the second deletion vector replaces the first (index manifest DELETE + ADD).",
    rules=("PAIMON-IDXMAN-007", "PAIMON-SNAP-011", "PAIMON-INDEX-008"),
    steps=[Create(schema=BASIC, properties=DV_APPEND), Append(rows=rows(BASIC, *B1, *B2)),
           Delete(where="number = 1", how="deletion-vectors"), Delete(where="number = 5", how="deletion-vectors")],
    expected=[Expected(version=2, rows=rows(BASIC, ("b", 2, 2.2), ("c", 3, 3.3), ("d", 4, 4.4), ("e", 5, 5.5))),
              Expected(rows=rows(BASIC, ("b", 2, 2.2), ("c", 3, 3.3), ("d", 4, 4.4)))],
)

case(
    "append-compact",
    "Full compaction of an append table: three files become one (COMPACT), rows unchanged.",
    rules=("PAIMON-SNAP-012", "PAIMON-MANIFEST-027", "PAIMON-MANIFEST-028", "PAIMON-MANIFEST-010"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           Append(rows=rows(BASIC, ("f", 6, 6.6))), Optimize()],
    expected=[Expected(rows=rows(BASIC, *B1, *B2, ("f", 6, 6.6)), metadata={"commit_kind": "COMPACT"})],
)

case(
    "append-compact-after-deletion-vectors",
    "Compaction applies and drops the deletion vectors: the rewritten file holds only live rows.",
    rules=("PAIMON-SNAP-011", "PAIMON-INDEX-008", "PAIMON-IDXMAN-007"),
    steps=[Create(schema=BASIC, properties=DV_APPEND), Append(rows=rows(BASIC, *B1, *B2)),
           Delete(where="number < 3", how="deletion-vectors"), Optimize()],
    expected=[Expected(rows=rows(BASIC, ("c", 3, 3.3), ("d", 4, 4.4), ("e", 5, 5.5)))],
)

# --------------------------------------------------------------------------------------------
# Primary-key tables
# --------------------------------------------------------------------------------------------

case(
    "pk-upsert",
    "A primary-key table (deduplicate, 2 fixed buckets): a second commit updates one key and adds one.",
    rules=("PAIMON-DATA-001", "PAIMON-DATA-003", "PAIMON-DATA-004", "PAIMON-BUCKET-002", "PAIMON-BUCKET-003",
           "PAIMON-MANIFEST-017", "PAIMON-MANIFEST-018", "PAIMON-MANIFEST-020", "PAIMON-SCHEMA-022"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           Append(rows=rows(KEYED, (2, "TWO", 21), (4, "four", 40)))],
    expected=[
        Expected(version=1, rows=rows(KEYED, *K1)),
        Expected(rows=rows(KEYED, (1, "one", 10), (2, "TWO", 21), (3, "three", 30), (4, "four", 40)),
                 metadata={"primary_keys": ["id"], "bucket": 2, "merge_engine": "deduplicate", "snapshot_id": 2}),
    ],
)

case(
    "pk-upsert-same-commit",
    "One commit holding the same key twice: the later row of the input wins (higher sequence number).",
    rules=("PAIMON-DATA-004", "PAIMON-MANIFEST-020"),
    steps=[Create(schema=KEYED, properties=pk("id")),
           Append(rows=rows(KEYED, (1, "first", 1), (1, "second", 2), (2, "x", 3)))],
    expected=[Expected(rows=rows(KEYED, (1, "second", 2), (2, "x", 3)))],
)

case(
    "pk-delete",
    "DELETE on a primary-key table: -D records for the matching keys.",
    rules=("PAIMON-DATA-003", "PAIMON-DATA-004", "PAIMON-MANIFEST-025"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)), Delete(where="score >= 20")],
    expected=[Expected(version=1, rows=rows(KEYED, *K1)), Expected(rows=rows(KEYED, (1, "one", 10)))],
)

case(
    "pk-update",
    "UPDATE on a primary-key table: +U records with the new values.",
    rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           Update(set={"score": "score + 1", "name": "upper(name)"}, where="id <> 2")],
    expected=[Expected(rows=rows(KEYED, (1, "ONE", 11), (2, "two", 20), (3, "THREE", 31)))],
)

case(
    "pk-row-kinds",
    "One commit of +I, -U, +U and -D records (a CDC stream): retractions remove, +U replaces.",
    rules=("PAIMON-DATA-003", "PAIMON-DATA-004", "PAIMON-ROW-003"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           WriteChanges(rows=rows(KEYED, (1, "one", 10), (1, "uno", 11), (2, "two", 20), (4, "four", 40),
                                  (3, "three", 30)),
                        kinds=("-U", "+U", "-D", "+I", "-U"))],
    expected=[Expected(version=1, rows=rows(KEYED, *K1)),
              Expected(rows=rows(KEYED, (1, "uno", 11), (4, "four", 40)))],
    notes="A -U with no +U after it leaves the key retracted: deduplicate keeps the last record and drops "
          "the key when that record is a retraction.",
)

case(
    "pk-partitioned",
    "A partitioned primary-key table (the key includes the partition column; the bucket key is the rest).",
    rules=("PAIMON-SCHEMA-022", "PAIMON-BUCKET-003", "PAIMON-PART-006", "PAIMON-LAYOUT-012"),
    steps=[
        Create(schema=pa.schema([pa.field("part", pa.string(), nullable=False), pa.field("id", pa.int32(), nullable=False),
                                 ("value", pa.string())]),
               partition_by=("part",), properties=pk("part", "id")),
        Append(rows=rows(PARTED, *_P1)),
        Append(rows=rows(PARTED, ("x", 1, "a2"), ("y", 1, "new"))),
    ],
    expected=[Expected(rows=rows(PARTED, ("x", 1, "a2"), ("y", 2, "b"), ("x", 3, "c"), ("y", 1, "new")),
                       metadata={"primary_keys": ["part", "id"], "partition_keys": ["part"]})],
)

case(
    "pk-composite-key",
    "A two-column primary key (INT, STRING) in 3 buckets.",
    rules=("PAIMON-SCHEMA-022", "PAIMON-BUCKET-002", "PAIMON-MANIFEST-017"),
    steps=[
        Create(schema=pa.schema([pa.field("a", pa.int32(), nullable=False), pa.field("b", pa.string(), nullable=False),
                                 ("v", pa.int64())]),
               properties={**pk("a", "b"), "bucket": "3"}),
        Append(rows=rows(pa.schema([("a", pa.int32()), ("b", pa.string()), ("v", pa.int64())]),
                         (1, "x", 1), (1, "y", 2), (2, "x", 3))),
        Append(rows=rows(pa.schema([("a", pa.int32()), ("b", pa.string()), ("v", pa.int64())]), (1, "y", 20))),
    ],
    expected=[Expected(rows=rows(pa.schema([("a", pa.int32()), ("b", pa.string()), ("v", pa.int64())]),
                                 (1, "x", 1), (1, "y", 20), (2, "x", 3)), metadata={"bucket": 3})],
)

case(
    "pk-dynamic-bucket",
    "A primary-key table in dynamic bucket mode (bucket -1): key-to-bucket assignments in HASH index files.",
    rules=("PAIMON-BUCKET-001", "PAIMON-BUCKET-007", "PAIMON-INDEX-001", "PAIMON-IDXMAN-003", "PAIMON-IDXMAN-005"),
    steps=[Create(schema=KEYED, properties={"primary-key": "id"}), Append(rows=rows(KEYED, *K1)),
           Append(rows=rows(KEYED, (3, "THREE", 33), (5, "five", 50)))],
    expected=[Expected(rows=rows(KEYED, (1, "one", 10), (2, "two", 20), (3, "THREE", 33), (5, "five", 50)),
                       metadata={"bucket": -1})],
)

case(
    "pk-single-bucket",
    "A primary-key table with one bucket: every key in bucket-0.",
    rules=("PAIMON-BUCKET-001", "PAIMON-LAYOUT-010"),
    steps=[Create(schema=KEYED, properties={**pk("id"), "bucket": "1"}), Append(rows=rows(KEYED, *K1)),
           Delete(where="id = 1")],
    expected=[Expected(rows=rows(KEYED, (2, "two", 20), (3, "three", 30)), metadata={"bucket": 1})],
)

case(
    "pk-compact",
    "Full compaction of a primary-key table: the merged rows move to the top level, deletes dropped.",
    rules=("PAIMON-MANIFEST-022", "PAIMON-MANIFEST-027", "PAIMON-SNAP-012", "PAIMON-DATA-004"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           Append(rows=rows(KEYED, (1, "ONE", 11))), Delete(where="id = 3"), Optimize()],
    expected=[Expected(version=3, rows=rows(KEYED, (1, "ONE", 11), (2, "two", 20))),
              Expected(rows=rows(KEYED, (1, "ONE", 11), (2, "two", 20)), metadata={"commit_kind": "COMPACT"})],
)

case(
    "pk-overwrite",
    "INSERT OVERWRITE of a primary-key table.",
    rules=("PAIMON-SNAP-012", "PAIMON-MANIFEST-010"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           Overwrite(rows=rows(KEYED, (9, "nine", 90)))],
    expected=[Expected(version=1, rows=rows(KEYED, *K1)),
              Expected(rows=rows(KEYED, (9, "nine", 90)), metadata={"commit_kind": "OVERWRITE"})],
)

case(
    "pk-deletion-vectors-level0",
    "Deletion vectors on a primary-key table: level-0 files stay invisible until a compaction moves them up.",
    rules=("PAIMON-MANIFEST-022", "PAIMON-INDEX-010", "PAIMON-INDEX-008"),
    writers=LEVEL0_WRITERS,
    steps=[Create(schema=KEYED, properties=pk("id", **{"deletion-vectors.enabled": "true"})), Append(rows=rows(KEYED, *K1)),
           Optimize(), Append(rows=rows(KEYED, (1, "ONE", 11), (4, "four", 40)))],
    expected=[Expected(version=1, rows=empty(KEYED)), Expected(version=2, rows=rows(KEYED, *K1)),
              Expected(rows=rows(KEYED, *K1))],
    notes="With deletion vectors a reader merges nothing at read time: it reads the files above level 0, "
          "minus their deletion vectors. Rows committed at level 0 show after the next compaction (Java "
          "writers compact on commit for such tables).",
)

case(
    "pk-deletion-vectors-compacted",
    "A primary-key table with deletion vectors after updates and deletes, fully compacted.",
    rules=("PAIMON-INDEX-010", "PAIMON-INDEX-008", "PAIMON-DATA-004"),
    steps=[Create(schema=KEYED, properties=pk("id", **{"deletion-vectors.enabled": "true"})), Append(rows=rows(KEYED, *K1)),
           Optimize(), Append(rows=rows(KEYED, (1, "ONE", 11), (4, "four", 40))), Delete(where="id = 2"), Optimize()],
    expected=[Expected(rows=rows(KEYED, (1, "ONE", 11), (3, "three", 30), (4, "four", 40)))],
)

case(
    "pk-postpone-bucket",
    "bucket -2 (postpone): writes land in bucket-postpone/, invisible to batch reads until a compaction "
    "assigns real buckets.",
    rules=("PAIMON-BUCKET-001", "PAIMON-LAYOUT-010"),
    writers=LEVEL0_WRITERS,
    steps=[Create(schema=KEYED, properties={"primary-key": "id", "bucket": "-2"}), Append(rows=rows(KEYED, *K1)),
           Optimize(), Append(rows=rows(KEYED, (1, "ONE", 11), (4, "four", 40)))],
    expected=[Expected(version=1, rows=empty(KEYED)), Expected(version=2, rows=rows(KEYED, *K1), metadata={"bucket": -2}),
              Expected(rows=rows(KEYED, *K1))],
    notes="Java's batch jobs write real buckets directly (postpone.batch-write-fixed-bucket); streaming writers "
          "and pypaimon write the postpone directory, which a batch read skips until compaction.",
)

for _fmt in ("orc", "avro"):
    case(
        f"file-format-{_fmt}",
        f"Data files in {_fmt.upper()} (file.format={_fmt}), an append and a primary-key table's upsert.",
        rules=("PAIMON-DATA-007", "PAIMON-SCHEMA-007", "PAIMON-DATA-001"),
        steps=[Create(schema=KEYED, properties=pk("id", **{"file.format": _fmt})), Append(rows=rows(KEYED, *K1)),
               Append(rows=rows(KEYED, (2, "TWO", None), (4, "four", 40)))],
        expected=[Expected(version=1, rows=rows(KEYED, *K1)),
                  Expected(rows=rows(KEYED, (1, "one", 10), (2, "TWO", None), (3, "three", 30), (4, "four", 40)),
                           metadata={"options": {"file.format": _fmt}})],
    )

# --------------------------------------------------------------------------------------------
# Merge engines, sequence and row-kind fields
# --------------------------------------------------------------------------------------------

PU = pa.schema([pa.field("id", pa.int32(), nullable=False), ("a", pa.string()), ("b", pa.int64()), ("c", pa.float64())])
case(
    "merge-partial-update",
    "partial-update: each commit fills the columns it has non-null; nulls keep the earlier values.",
    rules=("PAIMON-DATA-004",),
    steps=[Create(schema=PU, properties=pk("id", merge_engine="partial-update")),
           Append(rows=rows(PU, (1, "a1", None, None), (2, None, 20, None))),
           Append(rows=rows(PU, (1, None, 10, None), (2, "a2", None, 2.5))),
           Append(rows=rows(PU, (1, "a1b", None, 1.5)))],
    expected=[Expected(version=1, rows=rows(PU, (1, "a1", None, None), (2, None, 20, None))),
              Expected(rows=rows(PU, (1, "a1b", 10, 1.5), (2, "a2", 20, 2.5)),
                       metadata={"merge_engine": "partial-update"})],
)

case(
    "merge-partial-update-remove-on-delete",
    "partial-update with partial-update.remove-record-on-delete: a -D removes the row.",
    rules=("PAIMON-DATA-003",),
    steps=[Create(schema=PU, properties=pk("id", merge_engine="partial-update",
                                            **{"partial-update.remove-record-on-delete": "true"})),
           Append(rows=rows(PU, (1, "a", 1, 1.0), (2, "b", 2, 2.0))),
           WriteChanges(rows=rows(PU, (1, None, None, None)), kinds=("-D",))],
    expected=[Expected(rows=rows(PU, (2, "b", 2, 2.0)))],
)

case(
    "merge-partial-update-reinsert-after-delete",
    "partial-update with partial-update.remove-record-on-delete: a key inserted again after its -D starts afresh.",
    rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
    steps=[Create(schema=PU, properties=pk("id", merge_engine="partial-update",
                                            **{"partial-update.remove-record-on-delete": "true"})),
           Append(rows=rows(PU, (1, "a", 1, 1.0), (2, "b", 2, 2.0))),
           WriteChanges(rows=rows(PU, (1, "a", 1, 1.0)), kinds=("-D",)),
           WriteChanges(rows=rows(PU, (1, None, 10, None)), kinds=("+I",))],
    expected=[Expected(version=2, rows=rows(PU, (2, "b", 2, 2.0))),
              Expected(rows=rows(PU, (1, None, 10, None), (2, "b", 2, 2.0)))],
    notes="The -D carries the deleted row's values, as a DELETE statement writes it. The option 'removes the whole "
          "row' (docs primary-key-table/merge-engine/partial-update), so the later +I is the first record of a new "
          "row: its null columns stay null. Paimon 1.4.1+ builds on the -D's values instead (a, 10, 1.0).",
)

AGG = pa.schema([pa.field("id", pa.int32(), nullable=False), ("total", pa.int64()), ("peak", pa.int32()),
                 ("low", pa.float64()), ("last", pa.string()), ("note", pa.string())])
case(
    "merge-aggregation",
    "aggregation: sum, max, min, last_value and the default last_non_null_value, per column.",
    rules=("PAIMON-DATA-004",),
    steps=[Create(schema=AGG, properties=pk("id", merge_engine="aggregation", **{
               "fields.total.aggregate-function": "sum", "fields.peak.aggregate-function": "max",
               "fields.low.aggregate-function": "min", "fields.last.aggregate-function": "last_value"})),
           Append(rows=rows(AGG, (1, 10, 5, 2.5, "x", "n1"), (2, 1, 1, 1.0, "y", None))),
           Append(rows=rows(AGG, (1, 5, 3, 0.5, None, None), (2, None, 7, None, "z", "n2")))],
    expected=[Expected(rows=rows(AGG, (1, 15, 5, 0.5, None, "n1"), (2, 1, 7, 1.0, "z", "n2")),
                       metadata={"merge_engine": "aggregation"})],
    notes="Aggregators ignore null inputs except last_value, which takes the latest value even when null.",
)

case(
    "merge-aggregation-retract",
    "aggregation with -U/+U input: sum retracts the old value and adds the new one.",
    rules=("PAIMON-DATA-003",),
    steps=[Create(schema=pa.schema([pa.field("id", pa.int32(), nullable=False), ("total", pa.int64())]),
                  properties=pk("id", merge_engine="aggregation", **{"fields.total.aggregate-function": "sum"})),
           Append(rows=rows(pa.schema([("id", pa.int32()), ("total", pa.int64())]), (1, 10), (2, 5))),
           WriteChanges(rows=rows(pa.schema([("id", pa.int32()), ("total", pa.int64())]), (1, 10), (1, 4)),
                        kinds=("-U", "+U"))],
    expected=[Expected(rows=rows(pa.schema([("id", pa.int32()), ("total", pa.int64())]), (1, 4), (2, 5)))],
)

SUM = pa.schema([pa.field("id", pa.int32(), nullable=False), ("total", pa.int64())])
case(
    "merge-aggregation-lone-retraction",
    "aggregation: a key whose only record is a -U still aggregates (sum retracts from nothing: -3).",
    rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
    steps=[Create(schema=SUM, properties=pk("id", merge_engine="aggregation", **{"fields.total.aggregate-function": "sum"})),
           WriteChanges(rows=rows(SUM, (1, 10), (2, 3)), kinds=("+I", "-U"))],
    expected=[Expected(rows=rows(SUM, (1, 10), (2, -3)))],
    notes="Paimon's current Java source merges every key of an aggregation table through AggregateMergeFunction, "
          "a key with a single record too (ReducerMergeFunctionWrapper), and its result is an INSERT; sum's "
          "retract of 3 from a null accumulator is -3 (FieldSumAgg).",
)

case(
    "neg-aggregation-conflicting-retract-options",
    "aggregation.remove-record-on-delete together with a field's ignore-retract: options Paimon refuses together.",
    rules=("PAIMON-SCHEMA-010",),
    steps=[Create(schema=SUM, properties=pk("id", merge_engine="aggregation",
                                            **{"fields.total.aggregate-function": "sum"})),
           Append(rows=rows(SUM, (1, 10), (2, 3))), Append(rows=rows(SUM, (1, 5))),
           _raw(raw.edit_schema(0, lambda s: s["options"].update({"aggregation.remove-record-on-delete": "true",
                                                                  "fields.total.ignore-retract": "true"})),
                "the two conflicting options set in the schema")],
    expected=[Expected(error="invalid_table")],
    violates=("PAIMON-SCHEMA-010",),
    notes="Paimon's FieldAggregatorFactory refuses the pair for every field ('have conflicting behavior'): a record "
          "removed on delete cannot also ignore retractions. Java refuses only once a key has records to merge, so "
          "the table holds two commits of key 1.",
)

SUM_NOTE = pa.schema([pa.field("id", pa.int32(), nullable=False), ("total", pa.int64()), ("note", pa.string())])
case(
    "merge-aggregation-reinsert-after-delete",
    "aggregation with aggregation.remove-record-on-delete: a key inserted again after its -D aggregates afresh.",
    rules=("PAIMON-DATA-003", "PAIMON-DATA-004"),
    steps=[Create(schema=SUM_NOTE, properties=pk("id", merge_engine="aggregation", **{
               "fields.total.aggregate-function": "sum", "aggregation.remove-record-on-delete": "true"})),
           Append(rows=rows(SUM_NOTE, (1, 10, "x"), (2, 5, "y"))),
           WriteChanges(rows=rows(SUM_NOTE, (1, 10, "x")), kinds=("-D",)),
           WriteChanges(rows=rows(SUM_NOTE, (1, 3, None)), kinds=("+I",))],
    expected=[Expected(version=2, rows=rows(SUM_NOTE, (2, 5, "y"))),
              Expected(rows=rows(SUM_NOTE, (1, 3, None), (2, 5, "y")))],
    notes="The option 'removes the whole row' when a -D arrives (CoreOptions aggregation.remove-record-on-delete), "
          "so the later +I is aggregated from nothing: sum 3, and note (last_non_null_value) stays null. "
          "Paimon 1.4.1+ aggregates onto the -D's values instead (total 13, note 'x').",
)

case(
    "merge-first-row",
    "first-row: the first record of a key wins; level-0 files are invisible until compacted.",
    rules=("PAIMON-DATA-004", "PAIMON-MANIFEST-022"),
    writers=LEVEL0_WRITERS,
    steps=[Create(schema=KEYED, properties=pk("id", merge_engine="first-row")), Append(rows=rows(KEYED, *K1)),
           Append(rows=rows(KEYED, (1, "later", 99), (4, "four", 40))), Optimize()],
    expected=[Expected(version=1, rows=empty(KEYED)),
              Expected(rows=rows(KEYED, *K1, (4, "four", 40)), metadata={"merge_engine": "first-row"})],
)

SEQ = pa.schema([pa.field("id", pa.int32(), nullable=False), ("v", pa.string()), ("ts", pa.int64())])
case(
    "merge-sequence-field",
    "sequence.field: the record with the larger ts wins, whatever the commit order.",
    rules=("PAIMON-DATA-004",),
    steps=[Create(schema=SEQ, properties=pk("id", **{"sequence.field": "ts"})),
           Append(rows=rows(SEQ, (1, "new", 200), (2, "old", 100))),
           Append(rows=rows(SEQ, (1, "stale", 100), (2, "newer", 300)))],
    expected=[Expected(rows=rows(SEQ, (1, "new", 200), (2, "newer", 300)))],
    notes="Equal sequence.field values fall back to the sequence number (the later commit).",
)

case(
    "merge-sequence-field-tie",
    "sequence.field ties: the later commit wins.",
    rules=("PAIMON-DATA-004",),
    steps=[Create(schema=SEQ, properties=pk("id", **{"sequence.field": "ts"})),
           Append(rows=rows(SEQ, (1, "first", 100))), Append(rows=rows(SEQ, (1, "second", 100)))],
    expected=[Expected(rows=rows(SEQ, (1, "second", 100)))],
)

RK = pa.schema([pa.field("id", pa.int32(), nullable=False), ("v", pa.string()), ("op", pa.string())])
case(
    "merge-rowkind-field",
    "rowkind.field: the row kind comes from a column ('+I', '-U', '+U', '-D').",
    rules=("PAIMON-DATA-003",),
    steps=[Create(schema=RK, properties=pk("id", **{"rowkind.field": "op"})),
           Append(rows=rows(RK, (1, "a", "+I"), (2, "b", "+I"), (3, "c", "+I"))),
           Append(rows=rows(RK, (1, "a", "-D"), (2, "b2", "+U")))],
    expected=[Expected(rows=rows(RK, (2, "b2", "+U"), (3, "c", "+I")))],
)

case(
    "merge-ignore-delete",
    "ignore-delete: -D records are dropped, the rows stay.",
    rules=("PAIMON-DATA-003",),
    steps=[Create(schema=KEYED, properties=pk("id", ignore_delete="true")), Append(rows=rows(KEYED, *K1)),
           WriteChanges(rows=rows(KEYED, (1, "one", 10), (2, "TWO", 22)), kinds=("-D", "+U"))],
    expected=[Expected(rows=rows(KEYED, (1, "one", 10), (2, "TWO", 22), (3, "three", 30)))],
)

case(
    "changelog-producer-input",
    "changelog-producer=input: the commit also writes changelog files; reads of the table are unchanged.",
    rules=("PAIMON-DATA-006", "PAIMON-MANIFEST-013", "PAIMON-SNAP-010"),
    steps=[Create(schema=KEYED, properties=pk("id", changelog_producer="input")), Append(rows=rows(KEYED, *K1)),
           Update(set={"score": "0"}, where="id = 1")],
    expected=[Expected(rows=rows(KEYED, (1, "one", 0), (2, "two", 20), (3, "three", 30)),
                       metadata={"options": {"changelog-producer": "input"}})],
)

# --------------------------------------------------------------------------------------------
# Schema evolution (read by field id)
# --------------------------------------------------------------------------------------------

case(
    "evolve-add-column",
    "ADD COLUMN: old files read the new column as null.",
    rules=("PAIMON-SCHEMA-006", "PAIMON-SCHEMA-007", "PAIMON-SCHEMA-014", "PAIMON-MANIFEST-021", "PAIMON-STATS-008"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), AddColumn(field=pa.field("extra", pa.string())),
           Append(rows=rows(BASIC.append(pa.field("extra", pa.string())), ("d", 4, 4.4, "new")))],
    expected=[
        Expected(version=1, rows=rows(BASIC, *B1), metadata={"schema_id": 0}),
        Expected(rows=rows(BASIC.append(pa.field("extra", pa.string())), *[r + (None,) for r in B1], ("d", 4, 4.4, "new")),
                 metadata={"schema_id": 1}),
    ],
)

case(
    "evolve-drop-column",
    "DROP COLUMN: the column disappears from reads of the latest snapshot; older snapshots keep it.",
    rules=("PAIMON-SCHEMA-007", "PAIMON-SCHEMA-015"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), DropColumn(name="a_float"),
           Append(rows=rows(pa.schema([("letter", pa.string()), ("number", pa.int64())]), ("d", 4)))],
    expected=[Expected(version=1, rows=rows(BASIC, *B1)),
              Expected(rows=rows(pa.schema([("letter", pa.string()), ("number", pa.int64())]),
                                 ("a", 1), ("b", 2), ("c", 3), ("d", 4)))],
)

case(
    "evolve-rename-column",
    "RENAME COLUMN: old files are matched by field id, not by name.",
    rules=("PAIMON-SCHEMA-007", "PAIMON-SCHEMA-006"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), RenameColumn(old="number", new="n"),
           Append(rows=rows(pa.schema([("letter", pa.string()), ("n", pa.int64()), ("a_float", pa.float64())]),
                            ("d", 4, 4.4)))],
    expected=[Expected(rows=rows(pa.schema([("letter", pa.string()), ("n", pa.int64()), ("a_float", pa.float64())]),
                                 *B1, ("d", 4, 4.4)))],
)

case(
    "evolve-drop-readd",
    "DROP then ADD a column of the same name: a new field id, so old values do not come back.",
    rules=("PAIMON-SCHEMA-006", "PAIMON-SCHEMA-007"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), DropColumn(name="a_float"),
           AddColumn(field=pa.field("a_float", pa.float64())),
           Append(rows=rows(BASIC, ("d", 4, 4.4)))],
    expected=[Expected(rows=rows(BASIC, ("a", 1, None), ("b", 2, None), ("c", 3, None), ("d", 4, 4.4)))],
)

INTS = pa.schema([("id", pa.int32()), ("small", pa.int32()), ("f", pa.float32())])
case(
    "evolve-type-promotion",
    "INT -> BIGINT and FLOAT -> DOUBLE: old files are cast on read.",
    rules=("PAIMON-SCHEMA-007", "PAIMON-MANIFEST-021"),
    steps=[Create(schema=INTS), Append(rows=rows(INTS, (1, 2**31 - 1, 1.5), (2, -5, None))),
           ChangeColumnType(name="small", type=pa.int64()), ChangeColumnType(name="f", type=pa.float64()),
           Append(rows=rows(pa.schema([("id", pa.int32()), ("small", pa.int64()), ("f", pa.float64())]), (3, 2**40, 0.25)))],
    expected=[Expected(rows=rows(pa.schema([("id", pa.int32()), ("small", pa.int64()), ("f", pa.float64())]),
                                 (1, 2**31 - 1, 1.5), (2, -5, None), (3, 2**40, 0.25)))],
)

case(
    "evolve-move-column",
    "Moving a column first: reads follow the new order; old files by field id.",
    rules=("PAIMON-SCHEMA-007",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), MoveColumn(name="a_float", after=None)],
    expected=[Expected(rows=rows(pa.schema([("a_float", pa.float64()), ("letter", pa.string()), ("number", pa.int64())]),
                                 (1.1, "a", 1), (2.2, "b", 2), (3.3, "c", 3)))],
)

case(
    "evolve-primary-key-table",
    "ADD COLUMN on a primary-key table, then an upsert of an old key fills it.",
    rules=("PAIMON-SCHEMA-007", "PAIMON-SCHEMA-009"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           AddColumn(field=pa.field("flag", pa.bool_())),
           Append(rows=rows(KEYED.append(pa.field("flag", pa.bool_())), (2, "two", 22, True)))],
    expected=[Expected(rows=rows(KEYED.append(pa.field("flag", pa.bool_())),
                                 (1, "one", 10, None), (2, "two", 22, True), (3, "three", 30, None)),
                       metadata={"primary_keys": ["id"], "schema_id": 1})],
)

case(
    "set-options",
    "ALTER TABLE SET options: a new schema file; the next snapshot records it.",
    rules=("PAIMON-SCHEMA-014", "PAIMON-SCHEMA-010", "PAIMON-SNAP-008"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)),
           SetProperties(properties={"snapshot.num-retained.max": "50", "owner.note": "x y"}),
           Append(rows=rows(BASIC, *B2))],
    expected=[Expected(version=1, rows=rows(BASIC, *B1), metadata={"schema_id": 0}),
              Expected(rows=rows(BASIC, *B1, *B2), metadata={
                  "schema_id": 1, "options": {"snapshot.num-retained.max": "50", "owner.note": "x y"}})],
)

# --------------------------------------------------------------------------------------------
# Time travel, tags, branches, expiry
# --------------------------------------------------------------------------------------------

case(
    "travel-snapshot-id",
    "Reading each snapshot by id, across an append, an update and a delete.",
    rules=("PAIMON-SNAP-001", "PAIMON-SNAP-009"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           Update(set={"name": "'changed'"}, where="id = 1"), Delete(where="id = 2")],
    expected=[Expected(version=0, rows=empty(KEYED)), Expected(version=1, rows=rows(KEYED, *K1)),
              Expected(version=2, rows=rows(KEYED, (1, "changed", 10), (2, "two", 20), (3, "three", 30))),
              Expected(version=3, rows=rows(KEYED, (1, "changed", 10), (3, "three", 30)))],
)

case(
    "travel-tag",
    "A tag on snapshot 1 keeps reading snapshot 1 after later commits.",
    rules=("PAIMON-LAYOUT-001",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), CreateRef(name="v1", kind="tag"),
           Append(rows=rows(BASIC, *B2))],
    expected=[Expected(ref="v1", rows=rows(BASIC, *B1), metadata={"snapshot_id": 1}),
              Expected(rows=rows(BASIC, *B1, *B2))],
)

case(
    "travel-tag-older-snapshot",
    "A tag created later on an older snapshot id.",
    rules=("PAIMON-LAYOUT-001",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           CreateRef(name="first", kind="tag", version=1)],
    expected=[Expected(ref="first", rows=rows(BASIC, *B1)), Expected(rows=rows(BASIC, *B1, *B2))],
)

_T0 = "2024-01-01T00:00:00+00:00"
case(
    "travel-timestamp",
    "Reading as of an instant: the newest snapshot committed at or before it (commit times pinned a day apart).",
    rules=("PAIMON-SNAP-001",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           Append(rows=rows(BASIC, ("f", 6, 6.6))),
           _raw(raw.pin_commit_times(ms(_T0), 86_400_000), "snapshot N committed at 2024-01-01 + (N-1) days")],
    expected=[Expected(timestamp="2024-01-01T00:00:00+00:00", rows=rows(BASIC, *B1)),
              Expected(timestamp="2024-01-02T12:00:00+00:00", rows=rows(BASIC, *B1, *B2)),
              Expected(timestamp="2024-01-03T00:00:00+00:00", rows=rows(BASIC, *B1, *B2, ("f", 6, 6.6))),
              Expected(timestamp="2030-01-01T00:00:00+00:00", rows=rows(BASIC, *B1, *B2, ("f", 6, 6.6)))],
    notes="An instant before the first commit is left out: Java fails the read, others return no rows.",
)

case(
    "branch-append",
    "A branch from snapshot 1 takes its own commit; main does not see it, and the branch does not see main's.",
    rules=("PAIMON-LAYOUT-001",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), CreateRef(name="dev", kind="branch", version=1),
           Append(rows=rows(BASIC, ("x", 9, 9.9)), branch="dev"), Append(rows=rows(BASIC, *B2))],
    expected=[Expected(ref="dev", rows=rows(BASIC, *B1, ("x", 9, 9.9))), Expected(rows=rows(BASIC, *B1, *B2))],
)

case(
    "branch-primary-key",
    "A branch of a primary-key table: an upsert on the branch leaves main unchanged.",
    rules=("PAIMON-LAYOUT-001", "PAIMON-DATA-004"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           CreateRef(name="b1", kind="branch"), Append(rows=rows(KEYED, (1, "branch", 0)), branch="b1")],
    expected=[Expected(ref="b1", rows=rows(KEYED, (1, "branch", 0), (2, "two", 20), (3, "three", 30))),
              Expected(rows=rows(KEYED, *K1))],
)

case(
    "expire-snapshots",
    "Expiring all but the newest snapshot: older ids can no longer be read.",
    rules=("PAIMON-SNAP-003", "PAIMON-SNAP-004", "PAIMON-SCHEMA-016"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           Append(rows=rows(BASIC, ("f", 6, 6.6))), ExpireSnapshots(retain_last=1)],
    expected=[Expected(version=1, error="invalid_table"), Expected(version=2, error="invalid_table"),
              Expected(rows=rows(BASIC, *B1, *B2, ("f", 6, 6.6)), metadata={"snapshot_id": 3})],
)

case(
    "expire-keeps-tagged",
    "A tag keeps its snapshot's files readable after the snapshot itself expires.",
    rules=("PAIMON-SNAP-003", "PAIMON-LAYOUT-009"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)), CreateRef(name="t1", kind="tag"),
           Delete(where="id = 1"), Optimize(), ExpireSnapshots(retain_last=1)],
    expected=[Expected(ref="t1", rows=rows(KEYED, *K1)), Expected(version=1, error="invalid_table"),
              Expected(rows=rows(KEYED, (2, "two", 20), (3, "three", 30)))],
)

# --------------------------------------------------------------------------------------------
# Hints, old layouts, unknown keys
# --------------------------------------------------------------------------------------------

case(
    "hint-stale",
    "LATEST names snapshot 1 while snapshot 2 exists: readers must look past a stale hint.",
    rules=("PAIMON-SNAP-003", "PAIMON-SNAP-004"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           _raw(raw.set_hint("LATEST", "1"), "LATEST = 1")],
    expected=[Expected(rows=rows(BASIC, *B1, *B2), metadata={"snapshot_id": 2})],
)

case(
    "hint-missing",
    "No LATEST or EARLIEST hint: readers list the snapshot directory.",
    rules=("PAIMON-SNAP-003", "PAIMON-SNAP-004"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           _raw(raw.delete_hints(), "delete LATEST and EARLIEST")],
    expected=[Expected(rows=rows(BASIC, *B1, *B2), metadata={"snapshot_id": 2})],
)

case(
    "hint-garbage",
    "A LATEST hint that is not a number: readers fall back to listing.",
    rules=("PAIMON-SNAP-004",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           _raw(raw.set_hint("LATEST", "not-a-number\n"), "LATEST = 'not-a-number'"),
           _raw(raw.set_hint("EARLIEST", ""), "EARLIEST empty")],
    expected=[Expected(rows=rows(BASIC, *B1, *B2))],
    violates=("PAIMON-SNAP-003",),
)

case(
    "hint-ahead",
    "LATEST names a snapshot that does not exist (a crashed commit's hint): readers list.",
    rules=("PAIMON-SNAP-003", "PAIMON-SNAP-004"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.set_hint("LATEST", "7"), "LATEST = 7")],
    expected=[Expected(rows=rows(BASIC, *B1), metadata={"snapshot_id": 1}, error_allowed="invalid_table")],
    notes="PAIMON-SNAP-004 lets a reader trust LATEST when snapshot-<LATEST+1> does not exist; Java does, and "
          "fails on the missing snapshot-7. Listing finds snapshot 1: those rows are the better answer, the "
          "refusal is conformant to the rule as written.",
)

case(
    "snapshot-unknown-keys",
    "Snapshot JSON with keys from a future release and an optional key missing: ignored and read as null.",
    rules=("PAIMON-SNAP-013", "PAIMON-SNAP-020", "PAIMON-SNAP-019"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)),
           _raw(raw.edit_snapshot(1, {"futureField": {"nested": [1, 2]}, "anotherOne": "x"},
                                  remove=("uuid", "baseManifestListSize", "deltaManifestListSize")),
                "snapshot-1 gains two unknown keys, loses uuid and the manifest-list sizes")],
    expected=[Expected(rows=rows(BASIC, *B1))],
)

case(
    "schema-legacy-v1",
    "A schema file of an early release: no 'version' (so v1), no 'bucket' (so 1 bucket), no 'file.format'.",
    rules=("PAIMON-SCHEMA-011", "PAIMON-SCHEMA-012", "PAIMON-SCHEMA-013"),
    steps=[Create(schema=KEYED, properties={**pk("id"), "bucket": "1"}), Append(rows=rows(KEYED, *K1)),
           _raw(raw.legacy_schema(0, version=None, drop_options=("bucket", "file.format")),
                "schema-0 without version, bucket and file.format")],
    expected=[Expected(rows=rows(KEYED, *K1), metadata={"bucket": 1})],
    notes="The implied file.format is ORC for v1/v2 schemas, but a data file's format is named by its "
          "extension; these files are Parquet and read as such.",
)

case(
    "schema-v2",
    "A version-2 schema file with a bucket option: read like the current version.",
    rules=("PAIMON-SCHEMA-003", "PAIMON-SCHEMA-013"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)),
           _raw(raw.legacy_schema(0, version=2), "schema-0 as version 2")],
    expected=[Expected(rows=rows(BASIC, *B1))],
)

for _release in ("0.8", "0.9", "1.0", "1.3"):
    case(
        f"manifests-release-{_release.replace('.', '-')}",
        f"Manifests written with the Avro schema of Paimon {_release} (fewer _FILE fields): readers decode each "
        f"file by its own writer schema.",
        rules=("PAIMON-MANIFEST-035", "PAIMON-MANIFEST-034", "PAIMON-MLIST-004"),
        steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
               Append(rows=rows(KEYED, (1, "ONE", 11))),
               _raw(raw.manifests_as_of_release(_release), f"manifests re-encoded with the {_release} schema")],
        expected=[Expected(version=1, rows=rows(KEYED, *K1)),
                  Expected(rows=rows(KEYED, (1, "ONE", 11), (2, "two", 20), (3, "three", 30)))],
    )

case(
    "orphan-data-file",
    "A data file in a bucket directory that no manifest names: readers must ignore it.",
    rules=("PAIMON-LAYOUT-009",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           _raw(raw.orphan_copy(2), "copy snapshot 2's data file under a name no manifest knows")],
    expected=[Expected(rows=rows(BASIC, *B1, *B2))],
)

# --------------------------------------------------------------------------------------------
# Negative cases
# --------------------------------------------------------------------------------------------

case(
    "neg-snapshot-missing",
    "A snapshot id that was never written: the read fails as an invalid table.",
    rules=("PAIMON-SNAP-001",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1))],
    expected=[Expected(version=5, error="invalid_table"), Expected(rows=rows(BASIC, *B1))],
)

case(
    "neg-schema-missing",
    "The snapshot's schema file is gone.",
    rules=("PAIMON-SNAP-008", "PAIMON-SCHEMA-016"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), SetProperties(properties={"a": "b"}),
           _raw(raw.delete_file(raw.schema_path(0)), "delete schema/schema-0")],
    expected=[Expected(error="invalid_table")],
    violates=("PAIMON-SNAP-008", "PAIMON-SCHEMA-001"),
)

case(
    "neg-schema-id-unknown",
    "The snapshot names schema 7, which does not exist.",
    rules=("PAIMON-SNAP-008",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.edit_snapshot(1, {"schemaId": 7}), "schemaId = 7")],
    expected=[Expected(rows=rows(BASIC, *B1), error_allowed="invalid_table")],
    violates=("PAIMON-SNAP-008",),
    notes="A read of the latest state projects the latest schema and each file's own _SCHEMA_ID, never the "
          "snapshot's schemaId, so the rows are the lenient answer (Java and pypaimon give them); refusing the "
          "table is conformant too. The validator flags it.",
)

case(
    "neg-snapshot-id-mismatch",
    "snapshot-2 says its id is 5.",
    rules=("PAIMON-SNAP-007",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           _raw(raw.edit_snapshot(2, {"id": 5}), "snapshot-2: id = 5")],
    expected=[Expected(rows=rows(BASIC, *B1, *B2), error_allowed="invalid_table")],
    violates=("PAIMON-SNAP-007",),
    notes="The rule binds writers; the spec does not ask readers to check it, and Java and pypaimon read the "
          "file's content. Refusing the table is conformant too. The validator flags it.",
)

case(
    "neg-snapshot-not-json",
    "The latest snapshot file is not JSON.",
    rules=("PAIMON-SNAP-005",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2)),
           _raw(raw.write_file(raw.snapshot_path(2), b'{"version": 3, "id": 2,'), "snapshot-2 truncated")],
    expected=[Expected(error="invalid_table")],
    violates=("PAIMON-SNAP-005",),
)

case(
    "neg-duplicate-field-ids",
    "Two fields of the schema share id 0.",
    rules=("PAIMON-SCHEMA-006",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)),
           _raw(raw.edit_schema(0, lambda n: n["fields"][1].update(id=n["fields"][0]["id"])), "fields[1].id = fields[0].id")],
    expected=[Expected(error="invalid_table")],
    violates=("PAIMON-SCHEMA-006",),
)

case(
    "neg-data-file-missing",
    "A manifest names a data file that does not exist.",
    rules=("PAIMON-LAYOUT-010", "PAIMON-LAYOUT-009"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.delete_data_file(1), "delete the data file")],
    expected=[Expected(error="invalid_table")],
    violates=("PAIMON-LAYOUT-010",),
)

case(
    "neg-manifest-missing",
    "A manifest list names a manifest that does not exist.",
    rules=("PAIMON-MLIST-005",),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.delete_delta_manifest(1), "delete the manifest")],
    expected=[Expected(error="invalid_table")],
    violates=("PAIMON-MLIST-005",),
)

case(
    "neg-unknown-merge-engine",
    "merge-engine 'bogus': not one of the engines the spec defines; a reader must refuse, not guess.",
    rules=("PAIMON-DATA-004",),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           _raw(raw.edit_schema(0, lambda n: n["options"].update({"merge-engine": "bogus"})), "merge-engine = bogus")],
    expected=[Expected(error="invalid_table")],
    violates=("PAIMON-SCHEMA-010",),
    notes="The option's values are enumerated by the spec (deduplicate, partial-update, aggregation, first-row); "
          "a value outside them makes the table invalid for this version of the spec.",
)

case(
    "neg-bucket-out-of-range",
    "A file of a 2-bucket table recorded in bucket 5 (beyond _TOTAL_BUCKETS).",
    rules=("PAIMON-BUCKET-008", "PAIMON-MANIFEST-008"),
    steps=[Create(schema=KEYED, properties=pk("id")), Append(rows=rows(KEYED, *K1)),
           _raw(raw.set_manifest_bucket(1, 5), "the entries of snapshot 1 claim bucket 5")],
    expected=[Expected(rows=rows(KEYED, *K1), error_allowed="invalid_table")],
    violates=("PAIMON-MANIFEST-007",),
    notes="Readers take buckets from the manifests (BUCKET-008), so the rows are the lenient answer; refusing "
          "the table is conformant too.",
)

case(
    "neg-deletion-vector-corrupt",
    "A deletion vector whose CRC-32 does not match its bitmap.",
    rules=("PAIMON-INDEX-003", "PAIMON-INDEX-007"),
    steps=[Create(schema=BASIC, properties=DV_APPEND), Append(rows=rows(BASIC, *B1)),
           Delete(where="number = 1", how="deletion-vectors"), _raw(raw.corrupt_index_files(), "flip a bitmap byte")],
    expected=[Expected(version=1, rows=rows(BASIC, *B1)), Expected(error="invalid_table")],
    violates=("PAIMON-INDEX-003",),
)


def cases() -> list[Case]:
    """Every Paimon case, in corpus order."""
    return list(_CASES)

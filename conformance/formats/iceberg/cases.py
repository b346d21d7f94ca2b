"""The Iceberg case corpus: one feature or edge of format/spec.md per case, with declared expectations.

Every expectation here is the spec's answer, written by hand: rows are never computed by a
reader. The cases cover format versions 1, 2 and 3 (``Create.properties["format-version"]``):
every primitive type and the nested ones, hidden partition transforms and partition evolution,
each kind of schema evolution (read by field id afterwards), every delete mechanism
(copy-on-write, position deletes, equality deletes, deletion vectors), branches, tags, time
travel, snapshot expiry, and negative metadata fixtures built by raw steps (``iceberg_raw``).

Versions follow the kit's Iceberg numbering (contracts): version 0 is the table before its first
snapshot; version N >= 1 is the snapshot on the main branch's ancestry whose sequence number is N
(v2, v3), or the N-th snapshot from the root of the main ancestry (v1). Every step that commits
data (``Append``, ``Overwrite``, ``Delete``, ``Update``, ``Optimize``) takes the next sequence
number, also when it commits to a branch (so a branch commit leaves a gap in main's numbers);
metadata-only steps (schema and partition changes, properties, refs, expiry) and raw steps take
none. A version that was never on main, or was expired, is an ``invalid_table`` error.

Metadata keys an ``Expected`` may declare (``conformance/formats/iceberg/facts.py``):
``format_version`` (int), ``partition_spec`` (the default spec as partition expressions),
``schema_id``, ``properties`` (keys that must be present with these values), ``refs``
({name: "branch"|"tag"}) and ``operation`` (the read snapshot's summary operation).

Reads at an older version use that snapshot's schema (its ``schema-id``), as the Java and Python
implementations do; the spec records the id (Snapshots, ``schema-id``) without saying which schema
a time-travel read projects, so the corpus declares the common answer and says so in the notes.

Arrow spelling of Iceberg types in the steps: ``int32`` int, ``int64`` long, ``float32`` float,
``float64`` double, ``decimal128(P, S)``, ``date32`` date, ``time64("us")`` time,
``timestamp("us")`` timestamp, ``timestamp("us", tz="UTC")`` timestamptz, the ``"ns"`` units for
the v3 nanosecond types, ``string``, ``binary``, ``binary(L)`` fixed[L], ``pa.uuid()`` uuid and
``null`` unknown. A uuid column is declared as ``binary(16)`` in the expected rows: Arrow's uuid
is an extension type over those 16 bytes, which is what every reader can return.

Default values on an added column (v3) ride on the Arrow field's metadata, as JSON single values
(Appendix D): ``iceberg.initial-default`` and ``iceberg.write-default``.

``Case.features`` (reader features, ``iceberg_facts`` spellings) is derived from the steps by
``read_features``: ``format-version-3``, the v3 types its columns use (``timestamp-ns``,
``unknown-type``) and the delete mechanism the table ends up with. The runner
adds the time-travel, timestamp-travel and ref-travel needs of each expectation itself.
"""

from __future__ import annotations

import datetime as _dt
import uuid as _uuid
from typing import Any, Iterable

import pyarrow as pa

from conformance.formats.iceberg import raw
from conformance.formats.iceberg.facts import DELETION_VECTORS, FORMAT_V3, POSITION_DELETES, TIMESTAMP_NS, UNKNOWN_TYPE
from conformance.cases.values import D, INF, NAN, d, empty, ntz, rows, ts
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
    SetPartitioning,
    SetProperties,
    Update,
)

FORMAT = "iceberg"
RAW_ONLY = ("reference",)  # cases with Raw steps or a reference-only mechanism

# Field-metadata keys carrying v3 default values on AddColumn / Create fields (JSON single values).
INITIAL_DEFAULT = "iceberg.initial-default"
WRITE_DEFAULT = "iceberg.write-default"
# Table properties, spelled as the spec's Appendix F / Java spell them.
P_FORMAT = "format-version"
P_DELETE_MODE = "write.delete.mode"
P_UPDATE_MODE = "write.update.mode"
MOR = {P_DELETE_MODE: "merge-on-read", P_UPDATE_MODE: "merge-on-read"}

# --------------------------------------------------------------------------------------------
# Value helpers
# --------------------------------------------------------------------------------------------


def t(text: str) -> _dt.time:
    """A time of day."""
    return _dt.time.fromisoformat(text)


def u(text: str) -> bytes:
    """A uuid as its 16 big-endian bytes."""
    return _uuid.UUID(text).bytes


def create(schema: pa.Schema, version: int = 2, *, partition_by: Iterable[str] = (), properties: dict | None = None) -> Create:
    """Create a table of format ``version`` (the format version is a creation property)."""
    return Create(schema=schema, partition_by=tuple(partition_by), properties={P_FORMAT: str(version), **(properties or {})})


def _raw(fn, description: str) -> Raw:
    return Raw(fn=fn, description=description)


_CASES: list[Case] = []


def read_features(steps: Iterable[Any]) -> tuple[str, ...]:
    """The reader features a table built by ``steps`` needs (``iceberg_facts`` spellings).

    Derived from the steps so no case forgets one: a v3 table needs ``format-version-3``; a delete
    or update needs the mechanism the step asks for, else the one the table's settings give the
    reference writer (v3: deletion vectors; v2 with ``write.*.mode=merge-on-read``: position
    deletes; otherwise copy-on-write, which needs nothing).
    """
    out: list[str] = []
    version, mor = 2, False
    for step in steps:
        props = getattr(step, "properties", None) or {}
        if isinstance(step, (Create, SetProperties)):
            version = int(props.get(P_FORMAT, version if isinstance(step, SetProperties) else 2))
            mor = mor or any(props.get(k) == "merge-on-read" for k in (P_DELETE_MODE, P_UPDATE_MODE))
            if version >= 3:
                out.append(FORMAT_V3)
        elif isinstance(step, Delete) and step.how is not None:
            if step.how != "copy-on-write":
                out.append(step.how)
        elif isinstance(step, (Delete, Update)):
            if version >= 3:
                out.append(DELETION_VECTORS)
            elif mor:
                out.append(POSITION_DELETES)
        out.extend(_type_features(step))
    return tuple(dict.fromkeys(out))


def _arrow_type_features(t: pa.DataType) -> list[str]:
    """The v3 type features an Arrow type (the steps' spelling of an Iceberg type) needs, nested ones too."""
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return [TIMESTAMP_NS]
    if pa.types.is_null(t):
        return [UNKNOWN_TYPE]
    if pa.types.is_struct(t):
        return [f for i in range(t.num_fields) for f in _arrow_type_features(t.field(i).type)]
    if pa.types.is_map(t):
        return _arrow_type_features(t.key_type) + _arrow_type_features(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _arrow_type_features(t.value_type)
    return []


def _type_features(step: Any) -> list[str]:
    """The type features of the columns a step declares (a table schema keeps every type it ever had:
    older snapshots are read in their own schema, so a type dropped or promoted later still counts)."""
    if isinstance(step, Create):
        return [f for field in step.schema for f in _arrow_type_features(field.type)]
    if isinstance(step, AddColumn):
        return _arrow_type_features(step.field.type)
    if isinstance(step, ChangeColumnType):
        return _arrow_type_features(step.type)
    if isinstance(step, (Append, Overwrite)) and step.rows is not None:
        return [f for field in step.rows.schema for f in _arrow_type_features(field.type)]
    return []


def case(slug: str, description: str, *, rules: Iterable[str], steps, expected, notes="", writers=None, violates=()) -> None:
    """Register one case of the corpus (its reader features derived from the steps)."""
    steps = tuple(steps)
    _CASES.append(
        Case(
            id=f"{FORMAT}/{slug}",
            format=FORMAT,
            description=description,
            rules=tuple(rules),
            features=read_features(steps),
            steps=steps,
            expected=tuple(expected),
            writers=writers,
            notes=notes,
            violates=tuple(violates),
        )
    )


# --------------------------------------------------------------------------------------------
# Shared schemas and data
# --------------------------------------------------------------------------------------------

BASIC = pa.schema([("letter", pa.string()), ("number", pa.int64()), ("a_float", pa.float64())])
B1 = [("a", 1, 1.1), ("b", 2, 2.2), ("c", 3, 3.3)]
B2 = [("d", 4, 4.4), ("e", 5, 5.5)]
B3 = [("f", 6, 6.6)]
B4 = [("g", 7, 7.7), ("h", 8, 8.8)]

IDV = pa.schema([("id", pa.int64()), ("value", pa.string())])


def idv(*ids: int, value=lambda i: f"v{i}") -> pa.Table:
    """Rows of IDV for the given ids."""
    return rows(IDV, *[(i, value(i)) for i in ids])


def idv_rows(*pairs) -> pa.Table:
    """Rows of IDV from explicit (id, value) pairs."""
    return rows(IDV, *pairs)


SNAPSHOT_SCHEMA_NOTE = (
    "Older versions are declared in the schema of their snapshot (snapshot schema-id), as Java and "
    "PyIceberg read them; the spec records schema-id per snapshot but does not say which schema a "
    "time-travel read projects."
)

# --------------------------------------------------------------------------------------------
# Basic reads: empty tables, appends, overwrite, optimize, properties (per format version)
# --------------------------------------------------------------------------------------------

for fv in (1, 2, 3):
    case(
        f"v{fv}-empty-table",
        f"A v{fv} table with no snapshot reads as no rows (version 0 is the table before its first snapshot).",
        rules=("ICEBERG-META-003", "ICEBERG-META-029", "ICEBERG-META-040", "ICEBERG-META-045"),
        steps=[create(BASIC, fv)],
        expected=[
            Expected(version=0, rows=empty(BASIC)),
            Expected(rows=empty(BASIC), metadata={"format_version": fv, "partition_spec": [], "schema_id": 0}),
        ],
    )
    case(
        f"v{fv}-basic-append",
        f"Two appends on an unpartitioned v{fv} table; every version readable.",
        rules=(
            ("ICEBERG-SCAN-001", "ICEBERG-SNAP-007", "ICEBERG-SNAP-008", "ICEBERG-MANIFEST-010", "ICEBERG-FMT-009")
            + (("ICEBERG-SEQ-001", "ICEBERG-SEQ-002", "ICEBERG-SEQ-005") if fv >= 2 else ("ICEBERG-SNAP-002",))
            + (("ICEBERG-LINEAGE-001",) if fv == 3 else ())
        ),
        steps=[create(BASIC, fv), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2))],
        expected=[
            Expected(version=0, rows=empty(BASIC)),
            Expected(version=1, rows=rows(BASIC, *B1), metadata={"operation": "append"}),
            Expected(version=2, rows=rows(BASIC, *B1, *B2)),
            Expected(rows=rows(BASIC, *B1, *B2), metadata={"format_version": fv, "operation": "append", "partition_spec": []}),
        ],
    )

case(
    "v2-multi-file-append",
    "One append commit adding four data files: all of them are live.",
    rules=("ICEBERG-SCAN-001", "ICEBERG-SNAP-013", "ICEBERG-MLIST-010", "ICEBERG-MANIFEST-014"),
    steps=[create(BASIC), Append(rows=rows(BASIC, *B1, *B2, *B4), files=4)],
    expected=[
        Expected(version=1, rows=rows(BASIC, *B1, *B2, *B4)),
        Expected(rows=rows(BASIC, *B1, *B2, *B4), metadata={"operation": "append"}),
    ],
)

for fv in (1, 2):
    case(
        f"v{fv}-overwrite",
        f"Two appends, then an overwrite of the whole v{fv} table: older versions keep their rows.",
        rules=("ICEBERG-SCAN-001", "ICEBERG-MANIFEST-015", "ICEBERG-SNAP-008"),
        steps=[
            create(BASIC, fv),
            Append(rows=rows(BASIC, *B1)),
            Append(rows=rows(BASIC, *B2)),
            Overwrite(rows=rows(BASIC, *B3, *B4)),
        ],
        expected=[
            Expected(version=1, rows=rows(BASIC, *B1)),
            Expected(version=2, rows=rows(BASIC, *B1, *B2)),
            Expected(rows=rows(BASIC, *B3, *B4)),
        ],
        notes="The overwrite is the last step: a writer that commits it as two snapshots (delete, then append) shifts only the latest version number.",
    )

case(
    "v2-optimize",
    "Compaction of six files into one is a `replace` snapshot; the rows do not change.",
    rules=("ICEBERG-SNAP-008", "ICEBERG-SEQ-007", "ICEBERG-SEQ-009", "ICEBERG-SCAN-001", "ICEBERG-MANIFEST-015"),
    steps=[
        create(BASIC),
        Append(rows=rows(BASIC, *B1), files=3),
        Append(rows=rows(BASIC, *B2, *B3), files=3),
        Optimize(),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1, *B2, *B3)),
        Expected(version=3, rows=rows(BASIC, *B1, *B2, *B3), metadata={"operation": "replace"}),
        Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"operation": "replace"}),
    ],
)

case(
    "v2-optimize-after-position-deletes",
    "Compaction of files carrying position deletes: the deleted rows stay deleted, nothing comes back.",
    rules=("ICEBERG-SNAP-008", "ICEBERG-SEQ-007", "ICEBERG-SEQ-009", "ICEBERG-DELETE-010", "ICEBERG-SEQ-010"),
    steps=[
        create(IDV, properties=MOR),
        Append(rows=idv(1, 2, 3, 4), files=2),
        Delete(where="id IN (1, 4)", how="position-deletes"),
        Append(rows=idv(5)),
        Optimize(),
    ],
    expected=[
        Expected(version=2, rows=idv(2, 3)),
        Expected(version=3, rows=idv(2, 3, 5)),
        Expected(rows=idv(2, 3, 5), metadata={"operation": "replace"}),
    ],
    notes="A compacted file given the old data sequence number (SEQ-009) must not be hit again by the old deletes.",
)

SC1 = pa.schema([("letter", pa.string()), ("number", pa.int64())])
SC2 = pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64())])
case(
    "v2-overwrite-new-schema",
    "An overwrite with a different schema: the old version reads in its own schema, the new one in the new.",
    rules=("ICEBERG-EVOL-001", "ICEBERG-EVOL-009", "ICEBERG-SCAN-001"),
    steps=[create(SC1), Append(rows=rows(SC1, ("a", 1), ("b", 2))), Overwrite(rows=rows(SC2, (1, "x", 0.5), (2, None, None)))],
    expected=[
        Expected(version=1, rows=rows(SC1, ("a", 1), ("b", 2))),
        Expected(rows=rows(SC2, (1, "x", 0.5), (2, None, None))),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

case(
    "v3-optimize-after-deletes",
    "v3: compaction after a delete: the deleted row stays deleted and no delete file survives the rewrite.",
    rules=("ICEBERG-SNAP-008", "ICEBERG-DV-011", "ICEBERG-LINEAGE-008", "ICEBERG-SEQ-007"),
    steps=[
        create(IDV, 3),
        Append(rows=idv(1, 2, 3), files=3),
        Delete(where="id = 2"),
        Optimize(),
    ],
    expected=[
        Expected(version=2, rows=idv(1, 3)),
        Expected(rows=idv(1, 3), metadata={"operation": "replace"}),
    ],
)

case(
    "v2-properties",
    "Table properties set at creation and changed later (a metadata-only commit: no new version).",
    rules=("ICEBERG-META-028", "ICEBERG-META-001"),
    steps=[
        create(BASIC, properties={"lakeconf.created": "yes", "lakeconf.count": "4"}),
        Append(rows=rows(BASIC, *B1)),
        SetProperties(properties={"lakeconf.note": "ünïcödé ✓", "commit.retry.num-retries": "7", "lakeconf.count": "5"}),
        Append(rows=rows(BASIC, *B2)),
    ],
    expected=[
        Expected(version=1, rows=rows(BASIC, *B1)),
        Expected(
            version=2,
            rows=rows(BASIC, *B1, *B2),
            metadata={"properties": {"lakeconf.created": "yes", "lakeconf.note": "ünïcödé ✓", "commit.retry.num-retries": "7", "lakeconf.count": "5"}},
        ),
        Expected(rows=rows(BASIC, *B1, *B2), metadata={"format_version": 2, "properties": {"lakeconf.count": "5"}}),
    ],
    notes="Properties are a table fact, not a snapshot one: the values read at version 2 are the current ones.",
)

# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------

PRIM = pa.schema(
    [
        ("bool_col", pa.bool_()),
        ("int_col", pa.int32()),
        ("long_col", pa.int64()),
        ("float_col", pa.float32()),
        ("double_col", pa.float64()),
        ("dec_col", pa.decimal128(9, 2)),
        ("dec38_col", pa.decimal128(38, 18)),
        ("date_col", pa.date32()),
        ("ts_col", pa.timestamp("us")),
        ("tstz_col", pa.timestamp("us", tz="UTC")),
        ("str_col", pa.string()),
        ("bin_col", pa.binary()),
    ]
)
PRIM_ROWS = [
    (False, -2147483648, -9223372036854775808, -3.4028234663852886e38, -1.7976931348623157e308, D("-9999999.99"),
     D("-99999999999999999999.999999999999999999"), d("0001-01-01"), ntz("0001-01-01T00:00:00"), ts("0001-01-01T00:00:00"), "", b""),
    (True, 2147483647, 9223372036854775807, 3.4028234663852886e38, 1.7976931348623157e308, D("9999999.99"),
     D("99999999999999999999.999999999999999999"), d("9999-12-31"), ntz("9999-12-31T23:59:59.999999"), ts("9999-12-31T23:59:59.999999"),
     "ünïcödé ✓ 𝄞", b"\x00\xff\x10"),
    (True, 0, 0, 1.5, 0.1, D("14.20"), D("0.000000000000000001"), d("2017-11-16"), ntz("2017-11-16T22:31:08"),
     ts("2017-11-16T22:31:08.000001"), "iceberg", b"\x00\x01\x02\x03"),
    (None,) * 12,
]
for fv in (1, 2, 3):
    case(
        f"v{fv}-primitive-types",
        f"v{fv}: one column of each primitive type Spark, PyIceberg and the reference all write, at the ends of each range, plus an all-null row.",
        rules=("ICEBERG-TYPE-003", "ICEBERG-TYPE-004", "ICEBERG-TYPE-005", "ICEBERG-TYPE-006", "ICEBERG-TYPE-007", "ICEBERG-TYPE-008",
               "ICEBERG-TYPE-009", "ICEBERG-FMT-009", "ICEBERG-FMT-011", "ICEBERG-FMT-012", "ICEBERG-SERDE-002"),
        steps=[create(PRIM, fv), Append(rows=rows(PRIM, *PRIM_ROWS))],
        expected=[Expected(rows=rows(PRIM, *PRIM_ROWS), metadata={"format_version": fv})],
        notes="uuid, time and fixed have their own case (v2-uuid-time-fixed): Spark SQL cannot declare them.",
    )

UTF_IN = pa.schema([("id", pa.int32()), ("u", pa.uuid()), ("tm", pa.time64("us")), ("fx", pa.binary(3))])
UTF_OUT = pa.schema([("id", pa.int32()), ("u", pa.binary(16)), ("tm", pa.time64("us")), ("fx", pa.binary(3))])
UTF_ROWS = [
    (1, u("f79c3e09-677c-4bbd-a479-3f349cb785e7"), t("00:00:00"), b"\x00\x00\x00"),
    (2, u("00000000-0000-0000-0000-000000000000"), t("23:59:59.999999"), b"\xff\xfe\xfd"),
    (3, u("ffffffff-ffff-ffff-ffff-ffffffffffff"), t("12:00:00.000001"), b"abc"),
    (4, None, None, None),
]
case(
    "v2-uuid-time-fixed",
    "uuid (16 big-endian bytes), time (microseconds of the day) and fixed[3] columns, nulls included.",
    rules=("ICEBERG-TYPE-005", "ICEBERG-TYPE-010", "ICEBERG-TYPE-011", "ICEBERG-FMT-012", "ICEBERG-FMT-013", "ICEBERG-SERDE-013"),
    steps=[create(UTF_IN), Append(rows=rows(UTF_IN, *UTF_ROWS))],
    expected=[Expected(rows=rows(UTF_OUT, *UTF_ROWS))],
    notes="The uuid column is declared as its 16 bytes (Arrow's uuid is an extension type over fixed_size_binary(16)).",
)

FLT = pa.schema([("id", pa.int32()), ("f", pa.float32()), ("x", pa.float64())])
FLT_ROWS = [
    (1, NAN, NAN),
    (2, INF, INF),
    (3, -INF, -INF),
    (4, -0.0, -0.0),
    (5, 0.0, 0.0),
    (6, 1.401298464324817e-45, 5e-324),
    (7, -3.4028234663852886e38, 2.2250738585072014e-308),
    (8, None, None),
]
case(
    "v2-float-special-values",
    "float and double NaN, +inf, -inf, -0.0, +0.0, the smallest subnormals and nulls.",
    rules=("ICEBERG-TYPE-003", "ICEBERG-MANIFEST-027", "ICEBERG-MANIFEST-032"),
    steps=[create(FLT), Append(rows=rows(FLT, *FLT_ROWS))],
    expected=[Expected(rows=rows(FLT, *FLT_ROWS))],
    notes="NaN must never be a bound (MANIFEST-032): a writer that stores one still reads back right here, the validator catches it.",
)

DEC = pa.schema(
    [
        ("id", pa.int32()),
        ("d1", pa.decimal128(1, 0)),
        ("d9", pa.decimal128(9, 2)),
        ("d18", pa.decimal128(18, 6)),
        ("d38", pa.decimal128(38, 0)),
        ("d38s", pa.decimal128(38, 38)),
    ]
)
_N38 = "9" * 38
DEC_ROWS = [
    (1, D("9"), D("9999999.99"), D("999999999999.999999"), D(_N38), D("0." + _N38)),
    (2, D("-9"), D("-9999999.99"), D("-999999999999.999999"), D("-" + _N38), D("-0." + _N38)),
    (3, D("0"), D("0.00"), D("0.000000"), D("0"), D("0." + "0" * 38)),
    (4, D("-1"), D("-0.01"), D("-0.000001"), D("-1"), D("-0." + "0" * 37 + "1")),
    (5, None, None, None, None, None),
]
case(
    "v2-decimal-precision",
    "Decimals of precision 1, 9, 18 and the maximum 38 (scale 0 and 38), at both ends and around zero.",
    rules=("ICEBERG-TYPE-004", "ICEBERG-FMT-011", "ICEBERG-SERDE-014"),
    steps=[create(DEC), Append(rows=rows(DEC, *DEC_ROWS))],
    expected=[Expected(rows=rows(DEC, *DEC_ROWS))],
    notes="Parquet stores P <= 9 as int32, P <= 18 as int64 and wider ones as fixed bytes (FMT-011): each width is one column here.",
)

STR = pa.schema([("id", pa.int32()), ("s", pa.string())])
STR_ROWS = [
    (1, ""),
    (2, " "),
    (3, "a\x00b"),
    (4, "日本語テキスト"),
    (5, "😀🎉🧊"),
    (6, "e\u0301"),
    (7, "שלום"),
    (8, "\u200b"),
    (9, "line\nbreak\ttab"),
    (10, "ü" * 5000),
    (11, None),
]
case(
    "v2-string-values",
    "Strings: empty, NUL inside, CJK, emoji (4-byte UTF-8), combining marks, RTL, zero-width, 5000 two-byte characters.",
    rules=("ICEBERG-TYPE-009", "ICEBERG-MANIFEST-030", "ICEBERG-FMT-013"),
    steps=[create(STR), Append(rows=rows(STR, *STR_ROWS))],
    expected=[Expected(rows=rows(STR, *STR_ROWS))],
    notes="The long value makes writers truncate its bounds; a truncated upper bound must be rounded up (MANIFEST-030).",
)

NS = pa.schema([("id", pa.int32()), ("ts_ns", pa.timestamp("ns")), ("tstz_ns", pa.timestamp("ns", tz="UTC"))])
_MAX_NS = 9223372036854775807
NS_ROWS = [
    (1, 0, 0),
    (2, 1, 1),
    (3, -1, -1),
    (4, 1510871468123456789, 1510871468123456789),
    (5, _MAX_NS, _MAX_NS),
    (6, -_MAX_NS, -_MAX_NS),
    (7, None, None),
]
case(
    "v3-timestamp-ns",
    "v3 timestamp_ns and timestamptz_ns: nanoseconds around the epoch and at the ends of the int64 range.",
    rules=("ICEBERG-TYPE-001", "ICEBERG-TYPE-006", "ICEBERG-TYPE-007", "ICEBERG-TYPE-008", "ICEBERG-FMT-012", "ICEBERG-SERDE-010"),
    steps=[create(NS, 3), Append(rows=rows(NS, *NS_ROWS))],
    expected=[Expected(rows=rows(NS, *NS_ROWS), metadata={"format_version": 3})],
    notes="The kit's comparison truncates timestamps to microseconds, so a reader losing the nanoseconds passes the row check; the golden file keeps the declared values.",
)

NEST_S = pa.schema([("id", pa.int32()), ("s", pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.string()), ("d", pa.int64())]))]))])
NEST_S_ROWS = [
    (1, {"a": 1, "b": {"c": "x", "d": 10}}),
    (2, {"a": None, "b": None}),
    (3, None),
    (4, {"a": 4, "b": {"c": None, "d": None}}),
]
case(
    "v2-nested-struct",
    "Struct inside struct, with nulls at every level.",
    rules=("ICEBERG-SCHEMA-001", "ICEBERG-SCHEMA-002", "ICEBERG-FMT-009"),
    steps=[create(NEST_S), Append(rows=rows(NEST_S, *NEST_S_ROWS))],
    expected=[Expected(rows=rows(NEST_S, *NEST_S_ROWS))],
)

NEST_L = pa.schema([("id", pa.int32()), ("ints", pa.list_(pa.int32())), ("strs", pa.list_(pa.string()))])
NEST_L_ROWS = [(1, [1, 2, 3], ["a"]), (2, [], []), (3, None, None), (4, [None, 4], [None, "b", ""])]
case(
    "v2-nested-list",
    "Lists of int and string: empty, null, and with null elements.",
    rules=("ICEBERG-SCHEMA-003", "ICEBERG-FMT-010"),
    steps=[create(NEST_L), Append(rows=rows(NEST_L, *NEST_L_ROWS))],
    expected=[Expected(rows=rows(NEST_L, *NEST_L_ROWS))],
)

NEST_M = pa.schema([("id", pa.int32()), ("m", pa.map_(pa.string(), pa.int32())), ("m2", pa.map_(pa.int32(), pa.string()))])
NEST_M_ROWS = [(1, [("a", 1), ("b", None)], [(1, "one")]), (2, [], []), (3, None, None), (4, [("z", 26)], [(-1, None), (7, "seven")])]
case(
    "v2-nested-map",
    "Maps with string and int keys: empty, null, and with null values (keys are always required).",
    rules=("ICEBERG-SCHEMA-004", "ICEBERG-FMT-010"),
    steps=[create(NEST_M), Append(rows=rows(NEST_M, *NEST_M_ROWS))],
    expected=[Expected(rows=rows(NEST_M, *NEST_M_ROWS))],
)

NEST_C = pa.schema(
    [
        ("id", pa.int32()),
        ("arr_struct", pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))),
        ("map_arr", pa.map_(pa.string(), pa.list_(pa.int64()))),
        ("struct_mix", pa.struct([("m", pa.map_(pa.string(), pa.string())), ("ll", pa.list_(pa.list_(pa.int32())))])),
        ("map_struct", pa.map_(pa.int64(), pa.struct([("p", pa.float64()), ("q", pa.list_(pa.string()))]))),
        ("list_map", pa.list_(pa.map_(pa.string(), pa.bool_()))),
    ]
)
NEST_C_ROWS = [
    (1, [{"x": 1, "y": "a"}, {"x": 2, "y": None}], [("k", [1, 2]), ("e", [])], {"m": [("a", "b")], "ll": [[1], [], [2, 3]]},
     [(10, {"p": 1.5, "q": ["u", None]})], [[("t", True)], [], None]),
    (2, [], [("n", None)], {"m": None, "ll": None}, [(-1, None)], []),
    (3, None, None, None, None, None),
    (4, [None], [], {"m": [], "ll": [None, [None]]}, [], [[("f", False), ("n", None)]]),
]
for fv in (1, 2, 3):
    case(
        f"v{fv}-nested-in-nested",
        f"v{fv}: list of struct, map of list, struct of map and list of lists, map of struct, list of map.",
        rules=("ICEBERG-SCHEMA-001", "ICEBERG-SCHEMA-003", "ICEBERG-SCHEMA-004", "ICEBERG-FMT-009", "ICEBERG-FMT-010", "ICEBERG-SERDE-004"),
        steps=[create(NEST_C, fv), Append(rows=rows(NEST_C, *NEST_C_ROWS))],
        expected=[Expected(rows=rows(NEST_C, *NEST_C_ROWS))],
    )

UNK = pa.schema([("id", pa.int32()), ("unk", pa.null()), ("s", pa.string())])
case(
    "v3-unknown-type",
    "v3 `unknown` column: optional, never stored in data files, always read as null.",
    rules=("ICEBERG-TYPE-001", "ICEBERG-TYPE-002", "ICEBERG-FMT-008", "ICEBERG-SERDE-015"),
    steps=[create(UNK, 3), Append(rows=rows(UNK, (1, None, "a"), (2, None, None)))],
    expected=[Expected(rows=rows(UNK, (1, None, "a"), (2, None, None)), metadata={"format_version": 3})],
)

DEF0 = pa.schema([("id", pa.int32())])
DEF1 = pa.schema([("id", pa.int32()), ("n", pa.int32()), ("s", pa.string())])
case(
    "v3-initial-default",
    "v3: columns added with an initial-default; rows written before read the default, later rows their own values.",
    rules=("ICEBERG-SCHEMA-013", "ICEBERG-SCHEMA-017", "ICEBERG-SCHEMA-024", "ICEBERG-EVOL-015", "ICEBERG-EVOL-009"),
    steps=[
        create(DEF0, 3),
        Append(rows=rows(DEF0, (1,), (2,))),
        AddColumn(field=pa.field("n", pa.int32(), metadata={INITIAL_DEFAULT: "7", WRITE_DEFAULT: "7"})),
        AddColumn(field=pa.field("s", pa.string(), metadata={INITIAL_DEFAULT: '"dflt ✓"', WRITE_DEFAULT: '"dflt ✓"'})),
        Append(rows=rows(DEF1, (3, 30, "own"), (4, None, None))),
    ],
    expected=[
        Expected(version=1, rows=rows(DEF0, (1,), (2,))),
        Expected(rows=rows(DEF1, (1, 7, "dflt ✓"), (2, 7, "dflt ✓"), (3, 30, "own"), (4, None, None))),
    ],
    notes=(
        "Defaults ride on the Arrow field metadata (iceberg.initial-default / iceberg.write-default, JSON single values). "
        "Row 4 gives explicit nulls, which are values, not omissions: the write-default does not apply. " + SNAPSHOT_SCHEMA_NOTE
    ),
)

DEFRAW = pa.schema(
    [
        ("id", pa.int64()),
        ("value", pa.string()),
        ("i", pa.int32()),
        pa.field("l", pa.int64(), nullable=False),
        ("s", pa.string()),
        ("b", pa.bool_()),
        ("dt", pa.date32()),
        ("dec", pa.decimal128(9, 2)),
        ("tz", pa.timestamp("us", tz="UTC")),
        ("x", pa.float64()),
        ("bin", pa.binary()),
        ("none", pa.string()),
        ("pt", pa.struct([("px", pa.int32()), ("py", pa.string())])),
    ]
)
_DEFAULT_FIELDS = [
    {"name": "i", "required": False, "type": "int", "initial-default": 7, "write-default": 7},
    {"name": "l", "required": True, "type": "long", "initial-default": -9000000000, "write-default": -9000000000},
    {"name": "s", "required": False, "type": "string", "initial-default": "dflt ✓", "write-default": "dflt ✓"},
    {"name": "b", "required": False, "type": "boolean", "initial-default": True, "write-default": True},
    {"name": "dt", "required": False, "type": "date", "initial-default": "2024-02-29", "write-default": "2024-02-29"},
    {"name": "dec", "required": False, "type": "decimal(9,2)", "initial-default": "14.20", "write-default": "14.20"},
    {"name": "tz", "required": False, "type": "timestamptz", "initial-default": "2017-11-16T22:31:08.000001+00:00",
     "write-default": "2017-11-16T22:31:08.000001+00:00"},
    {"name": "x", "required": False, "type": "double", "initial-default": 1.5, "write-default": 1.5},
    {"name": "bin", "required": False, "type": "binary", "initial-default": "00ff10", "write-default": "00ff10"},
    {"name": "none", "required": False, "type": "string"},
    {"name": "pt", "required": False, "initial-default": {}, "write-default": {}, "type": {"type": "struct", "fields": [
        {"name": "px", "required": False, "type": "int", "initial-default": 1, "write-default": 1},
        {"name": "py", "required": False, "type": "string"},
    ]}},
]
_DEFAULTS = (7, -9000000000, "dflt ✓", True, d("2024-02-29"), D("14.20"), ts("2017-11-16T22:31:08.000001"), 1.5, b"\x00\xff\x10", None, {"px": 1, "py": None})
case(
    "v3-initial-defaults-every-type",
    "v3 fields added by schema JSON with initial-defaults of every JSON single-value form; old files lack them all.",
    rules=("ICEBERG-SCHEMA-013", "ICEBERG-SCHEMA-016", "ICEBERG-SCHEMA-017", "ICEBERG-SCHEMA-021", "ICEBERG-SCHEMA-022",
           "ICEBERG-SCHEMA-024", "ICEBERG-SERDE-018", "ICEBERG-SERDE-019", "ICEBERG-SERDE-020", "ICEBERG-SERDE-021",
           "ICEBERG-SERDE-022", "ICEBERG-SERDE-023", "ICEBERG-EVOL-015"),
    writers=RAW_ONLY,
    steps=[
        create(IDV, 3),
        Append(rows=idv(1, 2)),
        _raw(raw.add_fields_with_defaults(_DEFAULT_FIELDS), "new current schema: 11 fields with initial-default (int, required long, string, boolean, date, decimal, timestamptz, double, binary, none, struct {})"),
    ],
    expected=[
        Expected(version=1, rows=idv(1, 2)),
        Expected(rows=rows(DEFRAW, (1, "v1", *_DEFAULTS), (2, "v2", *_DEFAULTS))),
    ],
    notes=(
        "The struct field's default {} expands to its children's own defaults (px=1, py=null). The "
        "required long with a default is the spec's way to add a required column. " + SNAPSHOT_SCHEMA_NOTE
    ),
)

# --------------------------------------------------------------------------------------------
# Partitioning: hidden transforms, nulls, partition evolution
# --------------------------------------------------------------------------------------------

PI = pa.schema(
    [
        ("s", pa.string()),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("dt", pa.date32()),
        ("b", pa.bool_()),
        ("dec", pa.decimal128(9, 2)),
        ("tz", pa.timestamp("us", tz="UTC")),
        ("id", pa.int32()),
    ]
)
PI_ROWS = [
    ("a", 1, 10, d("2024-01-01"), True, D("1.10"), ts("2024-01-01T10:00:00"), 1),
    ("a", 1, 10, d("2024-01-01"), True, D("1.10"), ts("2024-01-01T10:00:00"), 2),
    ("b/c d=e%", -1, -10, d("1969-12-31"), False, D("-0.01"), ts("1969-12-31T23:59:59.999999"), 3),
    (None, None, None, None, None, None, None, 4),
    ("ünïcödé", 2147483647, 9223372036854775807, d("9999-12-31"), True, D("9999999.99"), ts("2999-12-31T23:59:59.999999"), 5),
]
PI_SPEC = ["s", "i", "l", "dt", "b", "dec", "tz"]
case(
    "v2-partition-identity",
    "Identity partitions on string, int, long, date, boolean, decimal and timestamptz, with a null tuple and escaping-prone strings.",
    rules=("ICEBERG-PART-010", "ICEBERG-PART-017", "ICEBERG-PART-001", "ICEBERG-GEN-008", "ICEBERG-EVOL-015", "ICEBERG-MANIFEST-020", "ICEBERG-PART-034"),
    steps=[create(PI, partition_by=PI_SPEC), Append(rows=rows(PI, *PI_ROWS))],
    expected=[Expected(rows=rows(PI, *PI_ROWS), metadata={"partition_spec": PI_SPEC})],
)

PB = pa.schema(
    [
        ("id", pa.int64()),
        ("i", pa.int32()),
        ("s", pa.string()),
        ("dt", pa.date32()),
        ("tz", pa.timestamp("us", tz="UTC")),
        ("dec", pa.decimal128(9, 2)),
        ("bin", pa.binary()),
        ("label", pa.string()),
    ]
)
PB_ROWS = [
    (34, 34, "iceberg", d("2017-11-16"), ts("2017-11-16T22:31:08"), D("14.20"), b"\x00\x01\x02\x03", "spec vectors"),
    (-1, -1, "", d("1970-01-01"), ts("1970-01-01T00:00:00"), D("0.00"), b"", "zeros"),
    (9223372036854775807, 2147483647, "ünïcödé", d("2999-12-31"), ts("2999-12-31T23:59:59.999999"), D("9999999.99"), b"\xff", "max"),
    (-9223372036854775808, -2147483648, "a", d("1900-01-01"), ts("1900-01-01T00:00:00"), D("-9999999.99"), b"\x00", "min"),
    (None, None, None, None, None, None, None, "nulls"),
]
PB_SPEC = ["bucket(16, id)", "bucket(4, i)", "bucket(8, s)", "bucket(3, dt)", "bucket(5, tz)", "bucket(2, dec)", "bucket(7, bin)"]
case(
    "v2-partition-bucket",
    "bucket[N] on long, int, string, date, timestamptz, decimal and binary, with the spec's hash test vectors and nulls.",
    rules=("ICEBERG-PART-011", "ICEBERG-PART-017", "ICEBERG-PART-018", "ICEBERG-PART-019", "ICEBERG-PART-020",
           "ICEBERG-PART-021", "ICEBERG-PART-022", "ICEBERG-PART-023", "ICEBERG-PART-037"),
    steps=[create(PB, partition_by=PB_SPEC), Append(rows=rows(PB, *PB_ROWS))],
    expected=[Expected(rows=rows(PB, *PB_ROWS), metadata={"partition_spec": PB_SPEC})],
    notes="The rows come from the data files; the bucket numbers themselves are checked by the validator and the transform unit tests.",
)

PT = pa.schema([("i", pa.int32()), ("l", pa.int64()), ("dec", pa.decimal128(9, 2)), ("s", pa.string()), ("bin", pa.binary()), ("id", pa.int32())])
PT_ROWS = [
    (-1, -1, D("-0.05"), "ünïcödé", b"\x01\x02\x03", 1),
    (-10, -100, D("-0.50"), "😀🎉🧊x", b"\x01", 2),
    (-11, -101, D("10.65"), "ab", b"", 3),
    (0, 0, D("0.00"), "", b"\x00\x00\x00", 4),
    (9, 99, D("0.49"), "abc", b"\xff\xfe", 5),
    (10, 100, D("-10.51"), "abcd", b"\xff\xff\x00", 6),
    (2147483647, 9223372036854775807, D("9999999.99"), "𝄞𝄞𝄞𝄞", b"\x7f\x80", 7),
    (None, None, None, None, None, 8),
]
PT_SPEC = ["truncate(10, i)", "truncate(100, l)", "truncate(50, dec)", "truncate(3, s)", "truncate(2, bin)"]
case(
    "v2-partition-truncate",
    "truncate[W] on int, long, decimal (negatives round down: -1 -> -10, -0.05 -> -0.50), string (code points) and binary.",
    rules=("ICEBERG-PART-012", "ICEBERG-PART-017", "ICEBERG-PART-025", "ICEBERG-PART-026", "ICEBERG-PART-027", "ICEBERG-PART-028"),
    steps=[create(PT, partition_by=PT_SPEC), Append(rows=rows(PT, *PT_ROWS))],
    expected=[Expected(rows=rows(PT, *PT_ROWS), metadata={"partition_spec": PT_SPEC})],
    notes=(
        "The int/long minimum is left out on purpose: truncate(10) of -2147483648 is -2147483650, outside int, and "
        "the spec does not say what a writer must do (Java wraps around)."
    ),
)

PTM = pa.schema([("id", pa.int32()), ("dt", pa.date32()), ("ts", pa.timestamp("us")), ("tz", pa.timestamp("us", tz="UTC")), ("ts2", pa.timestamp("us"))])
PTM_ROWS = [
    (1, d("1969-12-31"), ntz("1969-12-31T23:59:59.999999"), ts("1969-12-31T23:59:59.999999"), ntz("1969-12-31T23:59:59.999999")),
    (2, d("1970-01-01"), ntz("1970-01-01T00:00:00"), ts("1970-01-01T00:00:00"), ntz("1970-01-01T00:00:00")),
    (3, d("2024-02-29"), ntz("2024-02-29T12:34:56.123456"), ts("2024-02-29T12:34:56.123456"), ntz("2024-02-29T12:34:56.123456")),
    (4, d("1900-01-01"), ntz("1900-01-01T00:00:00"), ts("1900-01-01T00:00:00"), ntz("1900-01-01T00:59:59")),
    (5, d("2999-12-31"), ntz("2999-12-31T23:59:59.999999"), ts("2999-12-31T23:59:59.999999"), ntz("2999-12-31T23:00:00")),
    (6, None, None, None, None),
]
PTM_SPEC = ["year(dt)", "month(ts)", "day(tz)", "hour(ts2)"]
case(
    "v2-partition-temporal",
    "year(date), month(timestamp), day(timestamptz), hour(timestamp) on values before, at and after the epoch, and nulls.",
    rules=("ICEBERG-PART-013", "ICEBERG-PART-014", "ICEBERG-PART-015", "ICEBERG-PART-017", "ICEBERG-PART-037"),
    steps=[create(PTM, partition_by=PTM_SPEC), Append(rows=rows(PTM, *PTM_ROWS))],
    expected=[Expected(rows=rows(PTM, *PTM_ROWS), metadata={"partition_spec": PTM_SPEC})],
    notes="1969-12-31T23:59:59.999999 is year/month/day/hour -1 (floor, not truncation toward zero).",
)

PV = pa.schema([("id", pa.int64()), ("p", pa.string())])
case(
    "v2-partition-void",
    "void(p): every row lands in the one null partition; the column is still read from the files.",
    rules=("ICEBERG-PART-016", "ICEBERG-PART-017", "ICEBERG-GEN-008"),
    steps=[create(PV, partition_by=["void(p)"]), Append(rows=rows(PV, (1, "a"), (2, "b"), (3, None)))],
    expected=[Expected(rows=rows(PV, (1, "a"), (2, "b"), (3, None)), metadata={"partition_spec": ["void(p)"]})],
)

PV1 = pa.schema([("id", pa.int64()), ("s", pa.string()), ("i", pa.int32()), ("dt", pa.date32())])
PV1_ROWS = [(1, "a", 5, d("2024-01-01")), (2, "a", 15, d("2024-01-02")), (3, None, -5, None), (4, "b", None, d("1969-12-31"))]
PV1_SPEC = ["s", "bucket(4, id)", "truncate(10, i)", "day(dt)"]
case(
    "v1-partition-transforms",
    "v1 spec (field ids implied from 1000) with identity, bucket, truncate and day fields, nulls included.",
    rules=("ICEBERG-PART-032", "ICEBERG-META-022", "ICEBERG-PART-010", "ICEBERG-PART-011", "ICEBERG-PART-012", "ICEBERG-PART-013"),
    steps=[create(PV1, 1, partition_by=PV1_SPEC), Append(rows=rows(PV1, *PV1_ROWS))],
    expected=[Expected(rows=rows(PV1, *PV1_ROWS), metadata={"format_version": 1, "partition_spec": PV1_SPEC})],
)

PNS = pa.schema([("id", pa.int32()), ("ts_ns", pa.timestamp("ns")), ("tz_ns", pa.timestamp("ns", tz="UTC"))])
PNS_ROWS = [(1, -1, -1), (2, 0, 0), (3, 1510871468123456789, 1510871468123456789), (4, None, None)]
PNS_SPEC = ["day(ts_ns)", "bucket(4, tz_ns)"]
case(
    "v3-partition-timestamp-ns",
    "v3: day(timestamp_ns) and bucket(timestamptz_ns) (hashed as microseconds), one nanosecond before the epoch included.",
    rules=("ICEBERG-PART-013", "ICEBERG-PART-022", "ICEBERG-TYPE-008"),
    steps=[create(PNS, 3, partition_by=PNS_SPEC), Append(rows=rows(PNS, *PNS_ROWS))],
    expected=[Expected(rows=rows(PNS, *PNS_ROWS), metadata={"partition_spec": PNS_SPEC})],
)

PE = pa.schema([("id", pa.int64()), ("category", pa.string()), ("ts", pa.timestamp("us", tz="UTC"))])
PE_A = [(1, "a", ts("2024-01-01T01:00:00")), (2, "b", ts("2024-01-02T02:00:00")), (3, "a", ts("2024-01-03T03:00:00"))]
PE_B = [(11, "a", ts("2024-01-01T11:00:00")), (12, "c", ts("2024-02-01T12:00:00")), (13, None, None)]
case(
    "v2-partition-evolution",
    "Identity(category) spec, then bucket(4, id) + day(ts): data under both specs, then position deletes reaching both.",
    rules=("ICEBERG-PART-029", "ICEBERG-PART-030", "ICEBERG-PART-031", "ICEBERG-META-024", "ICEBERG-META-025", "ICEBERG-SCAN-002",
           "ICEBERG-SCAN-006", "ICEBERG-DELETE-010", "ICEBERG-MLIST-005"),
    steps=[
        create(PE, partition_by=["category"], properties=MOR),
        Append(rows=rows(PE, *PE_A)),
        SetPartitioning(partition_by=("bucket(4, id)", "day(ts)")),
        Append(rows=rows(PE, *PE_B)),
        Delete(where="id IN (2, 12)", how="position-deletes"),
    ],
    expected=[
        Expected(version=1, rows=rows(PE, *PE_A)),
        Expected(version=2, rows=rows(PE, *PE_A, *PE_B)),
        Expected(rows=rows(PE, PE_A[0], PE_A[2], PE_B[0], PE_B[2]), metadata={"partition_spec": ["bucket(4, id)", "day(ts)"]}),
    ],
    notes="Each delete applies only to data files of its own spec and partition (SCAN-006).",
)

case(
    "v1-partition-evolution",
    "v1: identity(category), then identity(category) + bucket(2, id); data under both specs.",
    rules=("ICEBERG-PART-029", "ICEBERG-PART-032", "ICEBERG-PART-033", "ICEBERG-META-025", "ICEBERG-SCAN-002"),
    steps=[
        create(PE, 1, partition_by=["category"]),
        Append(rows=rows(PE, *PE_A)),
        SetPartitioning(partition_by=("category", "bucket(2, id)")),
        Append(rows=rows(PE, *PE_B)),
    ],
    expected=[
        Expected(version=1, rows=rows(PE, *PE_A)),
        Expected(rows=rows(PE, *PE_A, *PE_B), metadata={"format_version": 1}),
    ],
)

case(
    "v2-partition-evolution-to-unpartitioned",
    "day(ts) spec, then no partitioning at all: data under both specs.",
    rules=("ICEBERG-PART-029", "ICEBERG-META-025", "ICEBERG-SCAN-002"),
    steps=[
        create(PE, partition_by=["day(ts)"]),
        Append(rows=rows(PE, *PE_A)),
        SetPartitioning(partition_by=()),
        Append(rows=rows(PE, *PE_B)),
    ],
    expected=[
        Expected(version=1, rows=rows(PE, *PE_A)),
        Expected(rows=rows(PE, *PE_A, *PE_B), metadata={"partition_spec": []}),
    ],
)

case(
    "v2-partition-evolution-back",
    "identity(category) -> bucket(4, id) -> identity(category) again: the old spec is reused; data under all three.",
    rules=("ICEBERG-PART-008", "ICEBERG-PART-009", "ICEBERG-PART-029", "ICEBERG-META-025", "ICEBERG-PART-003"),
    steps=[
        create(PE, partition_by=["category"]),
        Append(rows=rows(PE, PE_A[0])),
        SetPartitioning(partition_by=("bucket(4, id)",)),
        Append(rows=rows(PE, PE_A[1])),
        SetPartitioning(partition_by=("category",)),
        Append(rows=rows(PE, PE_A[2], PE_B[2])),
    ],
    expected=[
        Expected(version=2, rows=rows(PE, PE_A[0], PE_A[1])),
        Expected(rows=rows(PE, *PE_A, PE_B[2]), metadata={"partition_spec": ["category"]}),
    ],
)

SPECIAL = pa.schema([("a b", pa.string()), ("ünï", pa.int32()), ("x-y", pa.int64()), ("1st", pa.string()), ("dotted.name", pa.string())])
SPECIAL_ROWS = [("one two", 1, 10, "p", "d1"), ("", -1, None, "q", None), (None, None, 30, None, "d3")]
case(
    "v2-special-column-names",
    "Column names with a space, non-ASCII letters, a dash, a leading digit and a dot; partitioned by two of them.",
    rules=("ICEBERG-EVOL-014", "ICEBERG-EVOL-018", "ICEBERG-FMT-006", "ICEBERG-FMT-009", "ICEBERG-PART-034"),
    steps=[create(SPECIAL, partition_by=["ünï", "bucket(2, 1st)"]), Append(rows=rows(SPECIAL, *SPECIAL_ROWS))],
    expected=[Expected(rows=rows(SPECIAL, *SPECIAL_ROWS), metadata={"partition_spec": ["ünï", "bucket(2, 1st)"]})],
    notes=(
        "Avro names allow only [A-Za-z0-9_], so the partition tuple's field names in manifests must be sanitized "
        "(Java writes e.g. _1st_bucket); readers match partition fields by id, and 'dotted.name' is one column, not a path."
    ),
)

case(
    "v3-partition-evolution-deletes",
    "v3: bucket(2, id) spec, then truncate(10, id); a delete reaching files of both specs.",
    rules=("ICEBERG-PART-029", "ICEBERG-META-025", "ICEBERG-DV-012", "ICEBERG-SCAN-006"),
    steps=[
        create(IDV, 3, partition_by=["bucket(2, id)"]),
        Append(rows=idv(1, 2, 3)),
        SetPartitioning(partition_by=("truncate(10, id)",)),
        Append(rows=idv(11, 12, 23)),
        Delete(where="id IN (1, 12)"),
    ],
    expected=[
        Expected(version=2, rows=idv(1, 2, 3, 11, 12, 23)),
        Expected(rows=idv(2, 3, 11, 23), metadata={"partition_spec": ["truncate(10, id)"]}),
    ],
)

# --------------------------------------------------------------------------------------------
# Schema evolution: add, drop, rename, reorder, promote; rows matched by field id
# --------------------------------------------------------------------------------------------

AC1 = pa.schema([("id", pa.int32()), ("a", pa.string())])
AC2 = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.int64())])
case(
    "v2-add-column",
    "ADD COLUMN: files written before it read null for the new column.",
    rules=("ICEBERG-EVOL-001", "ICEBERG-EVOL-009", "ICEBERG-EVOL-015", "ICEBERG-SCHEMA-016", "ICEBERG-EVOL-014"),
    steps=[
        create(AC1),
        Append(rows=rows(AC1, (1, "x"))),
        AddColumn(field=pa.field("b", pa.int64())),
        Append(rows=rows(AC2, (2, "y", 20))),
    ],
    expected=[
        Expected(version=1, rows=rows(AC1, (1, "x"))),
        Expected(rows=rows(AC2, (1, "x", None), (2, "y", 20)), metadata={"schema_id": 1}),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

DR1 = pa.schema([("id", pa.int64()), ("a", pa.string()), ("b", pa.string())])
DR2 = pa.schema([("id", pa.int64()), ("a", pa.string())])
case(
    "v2-drop-column",
    "DROP COLUMN: the column disappears from the current schema; the snapshot before still has it.",
    rules=("ICEBERG-EVOL-001", "ICEBERG-EVOL-012", "ICEBERG-EVOL-014"),
    steps=[
        create(DR1),
        Append(rows=rows(DR1, (1, "a1", "b1"))),
        DropColumn(name="b"),
        Append(rows=rows(DR2, (2, "a2"))),
    ],
    expected=[
        Expected(version=1, rows=rows(DR1, (1, "a1", "b1"))),
        Expected(rows=rows(DR2, (1, "a1"), (2, "a2"))),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

case(
    "v2-drop-readd-column",
    "Drop column b, add a new b (a fresh id): the old files' b values must not come back.",
    rules=("ICEBERG-EVOL-009", "ICEBERG-EVOL-014", "ICEBERG-META-016"),
    steps=[
        create(DR1),
        Append(rows=rows(DR1, (1, "a1", "old-b"))),
        DropColumn(name="b"),
        AddColumn(field=pa.field("b", pa.string())),
        Append(rows=rows(DR1, (2, "a2", "new-b"))),
    ],
    expected=[
        Expected(version=1, rows=rows(DR1, (1, "a1", "old-b"))),
        Expected(rows=rows(DR1, (1, "a1", None), (2, "a2", "new-b"))),
    ],
    notes="A reader matching columns by name returns old-b for row 1. " + SNAPSHOT_SCHEMA_NOTE,
)

RN1 = pa.schema([("id", pa.int64()), ("name", pa.string())])
RN2 = pa.schema([("id", pa.int64()), ("full_name", pa.string())])
case(
    "v2-rename-column",
    "RENAME COLUMN: old files are read by id under the new name.",
    rules=("ICEBERG-EVOL-010", "ICEBERG-EVOL-014", "ICEBERG-EVOL-001"),
    steps=[
        create(RN1),
        Append(rows=rows(RN1, (1, "ann"), (2, None))),
        RenameColumn(old="name", new="full_name"),
        Append(rows=rows(RN2, (3, "cy"))),
    ],
    expected=[
        Expected(version=1, rows=rows(RN1, (1, "ann"), (2, None))),
        Expected(rows=rows(RN2, (1, "ann"), (2, None), (3, "cy"))),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

SW1 = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.string())])
SW2 = pa.schema([("id", pa.int32()), ("b", pa.string()), ("a", pa.string())])
case(
    "v2-rename-swap",
    "Swap the names of a and b through a temporary name: the data follows the ids, not the names.",
    rules=("ICEBERG-EVOL-010", "ICEBERG-EVOL-014"),
    steps=[
        create(SW1),
        Append(rows=rows(SW1, (1, "was-a", "was-b"))),
        RenameColumn(old="a", new="tmp"),
        RenameColumn(old="b", new="a"),
        RenameColumn(old="tmp", new="b"),
        Append(rows=rows(SW2, (2, "new-b", "new-a"))),
    ],
    expected=[
        Expected(version=1, rows=rows(SW1, (1, "was-a", "was-b"))),
        Expected(rows=rows(SW2, (1, "was-a", "was-b"), (2, "new-b", "new-a"))),
    ],
    notes="After the swap the schema is (id, b, a) where b has a's old id: row 1 reads b='was-a'. " + SNAPSHOT_SCHEMA_NOTE,
)

RO1 = pa.schema([("a", pa.int32()), ("b", pa.string()), ("c", pa.float64())])
RO2 = pa.schema([("c", pa.float64()), ("b", pa.string()), ("a", pa.int32())])
case(
    "v2-reorder-columns",
    "MoveColumn c first, then a after b: the schema reads (c, b, a); old files are matched by id.",
    rules=("ICEBERG-EVOL-011", "ICEBERG-EVOL-014", "ICEBERG-EVOL-001"),
    steps=[
        create(RO1),
        Append(rows=rows(RO1, (1, "x", 1.5))),
        MoveColumn(name="c", after=None),
        MoveColumn(name="a", after="b"),
        Append(rows=rows(RO2, (2.5, "y", 2))),
    ],
    expected=[
        Expected(version=1, rows=rows(RO1, (1, "x", 1.5))),
        Expected(rows=rows(RO2, (1.5, "x", 1), (2.5, "y", 2))),
    ],
    notes="The kit compares columns by name, so the new order itself is recorded in the golden schema but not checked per reader. " + SNAPSHOT_SCHEMA_NOTE,
)

PR1 = pa.schema([("id", pa.int32()), ("v", pa.int32())])
PR2 = pa.schema([("id", pa.int32()), ("v", pa.int64())])
case(
    "v2-promote-int-to-long",
    "int -> long: old int values (extremes included) read as long next to values only a long holds.",
    rules=("ICEBERG-EVOL-002", "ICEBERG-EVOL-007", "ICEBERG-EVOL-001"),
    steps=[
        create(PR1),
        Append(rows=rows(PR1, (1, 2147483647), (2, -2147483648), (3, None))),
        ChangeColumnType(name="v", type=pa.int64()),
        Append(rows=rows(PR2, (4, 9223372036854775807))),
    ],
    expected=[
        Expected(version=1, rows=rows(PR1, (1, 2147483647), (2, -2147483648), (3, None))),
        Expected(rows=rows(PR2, (1, 2147483647), (2, -2147483648), (3, None), (4, 9223372036854775807))),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

PF1 = pa.schema([("id", pa.int32()), ("f", pa.float32())])
PF2 = pa.schema([("id", pa.int32()), ("f", pa.float64())])
case(
    "v2-promote-float-to-double",
    "float -> double: old float values widen exactly (0.1f reads 0.10000000149011612), NaN and infinities kept.",
    rules=("ICEBERG-EVOL-002", "ICEBERG-EVOL-007"),
    steps=[
        create(PF1),
        Append(rows=rows(PF1, (1, 1.5), (2, 0.1), (3, NAN), (4, -INF), (5, None))),
        ChangeColumnType(name="f", type=pa.float64()),
        Append(rows=rows(PF2, (6, 0.1))),
    ],
    expected=[
        Expected(version=1, rows=rows(PF1, (1, 1.5), (2, 0.1), (3, NAN), (4, -INF), (5, None))),
        Expected(rows=rows(PF2, (1, 1.5), (2, 0.10000000149011612), (3, NAN), (4, -INF), (5, None), (6, 0.1))),
    ],
    notes="Widening through a decimal string would give 0.1 for row 2; the IEEE widening of the stored float is 0.10000000149011612. " + SNAPSHOT_SCHEMA_NOTE,
)

PD1 = pa.schema([("id", pa.int32()), ("dec", pa.decimal128(9, 2))])
PD2 = pa.schema([("id", pa.int32()), ("dec", pa.decimal128(18, 2))])
case(
    "v2-promote-decimal",
    "decimal(9,2) -> decimal(18,2): old int32-backed values read at the wider precision, scale unchanged.",
    rules=("ICEBERG-EVOL-002", "ICEBERG-EVOL-006", "ICEBERG-EVOL-007", "ICEBERG-FMT-011"),
    steps=[
        create(PD1),
        Append(rows=rows(PD1, (1, D("1234567.89")), (2, D("-0.01")), (3, None))),
        ChangeColumnType(name="dec", type=pa.decimal128(18, 2)),
        Append(rows=rows(PD2, (4, D("1234567890123456.78")))),
    ],
    expected=[
        Expected(version=1, rows=rows(PD1, (1, D("1234567.89")), (2, D("-0.01")), (3, None))),
        Expected(rows=rows(PD2, (1, D("1234567.89")), (2, D("-0.01")), (3, None), (4, D("1234567890123456.78")))),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

V1E0 = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.float32())])
V1E1 = pa.schema([("id", pa.int64()), ("a2", pa.string()), ("c", pa.int64())])
case(
    "v1-schema-evolution",
    "v1: add c, rename a -> a2, drop b, promote id int -> long; the old file is read by id.",
    rules=("ICEBERG-EVOL-001", "ICEBERG-EVOL-002", "ICEBERG-EVOL-009", "ICEBERG-EVOL-010", "ICEBERG-EVOL-012", "ICEBERG-EVOL-014", "ICEBERG-META-017"),
    steps=[
        create(V1E0, 1),
        Append(rows=rows(V1E0, (1, "x", 1.5))),
        AddColumn(field=pa.field("c", pa.int64())),
        RenameColumn(old="a", new="a2"),
        DropColumn(name="b"),
        ChangeColumnType(name="id", type=pa.int64()),
        Append(rows=rows(V1E1, (2, "y", 20))),
    ],
    expected=[
        Expected(version=1, rows=rows(V1E0, (1, "x", 1.5))),
        Expected(rows=rows(V1E1, (1, "x", None), (2, "y", 20)), metadata={"format_version": 1}),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

V3E0 = pa.schema([("id", pa.int64()), ("name", pa.string()), ("score", pa.float64())])
V3E1 = pa.schema([("score", pa.float64()), ("id", pa.int64()), ("label", pa.string()), ("extra", pa.string())])
case(
    "v3-schema-evolution",
    "v3: rename, move first and add an optional column without default (null for old rows).",
    rules=("ICEBERG-EVOL-010", "ICEBERG-EVOL-011", "ICEBERG-SCHEMA-016", "ICEBERG-SCHEMA-023", "ICEBERG-EVOL-014"),
    steps=[
        create(V3E0, 3),
        Append(rows=rows(V3E0, (1, "one", 0.5), (2, None, None))),
        RenameColumn(old="name", new="label"),
        MoveColumn(name="score", after=None),
        AddColumn(field=pa.field("extra", pa.string())),
        Append(rows=rows(V3E1, (3.5, 3, "three", "e"))),
    ],
    expected=[
        Expected(version=1, rows=rows(V3E0, (1, "one", 0.5), (2, None, None))),
        Expected(rows=rows(V3E1, (0.5, 1, "one", None), (None, 2, None, None), (3.5, 3, "three", "e"))),
    ],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

PDT1 = pa.schema([("id", pa.int32()), ("dt", pa.date32())])
PDT2 = pa.schema([("id", pa.int32()), ("dt", pa.timestamp("us"))])
case(
    "v3-promote-date-to-timestamp",
    "v3: date -> timestamp: old dates read as midnight wall-clock timestamps (pre-epoch included).",
    rules=("ICEBERG-EVOL-003", "ICEBERG-EVOL-007"),
    steps=[
        create(PDT1, 3),
        Append(rows=rows(PDT1, (1, d("2024-02-29")), (2, d("1969-12-31")), (3, None))),
        ChangeColumnType(name="dt", type=pa.timestamp("us")),
        Append(rows=rows(PDT2, (4, ntz("2024-03-01T12:00:00")))),
    ],
    expected=[
        Expected(version=1, rows=rows(PDT1, (1, d("2024-02-29")), (2, d("1969-12-31")), (3, None))),
        Expected(rows=rows(PDT2, (1, ntz("2024-02-29T00:00:00")), (2, ntz("1969-12-31T00:00:00")), (3, None), (4, ntz("2024-03-01T12:00:00")))),
    ],
    notes="A 4-byte bound on the timestamp column is the old date (EVOL-007). " + SNAPSHOT_SCHEMA_NOTE,
)

PU1 = pa.schema([("id", pa.int32()), ("x", pa.null())])
PU2 = pa.schema([("id", pa.int32()), ("x", pa.string())])
case(
    "v3-promote-unknown",
    "v3: an unknown column promoted to string: rows written before read null, later rows their values.",
    rules=("ICEBERG-EVOL-003", "ICEBERG-TYPE-002", "ICEBERG-FMT-008"),
    steps=[
        create(PU1, 3),
        Append(rows=rows(PU1, (1, None))),
        ChangeColumnType(name="x", type=pa.string()),
        Append(rows=rows(PU2, (2, "now"))),
    ],
    expected=[Expected(version=1, rows=rows(PU1, (1, None))), Expected(rows=rows(PU2, (1, None), (2, "now")))],
    notes=SNAPSHOT_SCHEMA_NOTE,
)

RP1 = pa.schema([("id", pa.int64()), ("p", pa.string())])
RP2 = pa.schema([("id", pa.int64()), ("q", pa.string())])
case(
    "v2-rename-partition-source",
    "Rename the source column of an identity partition: the partition field follows the id.",
    rules=("ICEBERG-EVOL-010", "ICEBERG-PART-002", "ICEBERG-EVOL-015", "ICEBERG-PART-010"),
    steps=[
        create(RP1, partition_by=["p"]),
        Append(rows=rows(RP1, (1, "a"), (2, None))),
        RenameColumn(old="p", new="q"),
        Append(rows=rows(RP2, (3, "b"))),
    ],
    expected=[Expected(rows=rows(RP2, (1, "a"), (2, None), (3, "b")), metadata={"partition_spec": ["q"]})],
)

# --------------------------------------------------------------------------------------------
# Deletes: copy-on-write, position deletes, equality deletes, deletion vectors, updates
# --------------------------------------------------------------------------------------------

case(
    "v1-delete",
    "v1 has no delete files: deletes rewrite data files (copy-on-write).",
    rules=("ICEBERG-DELETE-001", "ICEBERG-SCAN-001", "ICEBERG-MANIFEST-015"),
    steps=[create(IDV, 1), Append(rows=idv(1, 2, 3, 4, 5)), Delete(where="id = 2"), Delete(where="id IN (4, 5)")],
    expected=[
        Expected(version=0, rows=empty(IDV)),
        Expected(version=1, rows=idv(1, 2, 3, 4, 5)),
        Expected(version=2, rows=idv(1, 3, 4, 5)),
        Expected(rows=idv(1, 3), metadata={"format_version": 1}),
    ],
)

case(
    "v2-delete-copy-on-write",
    "v2 DELETE asked as copy-on-write: the data file is rewritten without the row.",
    rules=("ICEBERG-SCAN-001", "ICEBERG-MANIFEST-015", "ICEBERG-SEQ-006"),
    steps=[create(IDV), Append(rows=idv(1, 2, 3, 4)), Delete(where="id = 3", how="copy-on-write")],
    expected=[Expected(version=1, rows=idv(1, 2, 3, 4)), Expected(rows=idv(1, 2, 4))],
)

case(
    "v2-position-deletes",
    "v2 position delete files, twice on the same data file: both apply (data seq <= delete seq).",
    rules=("ICEBERG-DELETE-004", "ICEBERG-DELETE-005", "ICEBERG-DELETE-006", "ICEBERG-DELETE-007", "ICEBERG-DELETE-009",
           "ICEBERG-DELETE-010", "ICEBERG-SEQ-010", "ICEBERG-SCHEMA-010"),
    steps=[
        create(IDV, properties=MOR),
        Append(rows=idv(1, 2, 3, 4, 5, 6)),
        Delete(where="id = 2", how="position-deletes"),
        Delete(where="id IN (4, 5)", how="position-deletes"),
    ],
    expected=[
        Expected(version=1, rows=idv(1, 2, 3, 4, 5, 6)),
        Expected(version=2, rows=idv(1, 3, 4, 5, 6), metadata={"operation": "delete"}),
        Expected(rows=idv(1, 3, 6), metadata={"operation": "delete"}),
    ],
)

case(
    "v2-position-deletes-multi-file",
    "Position deletes against four data files of one commit: each delete names its own file.",
    rules=("ICEBERG-DELETE-006", "ICEBERG-DELETE-007", "ICEBERG-DELETE-010", "ICEBERG-MANIFEST-039"),
    steps=[
        create(IDV, properties=MOR),
        Append(rows=idv(1, 2, 3, 4, 5, 6, 7, 8), files=4),
        Delete(where="id IN (2, 3, 8)", how="position-deletes"),
    ],
    expected=[Expected(version=1, rows=idv(1, 2, 3, 4, 5, 6, 7, 8)), Expected(rows=idv(1, 4, 5, 6, 7))],
)

case(
    "v2-equality-deletes",
    "Equality deletes on id, then the same ids appended again: the newer rows survive (strictly older data only).",
    rules=("ICEBERG-DELETE-012", "ICEBERG-DELETE-014", "ICEBERG-DELETE-015", "ICEBERG-SEQ-010", "ICEBERG-MANIFEST-035"),
    writers=RAW_ONLY,
    steps=[
        create(IDV, properties=MOR),
        Append(rows=idv(1, 2, 3, 4)),
        Delete(where="id IN (2, 3)", how="equality-deletes"),
        Append(rows=idv_rows((3, "again"))),
    ],
    expected=[
        Expected(version=1, rows=idv(1, 2, 3, 4)),
        Expected(version=2, rows=idv(1, 4)),
        Expected(rows=idv_rows((1, "v1"), (4, "v4"), (3, "again"))),
    ],
    notes="Only the reference writes equality deletes through the step model (Spark and PyIceberg delete by position or copy-on-write).",
)

case(
    "v2-equality-deletes-null",
    "An equality delete whose key is null deletes exactly the rows whose value is null (IS NULL semantics).",
    rules=("ICEBERG-DELETE-013", "ICEBERG-DELETE-014"),
    writers=RAW_ONLY,
    steps=[
        create(IDV, properties=MOR),
        Append(rows=idv_rows((1, "a"), (2, None), (3, "c"), (4, None))),
        Delete(where="value IS NULL", how="equality-deletes"),
    ],
    expected=[Expected(rows=idv_rows((1, "a"), (3, "c")))],
)

PQ = pa.schema([("id", pa.int64()), ("p", pa.string())])
case(
    "v2-equality-deletes-partitioned",
    "Equality deletes in a partitioned table: each applies within its spec and partition (or globally if unpartitioned).",
    rules=("ICEBERG-DELETE-015", "ICEBERG-SCAN-006", "ICEBERG-DELETE-012"),
    writers=RAW_ONLY,
    steps=[
        create(PQ, partition_by=["p"], properties=MOR),
        Append(rows=rows(PQ, (1, "a"), (2, "a"), (3, "b"), (4, None), (2, "b"))),
        Delete(where="id = 2 AND p = 'a'", how="equality-deletes"),
        Delete(where="id = 4", how="equality-deletes"),
    ],
    expected=[Expected(rows=rows(PQ, (1, "a"), (3, "b"), (2, "b")))],
    notes="id 2 exists in partitions a and b; only the row in a may go, whatever columns the writer puts in equality_ids.",
)

case(
    "v3-deletion-vectors",
    "v3 DELETE as a deletion vector (Puffin deletion-vector-v1 blob) on one data file.",
    rules=("ICEBERG-DV-001", "ICEBERG-DV-002", "ICEBERG-DV-004", "ICEBERG-DV-005", "ICEBERG-DV-006", "ICEBERG-DV-008",
           "ICEBERG-DV-012", "ICEBERG-DV-014", "ICEBERG-DELETE-002"),
    steps=[create(IDV, 3), Append(rows=idv(*range(10))), Delete(where="id = 3", how="deletion-vectors")],
    expected=[
        Expected(version=1, rows=idv(*range(10))),
        Expected(rows=idv(0, 1, 2, 4, 5, 6, 7, 8, 9), metadata={"format_version": 3, "operation": "delete"}),
    ],
)

case(
    "v3-deletion-vector-merge",
    "v3: a second delete on the same data file replaces the DV with a merged one (one DV per file).",
    rules=("ICEBERG-DV-009", "ICEBERG-DV-012", "ICEBERG-DV-011"),
    steps=[
        create(IDV, 3),
        Append(rows=idv(*range(10))),
        Delete(where="id = 3", how="deletion-vectors"),
        Delete(where="id IN (5, 7)", how="deletion-vectors"),
        Delete(where="id = 0", how="deletion-vectors"),
    ],
    expected=[
        Expected(version=2, rows=idv(0, 1, 2, 4, 5, 6, 7, 8, 9)),
        Expected(version=3, rows=idv(0, 1, 2, 4, 6, 8, 9)),
        Expected(rows=idv(1, 2, 4, 6, 8, 9)),
    ],
    notes="Two live DVs for one data file would be invalid (DV-009); a reader unioning stale DVs still gets these rows.",
)

case(
    "v3-deletion-vectors-multi-file",
    "v3: one delete hitting two data files writes a DV for each (possibly in one Puffin file).",
    rules=("ICEBERG-DV-013", "ICEBERG-DV-008", "ICEBERG-DV-012", "ICEBERG-MANIFEST-039"),
    steps=[create(IDV, 3), Append(rows=idv(*range(8)), files=2), Delete(where="id IN (1, 6)", how="deletion-vectors")],
    expected=[Expected(version=1, rows=idv(*range(8))), Expected(rows=idv(0, 2, 3, 4, 5, 7))],
)

case(
    "v3-delete-default-mechanism",
    "v3 DELETE with the writer's default mechanism (merge-on-read DVs for the reference): same rows either way.",
    rules=("ICEBERG-DELETE-002", "ICEBERG-SCAN-001"),
    steps=[create(IDV, 3), Append(rows=idv(1, 2, 3)), Delete(where="id = 2")],
    expected=[Expected(version=1, rows=idv(1, 2, 3)), Expected(rows=idv(1, 3))],
)

case(
    "v2-update-copy-on-write",
    "UPDATE on v2 with the default mode (copy-on-write): the rewritten file replaces the old one.",
    rules=("ICEBERG-SCAN-001", "ICEBERG-MANIFEST-015", "ICEBERG-SNAP-008"),
    steps=[create(IDV), Append(rows=idv(1, 2, 3)), Update(set={"value": "'changed'"}, where="id >= 2")],
    expected=[Expected(version=1, rows=idv(1, 2, 3)), Expected(rows=idv_rows((1, "v1"), (2, "changed"), (3, "changed")))],
)

case(
    "v2-update-merge-on-read",
    "UPDATE on v2 in merge-on-read mode, twice (the second hits a row the first wrote): position deletes + new rows.",
    rules=("ICEBERG-DELETE-010", "ICEBERG-DELETE-011", "ICEBERG-SEQ-010", "ICEBERG-SNAP-008"),
    steps=[
        create(IDV, properties=MOR),
        Append(rows=idv(1, 2, 3, 4)),
        Update(set={"value": "'u1'"}, where="id = 2"),
        Update(set={"value": "'u2'"}, where="id IN (2, 3)"),
    ],
    expected=[
        Expected(version=2, rows=idv_rows((1, "v1"), (2, "u1"), (3, "v3"), (4, "v4"))),
        Expected(rows=idv_rows((1, "v1"), (2, "u2"), (3, "u2"), (4, "v4"))),
    ],
)

case(
    "v3-update",
    "UPDATE on v3 (merge-on-read: a DV on the old file and the new row in a new file), twice.",
    rules=("ICEBERG-DV-009", "ICEBERG-DV-012", "ICEBERG-LINEAGE-008"),
    steps=[
        create(IDV, 3),
        Append(rows=idv(1, 2, 3, 4)),
        Update(set={"value": "'u1'"}, where="id = 1"),
        Update(set={"value": "'u2'"}, where="id IN (1, 4)"),
    ],
    expected=[
        Expected(version=2, rows=idv_rows((1, "u1"), (2, "v2"), (3, "v3"), (4, "v4"))),
        Expected(rows=idv_rows((1, "u2"), (2, "v2"), (3, "v3"), (4, "u2"))),
    ],
)

case(
    "v2-delete-whole-partition",
    "DELETE of exactly one identity partition: whole files go, a `delete` snapshot with no new files.",
    rules=("ICEBERG-SNAP-008", "ICEBERG-MANIFEST-015", "ICEBERG-SCAN-001"),
    steps=[create(PQ, partition_by=["p"]), Append(rows=rows(PQ, (1, "a"), (2, "a"), (3, "b"), (4, None))), Delete(where="p = 'a'")],
    expected=[
        Expected(version=1, rows=rows(PQ, (1, "a"), (2, "a"), (3, "b"), (4, None))),
        Expected(rows=rows(PQ, (3, "b"), (4, None)), metadata={"operation": "delete"}),
    ],
)

case(
    "v2-delete-all-rows",
    "DELETE of every row of a two-file table: the table reads empty, the earlier version keeps its rows.",
    rules=("ICEBERG-SCAN-001", "ICEBERG-MANIFEST-015"),
    steps=[create(IDV), Append(rows=idv(1, 2, 3), files=2), Delete(where="id > 0")],
    expected=[Expected(version=1, rows=idv(1, 2, 3)), Expected(version=2, rows=empty(IDV)), Expected(rows=empty(IDV))],
)

case(
    "v1-upgrade-to-v2",
    "A v1 table upgraded to v2 in place (format-version property), then position deletes and an append.",
    rules=("ICEBERG-COMPAT-003", "ICEBERG-GEN-004", "ICEBERG-SEQ-011", "ICEBERG-META-012", "ICEBERG-COMPAT-002"),
    steps=[
        create(IDV, 1),
        Append(rows=idv(1, 2, 3, 4)),
        SetProperties(properties={P_FORMAT: "2", **MOR}),
        Delete(where="id = 2", how="position-deletes"),
        Append(rows=idv(5)),
    ],
    expected=[Expected(rows=idv(1, 3, 4, 5), metadata={"format_version": 2})],
    notes=(
        "Only the latest version is declared: the v1 snapshot has sequence number 0 after the upgrade (SEQ-011), "
        "so the kit's version numbering (N = sequence number) has no number for it."
    ),
)

case(
    "v2-upgrade-to-v3",
    "A v2 table with position deletes upgraded to v3, then a DV on the same file: it must carry the older deletes too.",
    rules=("ICEBERG-DELETE-017", "ICEBERG-DV-010", "ICEBERG-DV-009", "ICEBERG-LINEAGE-019", "ICEBERG-LINEAGE-018"),
    steps=[
        create(IDV, properties=MOR),
        Append(rows=idv(1, 2, 3, 4, 5, 6)),
        Delete(where="id = 2", how="position-deletes"),
        SetProperties(properties={P_FORMAT: "3"}),
        Delete(where="id = 4", how="deletion-vectors"),
    ],
    expected=[
        Expected(version=1, rows=idv(1, 2, 3, 4, 5, 6)),
        Expected(version=2, rows=idv(1, 3, 4, 5, 6)),
        Expected(rows=idv(1, 3, 5, 6), metadata={"format_version": 3}),
    ],
    notes="Readers may ignore position delete files once a DV applies to the data file (DV-010), so a DV without id 2 brings row 2 back.",
)

# --------------------------------------------------------------------------------------------
# History: time travel, branches and tags, timestamps, expiry, metadata log
# --------------------------------------------------------------------------------------------

case(
    "v2-time-travel-versions",
    "Append, append, delete, update; the table read at every version 0..4.",
    rules=("ICEBERG-SEQ-001", "ICEBERG-SEQ-002", "ICEBERG-SNAP-002", "ICEBERG-SCAN-001", "ICEBERG-META-029"),
    steps=[
        create(IDV),
        Append(rows=idv(0, 1, 2)),
        Append(rows=idv(3, 4)),
        Delete(where="id = 1"),
        Update(set={"value": "'changed'"}, where="id = 3"),
    ],
    expected=[
        Expected(version=0, rows=empty(IDV)),
        Expected(version=1, rows=idv(0, 1, 2)),
        Expected(version=2, rows=idv(0, 1, 2, 3, 4)),
        Expected(version=3, rows=idv(0, 2, 3, 4)),
        Expected(version=4, rows=idv_rows((0, "v0"), (2, "v2"), (3, "changed"), (4, "v4"))),
        Expected(version=5, error="invalid_table"),
        Expected(rows=idv_rows((0, "v0"), (2, "v2"), (3, "changed"), (4, "v4"))),
    ],
    notes="Version 5 was never written: reading it is an error, not the latest version.",
)

case(
    "v1-time-travel-versions",
    "v1 (no sequence numbers): version N is the N-th snapshot from the root of main.",
    rules=("ICEBERG-SNAP-002", "ICEBERG-COMPAT-001", "ICEBERG-SCAN-001"),
    steps=[create(IDV, 1), Append(rows=idv(0, 1, 2)), Append(rows=idv(3, 4)), Delete(where="id = 1")],
    expected=[
        Expected(version=0, rows=empty(IDV)),
        Expected(version=1, rows=idv(0, 1, 2)),
        Expected(version=2, rows=idv(0, 1, 2, 3, 4)),
        Expected(version=3, rows=idv(0, 2, 3, 4)),
        Expected(version=4, error="invalid_table"),
        Expected(rows=idv(0, 2, 3, 4)),
    ],
)

case(
    "v3-time-travel-versions",
    "v3: appends and deletion vectors; each version sees exactly the deletes committed up to it.",
    rules=("ICEBERG-SEQ-010", "ICEBERG-DV-012", "ICEBERG-LINEAGE-010", "ICEBERG-LINEAGE-011"),
    steps=[
        create(IDV, 3),
        Append(rows=idv(0, 1, 2, 3, 4)),
        Delete(where="id = 1", how="deletion-vectors"),
        Append(rows=idv(5)),
        Delete(where="id IN (3, 5)", how="deletion-vectors"),
    ],
    expected=[
        Expected(version=1, rows=idv(0, 1, 2, 3, 4)),
        Expected(version=2, rows=idv(0, 2, 3, 4)),
        Expected(version=3, rows=idv(0, 2, 3, 4, 5)),
        Expected(version=4, rows=idv(0, 2, 4)),
        Expected(rows=idv(0, 2, 4)),
    ],
)

case(
    "v2-branch",
    "A branch takes commits of its own; main skips the sequence numbers the branch used.",
    rules=("ICEBERG-META-039", "ICEBERG-META-030", "ICEBERG-REF-001", "ICEBERG-REF-005", "ICEBERG-REF-006", "ICEBERG-REF-007", "ICEBERG-SEQ-002"),
    steps=[
        create(IDV),
        Append(rows=idv(1, 2)),
        CreateRef(name="dev", kind="branch"),
        Append(rows=idv(10), branch="dev"),
        Append(rows=idv(3)),
        Append(rows=idv(11), branch="dev"),
    ],
    expected=[
        Expected(version=1, rows=idv(1, 2)),
        Expected(version=2, error="invalid_table"),
        Expected(version=3, rows=idv(1, 2, 3)),
        Expected(version=4, error="invalid_table"),
        Expected(ref="dev", rows=idv(1, 2, 10, 11)),
        Expected(ref="main", rows=idv(1, 2, 3)),
        Expected(rows=idv(1, 2, 3), metadata={"refs": {"main": "branch", "dev": "branch"}}),
    ],
    notes="Sequence numbers 2 and 4 belong to the dev branch's snapshots, which are not on main's ancestry.",
)

case(
    "v2-branch-from-older-version",
    "A branch created at version 1 after version 2 exists: its commits build on version 1.",
    rules=("ICEBERG-REF-001", "ICEBERG-REF-006", "ICEBERG-SNAP-002"),
    steps=[
        create(IDV),
        Append(rows=idv(1)),
        Append(rows=idv(2)),
        CreateRef(name="fix", kind="branch", version=1),
        Append(rows=idv(100), branch="fix"),
    ],
    expected=[
        Expected(ref="fix", rows=idv(1, 100)),
        Expected(version=3, error="invalid_table"),
        Expected(rows=idv(1, 2), metadata={"refs": {"main": "branch", "fix": "branch"}}),
    ],
)

case(
    "v2-tag",
    "A tag at version 1 keeps reading version 1 while main moves on (append, delete).",
    rules=("ICEBERG-REF-001", "ICEBERG-REF-006", "ICEBERG-META-039"),
    steps=[
        create(IDV),
        Append(rows=idv(1, 2)),
        CreateRef(name="t1", kind="tag"),
        Append(rows=idv(3)),
        Delete(where="id = 1"),
        CreateRef(name="t0", kind="tag", version=1),
    ],
    expected=[
        Expected(ref="t1", rows=idv(1, 2)),
        Expected(ref="t0", rows=idv(1, 2)),
        Expected(rows=idv(2, 3), metadata={"refs": {"main": "branch", "t1": "tag", "t0": "tag"}}),
    ],
)

case(
    "v3-branch-and-tag",
    "v3: a tag and a branch at version 1; the branch takes an append, main takes a deletion vector.",
    rules=("ICEBERG-REF-001", "ICEBERG-REF-007", "ICEBERG-LINEAGE-012", "ICEBERG-DV-012"),
    steps=[
        create(IDV, 3),
        Append(rows=idv(1, 2, 3)),
        CreateRef(name="release", kind="tag"),
        CreateRef(name="audit", kind="branch"),
        Append(rows=idv(4), branch="audit"),
        Delete(where="id = 2", how="deletion-vectors"),
    ],
    expected=[
        Expected(ref="release", rows=idv(1, 2, 3)),
        Expected(ref="audit", rows=idv(1, 2, 3, 4)),
        Expected(version=3, rows=idv(1, 3)),
        Expected(rows=idv(1, 3), metadata={"refs": {"main": "branch", "release": "tag", "audit": "branch"}}),
    ],
)

case(
    "v2-timestamp-bounds",
    "Reads as of a far-future instant see the latest snapshot; before the first snapshot there is nothing to read.",
    rules=("ICEBERG-SNAP-015", "ICEBERG-META-033"),
    steps=[create(IDV), Append(rows=idv(1)), Append(rows=idv(2))],
    expected=[
        Expected(timestamp="2999-12-31T23:59:59Z", rows=idv(1, 2)),
        Expected(timestamp="1970-01-01T00:00:00Z", rows=empty(IDV), error_allowed="invalid_table"),
    ],
    notes=(
        'Point in Time Reads: "If no snapshot exists prior to the timestamp given ... systems should raise an '
        'informative error". SHOULD: the error is the recommended answer, no rows is the lenient one.'
    ),
)

case(
    "v2-snapshot-log-rollback",
    "Snapshots pinned at 2020, 2021, 2022, then a rollback to the first in 2023: as-of reads follow snapshot-log, not lineage.",
    rules=("ICEBERG-SNAP-015", "ICEBERG-META-033", "ICEBERG-SERDE-007", "ICEBERG-META-029"),
    writers=RAW_ONLY,
    steps=[
        create(IDV),
        Append(rows=idv(1)),
        Append(rows=idv(2)),
        Append(rows=idv(3)),
        _raw(
            raw.pin_history(
                {1: "2020-01-01T00:00:00Z", 2: "2021-01-01T00:00:00Z", 3: "2022-01-01T00:00:00Z"},
                log=[(1, "2020-01-01T00:00:00Z"), (2, "2021-01-01T00:00:00Z"), (3, "2022-01-01T00:00:00Z"), (1, "2023-01-01T00:00:00Z")],
                current=1,
            ),
            "snapshot times 2020/2021/2022-01-01; snapshot-log s1, s2, s3, then s1 again at 2023-01-01 (rollback); current = s1",
        ),
    ],
    expected=[
        Expected(timestamp="2019-06-01T00:00:00Z", rows=empty(IDV), error_allowed="invalid_table"),
        Expected(timestamp="2020-06-01T00:00:00Z", rows=idv(1)),
        Expected(timestamp="2021-06-01T00:00:00Z", rows=idv(1, 2)),
        Expected(timestamp="2022-06-01T00:00:00Z", rows=idv(1, 2, 3)),
        Expected(timestamp="2023-06-01T00:00:00Z", rows=idv(1)),
        Expected(version=1, rows=idv(1)),
        Expected(version=3, error="invalid_table"),
        Expected(rows=idv(1)),
    ],
    notes=(
        "Point in Time Reads: implementations should use snapshot-log, which records changes of the current "
        "snapshot (rollbacks included). After the rollback, s2 and s3 are no longer on main's ancestry, so "
        "version 3 does not exist in the kit's numbering."
    ),
)

case(
    "v2-no-snapshot-log",
    "snapshot-log removed (it is optional): as-of reads have no log to consult.",
    rules=("ICEBERG-SNAP-015",),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1)), Append(rows=idv(2)), _raw(raw.drop_snapshot_log(), "remove snapshot-log")],
    expected=[
        Expected(timestamp="2999-12-31T23:59:59Z", rows=idv(1, 2), error_allowed="invalid_table"),
        Expected(version=1, rows=idv(1)),
        Expected(rows=idv(1, 2)),
    ],
    notes=(
        'Point in Time Reads: if "snapshot-log" is not populated, systems should raise an informative error (SHOULD); '
        "a reader falling back to snapshot timestamps answers with the rows."
    ),
)

case(
    "v2-expire-snapshots",
    "Three appends, then expiry keeping only the newest snapshot: older versions are gone, the table is whole.",
    rules=("ICEBERG-REF-008", "ICEBERG-META-031", "ICEBERG-META-032", "ICEBERG-META-034"),
    steps=[create(IDV), Append(rows=idv(1)), Append(rows=idv(2)), Append(rows=idv(3)), ExpireSnapshots(retain_last=1)],
    expected=[
        Expected(version=1, error="invalid_table"),
        Expected(version=2, error="invalid_table"),
        Expected(version=3, rows=idv(1, 2, 3)),
        Expected(rows=idv(1, 2, 3)),
    ],
)

case(
    "v2-expire-retain-two",
    "Append, delete, append, then expiry keeping two snapshots: version 1 is gone, 2 and 3 read.",
    rules=("ICEBERG-REF-008", "ICEBERG-META-031", "ICEBERG-META-032"),
    steps=[create(IDV), Append(rows=idv(1, 2)), Delete(where="id = 1"), Append(rows=idv(3)), ExpireSnapshots(retain_last=2)],
    expected=[
        Expected(version=1, error="invalid_table"),
        Expected(version=2, rows=idv(2)),
        Expected(version=3, rows=idv(2, 3)),
        Expected(rows=idv(2, 3)),
    ],
)

case(
    "v2-expire-keeps-tag",
    "Expiry keeps the snapshot a tag points at: the tag still reads, the untagged middle version is gone.",
    rules=("ICEBERG-REF-008", "ICEBERG-REF-006", "ICEBERG-META-032"),
    steps=[
        create(IDV),
        Append(rows=idv(1)),
        CreateRef(name="t1", kind="tag"),
        Append(rows=idv(2)),
        Append(rows=idv(3)),
        ExpireSnapshots(retain_last=1),
    ],
    expected=[
        Expected(ref="t1", rows=idv(1)),
        Expected(version=2, error="invalid_table"),
        Expected(rows=idv(1, 2, 3), metadata={"refs": {"main": "branch", "t1": "tag"}}),
    ],
    notes=(
        "Version 1 is left undeclared: its snapshot survives (the tag) but main's ancestry walk stops at the "
        "expired version 2, and the kit's numbering does not say whether it still counts as on main."
    ),
)

case(
    "v2-expire-after-delete",
    "A delete removes a file, expiry then removes the snapshots (and files) only the old versions needed.",
    rules=("ICEBERG-META-032", "ICEBERG-REF-008", "ICEBERG-META-031"),
    steps=[
        create(IDV),
        Append(rows=idv(1, 2)),
        Delete(where="id IN (1, 2)"),
        Append(rows=idv(3)),
        ExpireSnapshots(retain_last=1),
    ],
    expected=[Expected(version=1, error="invalid_table"), Expected(rows=idv(3))],
)

case(
    "v2-metadata-log-old-files-deleted",
    "Every metadata file but the current one deleted: readers need only the current file (its metadata-log is history).",
    rules=("ICEBERG-META-035", "ICEBERG-META-036", "ICEBERG-META-001"),
    writers=RAW_ONLY,
    steps=[
        create(IDV),
        Append(rows=idv(1)),
        SetProperties(properties={"lakeconf.step": "3"}),
        Append(rows=idv(2)),
        _raw(raw.delete_previous_metadata_files(), "delete every metadata JSON file named in metadata-log"),
    ],
    expected=[Expected(version=1, rows=idv(1)), Expected(rows=idv(1, 2))],
)

# --------------------------------------------------------------------------------------------
# Metadata edges and negative fixtures (raw metadata surgery)
# --------------------------------------------------------------------------------------------

case(
    "v2-current-schema-id-missing",
    "current-schema-id names no schema in `schemas`: the table is invalid.",
    rules=("ICEBERG-META-020",),
    violates=("ICEBERG-META-020",),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1, 2)), _raw(raw.set_current_schema_id(99), "current-schema-id = 99")],
    expected=[Expected(error="invalid_table")],
)

case(
    "v2-last-column-id-too-low",
    "last-column-id (1) below a field id (2): broken for writers; a reader may read or refuse.",
    rules=("ICEBERG-META-016", "ICEBERG-META-015"),
    violates=("ICEBERG-EVOL-009", "ICEBERG-META-016"),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1, 2)), _raw(raw.set_last_column_id(1), "last-column-id = 1")],
    expected=[Expected(rows=idv(1, 2), error_allowed="invalid_table")],
    notes=(
        "last-column-id exists so that writers assign unused ids; a read needs no new id. The metadata breaks a MUST, "
        "so refusing it is conformant too."
    ),
)

case(
    "v2-duplicate-field-ids",
    "Two string fields share one id: projection by id is ambiguous, the table is invalid.",
    rules=("ICEBERG-SCHEMA-001", "ICEBERG-EVOL-014"),
    violates=("ICEBERG-SCHEMA-001",),
    writers=RAW_ONLY,
    steps=[create(DR1), Append(rows=rows(DR1, (1, "a1", "b1"))), _raw(raw.duplicate_field_id("a", "b"), "field b takes a's id")],
    expected=[Expected(error="invalid_table")],
    notes="Both fields are strings, so nothing but the id check stops a reader from returning a1 under b.",
)

case(
    "v2-sequence-number-decreases",
    "The current snapshot's sequence-number (1) is below its parent's (2): not monotonic.",
    rules=("ICEBERG-SEQ-001", "ICEBERG-SEQ-002", "ICEBERG-META-011"),
    violates=("ICEBERG-SEQ-002", "ICEBERG-SEQ-012"),
    writers=RAW_ONLY,
    steps=[
        create(IDV),
        Append(rows=idv(1)),
        Append(rows=idv(2)),
        Append(rows=idv(3)),
        _raw(raw.set_sequence_number(3, 1), "snapshot 3's sequence-number = 1 (manifests unchanged)"),
    ],
    expected=[
        Expected(version=2, rows=idv(1, 2)),
        Expected(version=3, error="invalid_table"),
        Expected(rows=idv(1, 2, 3), error_allowed="invalid_table"),
    ],
    notes=(
        "Snapshots: sequence-number is 'a monotonically increasing long'. The data sequence numbers come from the "
        "manifest list, which is intact, so the latest rows are well defined; refusing the table is conformant too. "
        "No snapshot on main has sequence number 3 any more; version 1 (two candidates) is left undeclared."
    ),
)

case(
    "v2-parent-snapshot-missing",
    "The root snapshot is gone from `snapshots` (expired, manifest list deleted) and its child still names it as parent.",
    rules=("ICEBERG-SNAP-002", "ICEBERG-META-031", "ICEBERG-META-034", "ICEBERG-REF-008"),
    writers=RAW_ONLY,
    steps=[
        create(IDV),
        Append(rows=idv(1)),
        Append(rows=idv(2)),
        Append(rows=idv(3)),
        _raw(raw.remove_snapshots([1], delete_manifest_lists=True), "drop snapshot 1 (and its manifest list) as an expiry would"),
    ],
    expected=[
        Expected(version=1, error="invalid_table"),
        Expected(version=2, rows=idv(1, 2)),
        Expected(rows=idv(1, 2, 3)),
    ],
    notes=(
        "This is what every expiry leaves behind (Snapshot Retention Policy removes snapshots, not their children's "
        "parent ids), so readers must read the current snapshot; only version 1 is gone."
    ),
)

case(
    "v3-unknown-transform",
    "v3: the default spec uses a transform no reader knows (data under the earlier spec): readers must read it.",
    rules=("ICEBERG-PART-006", "ICEBERG-PART-007", "ICEBERG-SCAN-004"),
    writers=RAW_ONLY,
    steps=[
        create(IDV, 3, partition_by=["bucket(4, id)"]),
        Append(rows=idv(1, 2, 3)),
        _raw(raw.add_unknown_transform_spec("id", "lakeconf_future[3]"), "new default spec: lakeconf_future[3](id)"),
    ],
    expected=[Expected(rows=idv(1, 2, 3))],
    notes=(
        'Spec, Partition Transforms: "In v1 and v2, readers should ignore fields with unknown transforms while '
        'reading; this behavior is required in v3." Appendix E: "All v3 readers are required to read tables with '
        'unknown transforms, ignoring them."'
    ),
)

case(
    "v2-unknown-transform",
    "v2: the default spec uses a transform no reader knows (data under the earlier spec): readers should read it.",
    rules=("ICEBERG-PART-005", "ICEBERG-PART-007", "ICEBERG-SCAN-004"),
    writers=RAW_ONLY,
    steps=[
        create(IDV, 2, partition_by=["bucket(4, id)"]),
        Append(rows=idv(1, 2, 3)),
        _raw(raw.add_unknown_transform_spec("id", "lakeconf_future[3]"), "new default spec: lakeconf_future[3](id)"),
    ],
    expected=[Expected(rows=idv(1, 2, 3), error_allowed="unsupported")],
    notes=(
        'Spec, Partition Transforms: "In v1 and v2, readers should ignore fields with unknown transforms while '
        'reading" (SHOULD; required only from v3), so refusing a v2 table as unsupported is conformant.'
    ),
)

case(
    "v2-format-version-99",
    "format-version 99, higher than any version the spec defines (v4 is in development): readers must refuse.",
    rules=("ICEBERG-META-004", "ICEBERG-META-003"),
    violates=("ICEBERG-META-004",),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1)), _raw(raw.set_format_version(99), "format-version = 99")],
    expected=[Expected(error="unsupported")],
    notes=(
        "Table Metadata Fields: implementations must throw an exception if a table's version is higher than the "
        "supported version. Not 4: the spec defines v4 (in development) and Iceberg-Java 1.11 already accepts it "
        "(SUPPORTED_TABLE_FORMAT_VERSION = 4), so to such a reader v2 metadata relabelled 4 is an invalid v4 table "
        "(no next-row-id), not an unsupported one."
    ),
)

case(
    "v2-manifest-list-missing",
    "The current snapshot's manifest list file is gone: the current version cannot be read; version 1 still can.",
    rules=("ICEBERG-META-031", "ICEBERG-SNAP-004", "ICEBERG-MLIST-001"),
    violates=("ICEBERG-META-031",),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1)), Append(rows=idv(2)), _raw(raw.delete_manifest_list(), "delete the current snapshot's manifest list")],
    expected=[Expected(version=1, rows=idv(1)), Expected(error="invalid_table")],
)

case(
    "v2-old-manifest-list-missing",
    "Version 1's manifest list is gone: reading the current version must not need it; version 1 cannot be read.",
    rules=("ICEBERG-META-031", "ICEBERG-MLIST-001"),
    violates=("ICEBERG-META-031",),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1)), Append(rows=idv(2)), _raw(raw.delete_manifest_list(1), "delete version 1's manifest list")],
    expected=[Expected(version=1, error="invalid_table"), Expected(version=2, rows=idv(1, 2)), Expected(rows=idv(1, 2))],
)

case(
    "v2-stale-version-hint",
    "version-hint.text still names the previous metadata file (a writer stopped after its commit): the newest file is current.",
    rules=("ICEBERG-COMMIT-008", "ICEBERG-META-002"),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1)), Append(rows=idv(2)), _raw(raw.set_version_hint(back=1), "version-hint.text = the previous version")],
    expected=[Expected(rows=idv(1, 2)), Expected(version=2, rows=idv(1, 2))],
    notes=(
        "File System Tables: a commit is the atomic creation of v<V+1>.metadata.json; the hint file is not in the "
        "spec (Java's HadoopTableOperations probes upward from it), so v<V+1> existing means it is committed."
    ),
)

case(
    "v2-missing-statistics-file",
    "A registered table statistics file (Puffin) that does not exist: statistics are optional, the read must not need it.",
    rules=("ICEBERG-STATS-001", "ICEBERG-META-041", "ICEBERG-STATS-002"),
    violates=("ICEBERG-STATS-002",),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1, 2, 3)), _raw(raw.add_missing_statistics(), "statistics: a theta-sketch file for the current snapshot that is not there")],
    expected=[Expected(rows=idv(1, 2, 3))],
    notes="Table Statistics: statistics support is not required to read the table correctly.",
)

case(
    "v2-current-snapshot-missing",
    "current-snapshot-id (and the main ref) name a snapshot that is not in `snapshots`.",
    rules=("ICEBERG-META-029", "ICEBERG-META-030", "ICEBERG-REF-006"),
    violates=("ICEBERG-META-029", "ICEBERG-META-033", "ICEBERG-REF-006"),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1)), _raw(raw.set_current_snapshot(1234567890123), "current-snapshot-id = 1234567890123 (no such snapshot)")],
    expected=[Expected(error="invalid_table")],
)

case(
    "v2-data-file-missing",
    "A data file the current snapshot lists is gone from storage.",
    rules=("ICEBERG-META-031", "ICEBERG-META-032"),
    violates=("ICEBERG-META-031",),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1, 2)), _raw(raw.delete_data_files(), "delete the data files")],
    expected=[Expected(error="invalid_table")],
)

case(
    "v2-current-snapshot-minus-one",
    "current-snapshot-id -1 (Java's legacy 'none') with no main ref: the table reads empty although snapshots are listed.",
    rules=("ICEBERG-META-045", "ICEBERG-META-029"),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1, 2)), _raw(raw.set_current_snapshot(None, main_ref=False), "current-snapshot-id = -1, refs.main removed")],
    expected=[Expected(rows=empty(IDV))],
    notes="A reader that takes the newest listed snapshot when there is no current one returns rows 1 and 2.",
)

case(
    "v2-no-refs",
    "`refs` removed: the main branch still exists logically and points at current-snapshot-id.",
    rules=("ICEBERG-META-040", "ICEBERG-META-039"),
    writers=RAW_ONLY,
    steps=[create(IDV), Append(rows=idv(1)), Append(rows=idv(2)), _raw(raw.drop_refs(), "remove refs")],
    expected=[Expected(ref="main", rows=idv(1, 2)), Expected(version=1, rows=idv(1)), Expected(rows=idv(1, 2))],
)


def cases() -> list[Case]:
    """Every Iceberg case, in corpus order."""
    return list(_CASES)


# Steps that commit exactly one snapshot (on main, or on the named branch for Append).
_SNAPSHOT_STEPS = (Append, Overwrite, Delete, Update, Optimize)


def declared_last_sequence_number(case_: Case) -> int:
    """The table's last-sequence-number after the case's steps, per the step model (v2/v3)."""
    n = 0
    for step in case_.steps:
        if isinstance(step, _SNAPSHOT_STEPS):
            n += 1
        elif isinstance(step, Raw):
            n += getattr(step.fn, "new_snapshots", 0)
    return n

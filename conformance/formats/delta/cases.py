"""The Delta case corpus: one feature or edge of PROTOCOL.md per case, with declared expectations.

Every expectation here is the spec's answer, written by hand: rows are never computed by a
reader. Versions follow the writer-neutral step model: ``Create`` commits version 0 (protocol
and metadata, no data), every other step except ``Checkpoint`` commits exactly one version, and
a ``Raw`` step commits ``fn.new_commits`` versions (see ``delta_raw``).

The corpus covers the Delta Acceptance Testing (DAT) reader tables (basic append, partitioned,
multi-partitioned, schema change, all primitive types, nested types, checkpoint, no replay,
stats as struct, no stats, deletion vectors, CHECK constraints, change data feed, generated
columns, column mapping, timestamp_ntz) and the log edges DAT leaves out: multi-part and V2
checkpoints, ``_last_checkpoint`` variants, checksums, unknown fields and actions, in-commit
timestamps, domain metadata, txn, append-only, re-adds, percent-encoded paths and negative cases.

Metadata keys an ``Expected`` may declare (all optional; engines check the ones they expose):
``version`` (the version the read resolves to), ``partition_columns``, ``configuration`` (keys
that must be present with these values), ``features`` (table features the protocol must
support, listed or implied by legacy versions), ``protocol`` ([minReader, minWriter]),
``txns`` ({appId: version}), ``domains`` ({domain: configuration}) and ``changes`` (the change
data feed from version 1 to the read version, as rows without ``_commit_timestamp``).

``Case.features`` names table features only; the runner adds the time-travel needs of each
expectation itself, so a reader without time travel still gets judged on the latest version.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Iterable

import pyarrow as pa

from conformance.formats.delta import raw
from conformance.formats.delta.steps import Checkpoint, protocol_properties
from conformance.cases.values import d, empty, ntz, rows, ts
from conformance.model import (
    AddColumn,
    AddConstraint,
    Append,
    Case,
    Create,
    Delete,
    DropColumn,
    Expected,
    Optimize,
    Overwrite,
    Raw,
    RenameColumn,
    SetProperties,
    Update,
)

FORMAT = "delta"

# Table properties and feature names, spelled as the spec spells them.
P_DV = "delta.enableDeletionVectors"
P_CDF = "delta.enableChangeDataFeed"
P_CM_MODE = "delta.columnMapping.mode"
P_APPEND_ONLY = "delta.appendOnly"
P_ICT = "delta.enableInCommitTimestamps"
P_ICT_VERSION = "delta.inCommitTimestampEnablementVersion"
P_STATS_JSON = "delta.checkpoint.writeStatsAsJson"
P_STATS_STRUCT = "delta.checkpoint.writeStatsAsStruct"
GEN_EXPR = "delta.generationExpression"


def _raw(fn, description: str) -> Raw:
    return Raw(fn=fn, description=description)


_CASES: list[Case] = []


def case(slug: str, description: str, *, rules: Iterable[str], steps, expected, features=(), notes="", writers=None, violates=()) -> None:
    """Register one case of the corpus."""
    _CASES.append(
        Case(
            id=f"{FORMAT}/{slug}",
            format=FORMAT,
            description=description,
            rules=tuple(rules),
            features=tuple(features),
            steps=tuple(steps),
            expected=tuple(expected),
            writers=writers,
            notes=notes,
            violates=tuple(violates),
        )
    )


RAW_ONLY = ("reference",)  # cases with Raw steps: only the reference writer runs them

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


# --------------------------------------------------------------------------------------------
# Basic reads and log replay
# --------------------------------------------------------------------------------------------

case(
    "empty-table",
    "A table with only its version 0 (protocol and metaData, no files) reads as no rows.",
    rules=("DELTA-ACTION-001", "DELTA-REPLAY-002"),
    steps=[Create(schema=BASIC)],
    expected=[Expected(rows=empty(BASIC), metadata={"version": 0, "partition_columns": []})],
)

case(
    "basic-append",
    "Two appends on an unpartitioned table (DAT basic_append); every version readable.",
    rules=("DELTA-LOG-004", "DELTA-REPLAY-001", "DELTA-REPLAY-006", "DELTA-SCHEMA-001", "DELTA-COLMAP-010"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), Append(rows=rows(BASIC, *B2))],
    expected=[
        Expected(version=0, rows=empty(BASIC)),
        Expected(version=1, rows=rows(BASIC, *B1)),
        Expected(rows=rows(BASIC, *B1, *B2), metadata={"version": 2, "partition_columns": []}),
    ],
)

case(
    "multiple-files-per-commit",
    "One commit adding four data files: all of them are live.",
    rules=("DELTA-REPLAY-006", "DELTA-REPLAY-009"),
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1, *B2, *B4), files=4)],
    expected=[Expected(rows=rows(BASIC, *B1, *B2, *B4), metadata={"version": 1})],
)

case(
    "time-travel-versions",
    "Append, append, delete, update and overwrite; the table read at every version 0..5.",
    rules=("DELTA-REPLAY-001", "DELTA-REPLAY-006", "DELTA-REPLAY-007", "DELTA-REPLAY-009"),
    steps=[
        Create(schema=IDV),
        Append(rows=idv(0, 1, 2)),
        Append(rows=idv(3, 4)),
        Delete(where="id = 1"),
        Update(set={"value": "'changed'"}, where="id = 3"),
        Overwrite(rows=idv(100, 101)),
    ],
    expected=[
        Expected(version=0, rows=empty(IDV)),
        Expected(version=1, rows=idv(0, 1, 2)),
        Expected(version=2, rows=idv(0, 1, 2, 3, 4)),
        Expected(version=3, rows=idv(0, 2, 3, 4)),
        Expected(version=4, rows=rows(IDV, (0, "v0"), (2, "v2"), (3, "changed"), (4, "v4"))),
        Expected(version=5, rows=idv(100, 101)),
        Expected(rows=idv(100, 101), metadata={"version": 5}),
    ],
)

case(
    "update-copy-on-write",
    "UPDATE without deletion vectors: the rewritten file replaces the old one.",
    rules=("DELTA-REPLAY-006", "DELTA-REPLAY-007", "DELTA-ACTION-013"),
    steps=[Create(schema=IDV), Append(rows=idv(1, 2, 3)), Update(set={"value": "upper(value)"}, where="id >= 2")],
    expected=[
        Expected(version=1, rows=idv(1, 2, 3)),
        Expected(rows=rows(IDV, (1, "v1"), (2, "V2"), (3, "V3")), metadata={"version": 2}),
    ],
)

case(
    "optimize-compaction",
    "OPTIMIZE rewrites six files into one with dataChange=false; the rows do not change.",
    rules=("DELTA-ACTION-013", "DELTA-ACTION-014", "DELTA-ACTION-015", "DELTA-REPLAY-006"),
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1), files=3),
        Append(rows=rows(BASIC, *B2, *B3), files=3),
        Optimize(),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1, *B2, *B3)),
        Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"version": 3}),
    ],
)

case(
    "readd-after-remove",
    "A file added at v1, removed at v2 and added again at v3 is live at v3 (not lost as a tombstone).",
    rules=("DELTA-REPLAY-006", "DELTA-REPLAY-007", "DELTA-REPLAY-008", "DELTA-ACTION-005"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.remove_first_file(), "commit v2: remove the file of v1"),
        _raw(raw.readd_removed_file(1), "commit v3: add the same path again"),
    ],
    expected=[
        Expected(version=1, rows=rows(BASIC, *B1)),
        Expected(version=2, rows=empty(BASIC)),
        Expected(rows=rows(BASIC, *B1), metadata={"version": 3}),
    ],
)

case(
    "unpadded-commit-name",
    "A commit file named `1.json` (not 20 digits) is not version 1: the table is at version 0.",
    rules=("DELTA-LOG-004",),
    violates=("DELTA-LOG-004",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.rename_commit_unpadded(1), "rename 00000000000000000001.json to 1.json"),
    ],
    expected=[Expected(rows=empty(BASIC), metadata={"version": 0})],
    notes="A reader that parses any number before `.json` as a version returns the rows of B1 instead.",
)

# --------------------------------------------------------------------------------------------
# Partitioning
# --------------------------------------------------------------------------------------------

P_ROWS = [("a", 1, 1.1), ("b", 2, 2.2), ("a", 3, 3.3), (None, 4, 4.4)]
case(
    "partitioned-string",
    "Partitioned by a string column, one null partition (DAT basic_partitioned).",
    rules=("DELTA-PART-001", "DELTA-WRITER-003", "DELTA-LOG-003"),
    steps=[Create(schema=BASIC, partition_by=("letter",)), Append(rows=rows(BASIC, *P_ROWS))],
    expected=[Expected(rows=rows(BASIC, *P_ROWS), metadata={"version": 1, "partition_columns": ["letter"]})],
)

PN = pa.schema([("part", pa.int32()), ("value", pa.string())])
PN_ROWS = [(1, "x"), (None, "y"), (2, "z"), (None, "w")]
case(
    "partition-null-int",
    "Null values of an integer partition column (serialised as null or the empty string).",
    rules=("DELTA-PART-001", "DELTA-PART-002"),
    steps=[Create(schema=PN, partition_by=("part",)), Append(rows=rows(PN, *PN_ROWS))],
    expected=[Expected(rows=rows(PN, *PN_ROWS), metadata={"partition_columns": ["part"]})],
)

PS = pa.schema([("p", pa.string()), ("id", pa.int32())])
case(
    "partition-empty-string-is-null",
    "A partition value stored as the empty string reads as null, for a string column too.",
    rules=("DELTA-PART-001",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=PS, partition_by=("p",)),
        Append(rows=rows(PS, ("x", 1), (None, 2))),
        _raw(raw.rewrite_partition_values(1, "p", {None: ""}), "store the null partition value as \"\""),
    ],
    expected=[Expected(rows=rows(PS, ("x", 1), (None, 2)))],
    notes="Consequence of the spec: a non-null empty string cannot be a partition value.",
)

ESCAPED = ["a b", "a/b", "a=b", "100%", "%2F", "ünïcödé ✓", "x:y#z{1}[2]", "quote'\"", "?&*", "tab\there"]
case(
    "partition-escaped-values",
    "String partition values that need escaping in a directory name: space, '/', '=', '%', unicode, ...",
    rules=("DELTA-ACTION-017", "DELTA-LOG-003", "DELTA-PART-001"),
    steps=[
        Create(schema=PS, partition_by=("p",)),
        Append(rows=rows(PS, *[(v, i) for i, v in enumerate(ESCAPED)])),
    ],
    expected=[Expected(rows=rows(PS, *[(v, i) for i, v in enumerate(ESCAPED)]))],
    notes="The directory layout (Hive-style %XX escaping) is a convention; the values come from the log.",
)

MP = pa.schema([("letter", pa.string()), ("date", pa.date32()), ("data", pa.binary()), ("number", pa.int64())])
MP_ROWS = [
    ("a", d("1970-01-01"), b"hello", 1),
    ("b", d("1970-01-02"), b"\x01\x02", 2),
    ("b", None, b"world", 3),
    (None, d("2020-02-29"), None, 4),
]
case(
    "multi-partitioned",
    "Partitioned by string, date and binary columns, with nulls (DAT multi_partitioned).",
    rules=("DELTA-PART-001", "DELTA-PART-003", "DELTA-PART-008", "DELTA-WRITER-003"),
    steps=[Create(schema=MP, partition_by=("letter", "date", "data")), Append(rows=rows(MP, *MP_ROWS))],
    expected=[Expected(rows=rows(MP, *MP_ROWS), metadata={"partition_columns": ["letter", "date", "data"]})],
)

MP2 = pa.schema([("is_ok", pa.bool_()), ("ts", pa.timestamp("us", tz="UTC")), ("amount", pa.decimal128(10, 2)), ("value", pa.int64())])
MP2_ROWS = [
    (True, ts("2021-01-01T10:11:12.123456"), Decimal("12.34"), 1),
    (False, ts("1970-01-01T00:00:00"), Decimal("-0.50"), 2),
    (None, ts("2021-01-01T10:11:12.123456"), None, 3),
    (True, None, Decimal("99999999.99"), 4),
]
case(
    "multi-partitioned-typed",
    "Partitioned by boolean, timestamp and decimal columns, with nulls (DAT multi_partitioned_2).",
    rules=("DELTA-PART-002", "DELTA-PART-004", "DELTA-PART-007", "DELTA-PART-001"),
    steps=[Create(schema=MP2, partition_by=("is_ok", "ts", "amount")), Append(rows=rows(MP2, *MP2_ROWS))],
    expected=[Expected(rows=rows(MP2, *MP2_ROWS), metadata={"partition_columns": ["is_ok", "ts", "amount"]})],
)

PNUM = pa.schema(
    [
        ("b", pa.int8()),
        ("s", pa.int16()),
        ("i", pa.int32()),
        ("l", pa.int64()),
        ("f", pa.float32()),
        ("x", pa.float64()),
        ("dt", pa.date32()),
        ("label", pa.string()),
    ]
)
PNUM_ROWS = [
    (-128, -32768, -2147483648, -9223372036854775808, -1.5, -2.25, d("1900-01-01"), "min"),
    (127, 32767, 2147483647, 9223372036854775807, 0.5, 1e100, d("2999-12-31"), "max"),
    (0, 0, 0, 0, 0.0, 0.0, d("1970-01-01"), "zero"),
]
case(
    "partition-numeric-types",
    "Partitioned by byte, short, int, long, float, double and date columns at their extremes.",
    rules=("DELTA-PART-002", "DELTA-PART-003"),
    steps=[Create(schema=PNUM, partition_by=("b", "s", "i", "l", "f", "x", "dt")), Append(rows=rows(PNUM, *PNUM_ROWS))],
    expected=[Expected(rows=rows(PNUM, *PNUM_ROWS), metadata={"partition_columns": ["b", "s", "i", "l", "f", "x", "dt"]})],
)

PTS = pa.schema([("ts", pa.timestamp("us", tz="UTC")), ("id", pa.int32())])
PTS_ROWS = [(ts("2021-01-01T00:00:00"), 1), (ts("2021-06-01T12:30:45.123456"), 2), (ts("2022-12-31T23:59:59.999999"), 3)]
case(
    "partition-timestamp-forms",
    "Timestamp partition values in every form the spec allows: `yyyy-MM-dd HH:mm:ss`, with `.ffffff`, ISO-8601 UTC.",
    rules=("DELTA-PART-004", "DELTA-PART-005"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=PTS, partition_by=("ts",)),
        Append(rows=rows(PTS, *PTS_ROWS)),
        _raw(
            raw.reformat_timestamp_partitions(1, "ts", ("iso_utc", "space_micros", "space")),
            "rewrite the three partition values in the three serialised forms",
        ),
    ],
    # The third value has micros but lands in the `space` form, which has none; see notes.
    expected=[Expected(rows=rows(PTS, (ts("2021-01-01T00:00:00"), 1), (ts("2021-06-01T12:30:45.123456"), 2), (ts("2022-12-31T23:59:59"), 3)))],
    notes=(
        "Forms without a zone are read in the writing system's time zone; the corpus writes in UTC, "
        "so the expected instants assume UTC. The `space` form has no fraction, so the third value "
        "loses its microseconds in the rewrite (declared as 23:59:59)."
    ),
)

case(
    "partition-dir-mismatch",
    "A file under directory `p=zzz/` whose log entry says p='x': the log wins.",
    rules=("DELTA-LOG-003",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=PS, partition_by=("p",)),
        Append(rows=rows(PS, ("x", 1), ("x", 2))),
        _raw(raw.move_first_file("p=zzz/moved-part-00000.parquet"), "commit v2: move the file under p=zzz/, partitionValues unchanged"),
    ],
    expected=[Expected(rows=rows(PS, ("x", 1), ("x", 2)), metadata={"version": 2})],
)

# --------------------------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------------------------

case(
    "percent-encoded-paths",
    "add.path is an RFC 2396 URI: `dir%20with%20space/...%23...%25` names `dir with space/...#...%`.",
    rules=("DELTA-ACTION-017",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.move_first_file("dir with space/file #1 100%.parquet"), "commit v2: move the file to a name needing escapes"),
    ],
    expected=[Expected(version=1, rows=rows(BASIC, *B1)), Expected(rows=rows(BASIC, *B1), metadata={"version": 2})],
)

case(
    "absolute-paths",
    "add.path may be an absolute URI inside the table root.",
    rules=("DELTA-ACTION-017", "DELTA-ACTION-005"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.absolute_path_for_first_file(), "commit v2: re-add the file by its absolute URI"),
        Append(rows=rows(BASIC, *B2)),
    ],
    expected=[Expected(rows=rows(BASIC, *B1, *B2), metadata={"version": 3})],
    notes="The absolute URI is the table's real location at build time, so the table cannot be moved afterwards.",
)

# --------------------------------------------------------------------------------------------
# Schema and types
# --------------------------------------------------------------------------------------------

PRIM = pa.schema(
    [
        ("byte", pa.int8()),
        ("short", pa.int16()),
        ("int", pa.int32()),
        ("long", pa.int64()),
        ("float", pa.float32()),
        ("double", pa.float64()),
        ("decimal", pa.decimal128(10, 2)),
        ("decimal_wide", pa.decimal128(38, 18)),
        ("string", pa.string()),
        ("binary", pa.binary()),
        ("boolean", pa.bool_()),
        ("date", pa.date32()),
        ("timestamp", pa.timestamp("us", tz="UTC")),
    ]
)
PRIM_ROWS = [
    (-128, -32768, -2147483648, -9223372036854775808, -3.4028234663852886e38, -1.7976931348623157e308,
     Decimal("-99999999.99"), Decimal("-99999999999999999999.999999999999999999"), "", b"", False,
     d("0001-01-01"), ts("0001-01-01T00:00:00")),
    (127, 32767, 2147483647, 9223372036854775807, 3.4028234663852886e38, 1.7976931348623157e308,
     Decimal("99999999.99"), Decimal("12345678901234567890.123456789012345678"), "ünïcödé ✓ 𝄞", b"\x00\xff\x10",
     True, d("9999-12-31"), ts("9999-12-31T23:59:59.999999")),
    (0, 0, 0, 0, 1.5, 0.1, Decimal("0.00"), Decimal("0E-18"), "a" * 300, b"abc", True, d("1970-01-01"),
     ts("1970-01-01T00:00:00.000001")),
    (None,) * 13,
]
case(
    "all-primitive-types",
    "One column of every primitive type, at the ends of each range, plus an all-null row (DAT all_primitive_types).",
    rules=("DELTA-SCHEMA-006", "DELTA-SCHEMA-007", "DELTA-READER-002"),
    steps=[Create(schema=PRIM), Append(rows=rows(PRIM, *PRIM_ROWS))],
    expected=[Expected(rows=rows(PRIM, *PRIM_ROWS))],
    notes="Years 0001 and 9999 exceed what INT96 or nanosecond readers hold; the spec's timestamp is microseconds.",
)

NTZ = pa.schema([("id", pa.int32()), ("ts_ntz", pa.timestamp("us")), ("ts", pa.timestamp("us", tz="UTC"))])
NTZ_ROWS = [
    (1, ntz("1900-01-01T00:00:00"), ts("1900-01-01T00:00:00")),
    (2, ntz("2024-02-29T12:34:56.123456"), ts("2024-02-29T12:34:56.123456")),
    (3, None, None),
]
case(
    "timestamp-ntz",
    "timestamp_ntz next to timestamp: wall-clock values, no zone shift (DAT timestamp_ntz).",
    rules=("DELTA-SCHEMA-006", "DELTA-SCHEMA-007", "DELTA-SCHEMA-008"),
    features=("timestampNtz",),
    steps=[Create(schema=NTZ, features=("timestampNtz",)), Append(rows=rows(NTZ, *NTZ_ROWS))],
    expected=[Expected(rows=rows(NTZ, *NTZ_ROWS), metadata={"features": ["timestampNtz"]})],
)

NTZP = pa.schema([("ts_ntz", pa.timestamp("us")), ("id", pa.int32())])
NTZP_ROWS = [(ntz("2024-01-01T00:00:00"), 1), (ntz("2024-01-01T08:30:00.5"), 2), (None, 3)]
case(
    "timestamp-ntz-partition",
    "Partitioned by a timestamp_ntz column (`yyyy-MM-dd HH:mm:ss[.ffffff]`, no zone).",
    rules=("DELTA-PART-006", "DELTA-SCHEMA-008", "DELTA-PART-001"),
    features=("timestampNtz",),
    steps=[Create(schema=NTZP, partition_by=("ts_ntz",), features=("timestampNtz",)), Append(rows=rows(NTZP, *NTZP_ROWS))],
    expected=[Expected(rows=rows(NTZP, *NTZP_ROWS), metadata={"partition_columns": ["ts_ntz"], "features": ["timestampNtz"]})],
)

INNER = pa.struct([("c", pa.string()), ("d", pa.int64())])
NS = pa.schema([("id", pa.int32()), ("s", pa.struct([("a", pa.int32()), ("b", INNER)]))])
NS_ROWS = [
    (1, {"a": 1, "b": {"c": "x", "d": 10}}),
    (2, {"a": None, "b": None}),
    (3, None),
    (4, {"a": 4, "b": {"c": None, "d": None}}),
]
case(
    "nested-struct",
    "Struct inside struct, with nulls at every level (DAT nested_types).",
    rules=("DELTA-SCHEMA-001", "DELTA-SCHEMA-002", "DELTA-STATS-003"),
    steps=[Create(schema=NS), Append(rows=rows(NS, *NS_ROWS))],
    expected=[Expected(rows=rows(NS, *NS_ROWS))],
)

NA = pa.schema([("id", pa.int32()), ("ints", pa.list_(pa.int32())), ("strs", pa.list_(pa.string()))])
NA_ROWS = [(1, [1, 2, 3], ["a"]), (2, [], []), (3, None, None), (4, [None, 4], [None, "b", ""])]
case(
    "nested-array",
    "Arrays of int and string: empty, null, and with null elements.",
    rules=("DELTA-SCHEMA-003",),
    steps=[Create(schema=NA), Append(rows=rows(NA, *NA_ROWS))],
    expected=[Expected(rows=rows(NA, *NA_ROWS))],
)

NM = pa.schema([("id", pa.int32()), ("m", pa.map_(pa.string(), pa.int32())), ("m2", pa.map_(pa.int32(), pa.string()))])
NM_ROWS = [(1, [("a", 1), ("b", None)], [(1, "one")]), (2, [], []), (3, None, None), (4, [("z", 26)], [(-1, None), (7, "seven")])]
case(
    "nested-map",
    "Maps with string and int keys: empty, null, and with null values.",
    rules=("DELTA-SCHEMA-004",),
    steps=[Create(schema=NM), Append(rows=rows(NM, *NM_ROWS))],
    expected=[Expected(rows=rows(NM, *NM_ROWS))],
)

# A map whose values may be null while the value struct's own field is required: a null value
# must not make the required field "null" (found by the property suite in delta-rs's DataFusion path).
_REQUIRED_INNER = pa.struct([pa.field("a", pa.struct([pa.field("a", pa.string(), nullable=False)]), nullable=False)])
NMR = pa.schema([("id", pa.int32()), ("m", pa.map_(pa.string(), pa.field("value", _REQUIRED_INNER, nullable=True)))])
NMR_ROWS = [(1, [("k", {"a": {"a": "x"}}), ("n", None)]), (2, []), (3, [("z", None)])]
case(
    "nested-map-null-value-required-fields",
    "Map values that are null, of a struct type whose nested field is required (valueContainsNull true, "
    "the field's nullable false).",
    rules=("DELTA-SCHEMA-004", "DELTA-SCHEMA-002"),
    steps=[Create(schema=NMR), Append(rows=rows(NMR, *NMR_ROWS))],
    expected=[Expected(rows=rows(NMR, *NMR_ROWS))],
)

NC = pa.schema(
    [
        ("id", pa.int32()),
        ("arr_struct", pa.list_(pa.struct([("x", pa.int32()), ("y", pa.string())]))),
        ("map_arr", pa.map_(pa.string(), pa.list_(pa.int64()))),
        ("struct_mix", pa.struct([("m", pa.map_(pa.string(), pa.string())), ("ll", pa.list_(pa.list_(pa.int32())))])),
    ]
)
NC_ROWS = [
    (1, [{"x": 1, "y": "a"}, {"x": 2, "y": None}], [("k", [1, 2]), ("e", [])], {"m": [("a", "b")], "ll": [[1], [], [2, 3]]}),
    (2, [], [("n", None)], {"m": None, "ll": None}),
    (3, None, None, None),
    (4, [None], [], {"m": [], "ll": [None, [None]]}),
]
case(
    "nested-combo",
    "Array of struct, map of array, struct holding a map and an array of arrays.",
    rules=("DELTA-SCHEMA-001", "DELTA-SCHEMA-003", "DELTA-SCHEMA-004"),
    steps=[Create(schema=NC), Append(rows=rows(NC, *NC_ROWS))],
    expected=[Expected(rows=rows(NC, *NC_ROWS))],
)

VOID = pa.schema([("id", pa.int32()), ("nothing", pa.null())])
case(
    "void-column",
    "A void (NullType) column next to a real one: never in the data files, read as all-null.",
    rules=("DELTA-SCHEMA-010", "DELTA-SCHEMA-006"),
    steps=[Create(schema=VOID), Append(rows=rows(VOID, (1, None), (2, None)))],
    expected=[Expected(rows=rows(VOID, (1, None), (2, None)))],
    notes=(
        "Older PROTOCOL.md text left void behaviour undefined and recommended dropping void columns on "
        "read; the current text (void type section) says readers return them as all-null. The kit follows "
        "the current text, so a reader that drops the column fails on the schema only."
    ),
)

SC1 = pa.schema([("letter", pa.string()), ("number", pa.int64())])
SC2 = pa.schema([("id", pa.int32()), ("name", pa.string()), ("score", pa.float64())])
case(
    "schema-change-overwrite",
    "Overwrite with a different schema: each version reads with its own schema (DAT with_schema_change).",
    rules=("DELTA-ACTION-002", "DELTA-REPLAY-002", "DELTA-REPLAY-007"),
    steps=[
        Create(schema=SC1),
        Append(rows=rows(SC1, ("a", 1), ("b", 2))),
        Overwrite(rows=rows(SC2, (1, "x", 0.5), (2, None, None))),
    ],
    expected=[
        Expected(version=1, rows=rows(SC1, ("a", 1), ("b", 2))),
        Expected(rows=rows(SC2, (1, "x", 0.5), (2, None, None)), metadata={"version": 2}),
    ],
)

AC1 = pa.schema([("id", pa.int32()), ("a", pa.string())])
AC2 = pa.schema([("id", pa.int32()), ("a", pa.string()), ("b", pa.int64())])
case(
    "add-column",
    "ADD COLUMN: files written before it read null for the new column.",
    rules=("DELTA-READER-001", "DELTA-ACTION-002"),
    steps=[
        Create(schema=AC1),
        Append(rows=rows(AC1, (1, "x"))),
        AddColumn(field=pa.field("b", pa.int64())),
        Append(rows=rows(AC2, (2, "y", 20))),
    ],
    expected=[
        Expected(version=1, rows=rows(AC1, (1, "x"))),
        Expected(version=2, rows=rows(AC2, (1, "x", None))),
        Expected(rows=rows(AC2, (1, "x", None), (2, "y", 20)), metadata={"version": 3}),
    ],
)

GEN = pa.schema([("id", pa.int64()), pa.field("doubled", pa.int64(), metadata={GEN_EXPR: "id * 2"})])
case(
    "generated-columns",
    "A generated column (`delta.generationExpression`); readers return the stored values (DAT generated_columns).",
    rules=("DELTA-WRITER-015", "DELTA-WRITER-016", "DELTA-SCHEMA-009"),
    steps=[Create(schema=GEN, features=("generatedColumns",)), Append(rows=rows(GEN, (1, 2), (5, 10), (-3, -6)))],
    expected=[Expected(rows=rows(GEN, (1, 2), (5, 10), (-3, -6)), metadata={"features": ["generatedColumns"]})],
    notes="The rows carry values that satisfy the expression, so a writer that only checks (and one that computes) both succeed.",
)

# --------------------------------------------------------------------------------------------
# Column mapping
# --------------------------------------------------------------------------------------------

CM = pa.schema([("id", pa.int64()), ("name", pa.string()), ("part", pa.string())])
CM_R = pa.schema([("id", pa.int64()), ("full_name", pa.string()), ("part", pa.string())])
for mode, rules_ in (
    ("name", ("DELTA-COLMAP-001", "DELTA-COLMAP-003", "DELTA-COLMAP-006", "DELTA-COLMAP-008", "DELTA-COLMAP-013", "DELTA-COLMAP-014")),
    ("id", ("DELTA-COLMAP-001", "DELTA-COLMAP-003", "DELTA-COLMAP-007", "DELTA-COLMAP-011", "DELTA-COLMAP-014")),
):
    case(
        f"column-mapping-{mode}",
        f"Column mapping in {mode} mode, partitioned, with a rename between two appends (DAT column_mapping).",
        rules=rules_,
        features=("columnMapping",),
        steps=[
            Create(schema=CM, partition_by=("part",), properties={P_CM_MODE: mode}, features=("columnMapping",)),
            Append(rows=rows(CM, (1, "ann", "p1"), (2, None, "p2"))),
            RenameColumn(old="name", new="full_name"),
            Append(rows=rows(CM_R, (3, "cy", "p1"))),
        ],
        expected=[
            Expected(version=1, rows=rows(CM, (1, "ann", "p1"), (2, None, "p2"))),
            Expected(version=2, rows=rows(CM_R, (1, "ann", "p1"), (2, None, "p2"))),
            Expected(
                rows=rows(CM_R, (1, "ann", "p1"), (2, None, "p2"), (3, "cy", "p1")),
                metadata={"version": 3, "configuration": {P_CM_MODE: mode}, "features": ["columnMapping"], "partition_columns": ["part"]},
            ),
        ],
    )

DR1 = pa.schema([("id", pa.int64()), ("a", pa.string()), ("b", pa.string())])
DR2 = pa.schema([("id", pa.int64()), ("a", pa.string())])
case(
    "column-mapping-drop-readd",
    "Name mode: drop column b, add a new b: old files' b values must not come back.",
    rules=("DELTA-COLMAP-004", "DELTA-COLMAP-013", "DELTA-READER-001", "DELTA-COLMAP-009"),
    features=("columnMapping",),
    steps=[
        Create(schema=DR1, properties={P_CM_MODE: "name"}, features=("columnMapping",)),
        Append(rows=rows(DR1, (1, "a1", "old-b"))),
        DropColumn(name="b"),
        AddColumn(field=pa.field("b", pa.string())),
        Append(rows=rows(DR1, (2, "a2", "new-b"))),
    ],
    expected=[
        Expected(version=1, rows=rows(DR1, (1, "a1", "old-b"))),
        Expected(version=2, rows=rows(DR2, (1, "a1"))),
        Expected(version=3, rows=rows(DR1, (1, "a1", None))),
        Expected(rows=rows(DR1, (1, "a1", None), (2, "a2", "new-b")), metadata={"version": 4}),
    ],
)

case(
    "column-mapping-legacy-protocol",
    "Name mode on the legacy protocol (2,5): reader version 2 means column mapping.",
    rules=("DELTA-FEATURE-013", "DELTA-FEATURE-012", "DELTA-COLMAP-013"),
    features=("columnMapping",),
    steps=[
        Create(schema=CM, properties={P_CM_MODE: "name", **protocol_properties(2, 5)}),
        Append(rows=rows(CM, (1, "ann", "p1"))),
        RenameColumn(old="name", new="full_name"),
    ],
    expected=[Expected(rows=rows(CM_R, (1, "ann", "p1")), metadata={"protocol": [2, 5], "version": 2})],
)

case(
    "column-mapping-mode-without-feature",
    "delta.columnMapping.mode=name on a (1,2) table without physical names: the property is not honoured.",
    rules=("DELTA-COLMAP-002",),
    violates=("DELTA-COLMAP-003", "DELTA-COLMAP-005", "DELTA-COLMAP-009"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC, properties=protocol_properties(1, 2)),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.set_configuration(0, {P_CM_MODE: "name"}), "set the mode property in version 0's metaData"),
    ],
    expected=[Expected(rows=rows(BASIC, *B1), metadata={"protocol": [1, 2]})],
    notes="SHOULD-level rule: a reader that honours the mode anyway finds no physical names and fails.",
)

# --------------------------------------------------------------------------------------------
# Deletion vectors
# --------------------------------------------------------------------------------------------

DV_CREATE = Create(schema=IDV, properties={P_DV: "true"}, features=("deletionVectors",))
case(
    "deletion-vectors",
    "DELETE on a table with deletion vectors enabled, twice on the same file (DAT deletion_vectors).",
    rules=(
        "DELTA-DV-001", "DELTA-DV-004", "DELTA-DV-006", "DELTA-DV-014", "DELTA-DV-015", "DELTA-DV-016",
        "DELTA-ACTION-009", "DELTA-REPLAY-008",
    ),
    features=("deletionVectors",),
    steps=[DV_CREATE, Append(rows=idv(*range(10))), Delete(where="id = 2 OR id >= 7"), Delete(where="id = 4")],
    expected=[
        Expected(version=1, rows=idv(*range(10))),
        Expected(version=2, rows=idv(0, 1, 3, 4, 5, 6)),
        Expected(rows=idv(0, 1, 3, 5, 6), metadata={"version": 3, "features": ["deletionVectors"]}),
    ],
)

case(
    "deletion-vector-inline",
    "An inline (storageType 'i') DV deleting physical rows 1 and 4, on a table whose DV property is unset.",
    rules=("DELTA-DV-003", "DELTA-DV-004", "DELTA-DV-007", "DELTA-DV-010", "DELTA-DV-012", "DELTA-DV-013", "DELTA-DV-015"),
    violates=("DELTA-DV-002",),
    features=("deletionVectors",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=IDV, features=("deletionVectors",)),
        Append(rows=idv(0, 1, 2, 3, 4, 5)),
        _raw(raw.inline_dv_on_first_file([1, 4]), "commit v2: remove the file, re-add it with an inline DV {1, 4}"),
    ],
    expected=[Expected(version=1, rows=idv(0, 1, 2, 3, 4, 5)), Expected(rows=idv(0, 2, 3, 5), metadata={"version": 2})],
    notes=(
        "Assumes the writer keeps the appended row order inside the single data file (physical row i = id i). "
        "The spec's own inline example decodes to the older 'native' layout (magic 1681511376, big-endian); "
        "this case uses the portable layout the spec text prescribes."
    ),
)

case(
    "deletion-vector-restore",
    "remove(p, dv) + add(p, NULL) in one commit: legal (different dvIds), and the deleted rows come back.",
    rules=("DELTA-ACTION-005", "DELTA-ACTION-009", "DELTA-REPLAY-006", "DELTA-REPLAY-008"),
    features=("deletionVectors",),
    writers=RAW_ONLY,
    steps=[
        DV_CREATE,
        Append(rows=idv(0, 1, 2, 3, 4)),
        Delete(where="id = 1"),
        _raw(raw.drop_dv_on_first_file(), "commit v3: remove (path, dv) and add (path, NULL)"),
    ],
    expected=[
        Expected(version=2, rows=idv(0, 2, 3, 4)),
        Expected(rows=idv(0, 1, 2, 3, 4), metadata={"version": 3}),
    ],
)

# --------------------------------------------------------------------------------------------
# Writer-side features a reader must tolerate
# --------------------------------------------------------------------------------------------

CK = pa.schema([("id", pa.int32()), ("price", pa.float64())])
case(
    "check-constraints",
    "A CHECK constraint stored as delta.constraints.<name> (DAT check_constraints).",
    rules=("DELTA-WRITER-011", "DELTA-WRITER-012", "DELTA-WRITER-014"),
    steps=[
        Create(schema=CK),
        AddConstraint(name="price_positive", expression="price > 0"),
        Append(rows=rows(CK, (1, 9.99), (2, 0.01))),
    ],
    expected=[
        Expected(
            rows=rows(CK, (1, 9.99), (2, 0.01)),
            metadata={"version": 2, "configuration": {"delta.constraints.price_positive": "price > 0"}, "features": ["checkConstraints"]},
        )
    ],
)

# The change feed of versions 1..3 of "change-data-feed" (Add CDC File, reader requirements).
CDF_CHANGES = [
    {"id": 1, "value": "v1", "_change_type": "insert", "_commit_version": 1},
    {"id": 2, "value": "v2", "_change_type": "insert", "_commit_version": 1},
    {"id": 3, "value": "v3", "_change_type": "insert", "_commit_version": 1},
    {"id": 2, "value": "v2", "_change_type": "update_preimage", "_commit_version": 2},
    {"id": 2, "value": "updated", "_change_type": "update_postimage", "_commit_version": 2},
    {"id": 3, "value": "v3", "_change_type": "delete", "_commit_version": 3},
]
case(
    "change-data-feed",
    "Change data feed enabled: UPDATE/DELETE write _change_data files, which plain reads ignore (DAT cdf).",
    rules=("DELTA-CDF-001", "DELTA-CDF-002", "DELTA-CDF-004", "DELTA-CDF-005", "DELTA-CDF-006", "DELTA-CDF-007", "DELTA-CDF-009", "DELTA-ACTION-010"),
    features=("changeDataFeed",),
    steps=[
        Create(schema=IDV, properties={P_CDF: "true"}, features=("changeDataFeed",)),
        Append(rows=idv(1, 2, 3)),
        Update(set={"value": "'updated'"}, where="id = 2"),
        Delete(where="id = 3"),
    ],
    expected=[
        Expected(version=1, rows=idv(1, 2, 3)),
        Expected(version=2, rows=rows(IDV, (1, "v1"), (2, "updated"), (3, "v3"))),
        Expected(
            rows=rows(IDV, (1, "v1"), (2, "updated")),
            metadata={"version": 3, "configuration": {P_CDF: "true"}, "changes": CDF_CHANGES},
        ),
    ],
    notes=(
        "metadata.changes is the change feed of versions 1..3 (table_changes), without _commit_timestamp, "
        "which depends on the clock. Describe-based engines do not report it; the golden suite checks the "
        "reference's change feed against it."
    ),
)

case(
    "append-only",
    "delta.appendOnly=true: appends and an OPTIMIZE (dataChange=false) are allowed.",
    rules=("DELTA-WRITER-004", "DELTA-WRITER-005", "DELTA-WRITER-006", "DELTA-ACTION-013"),
    steps=[
        Create(schema=BASIC, properties={P_APPEND_ONLY: "true"}, features=("appendOnly",)),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        Optimize(),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1, *B2)),
        Expected(rows=rows(BASIC, *B1, *B2), metadata={"version": 3, "configuration": {P_APPEND_ONLY: "true"}}),
    ],
)

INV = pa.schema([pa.field("x", pa.int32(), metadata={"delta.invariants": '{"expression":{"expression":"x > 3"}}'}), ("y", pa.string())])
case(
    "column-invariants",
    "A column invariant (`delta.invariants` field metadata, `x > 3`); readers return the rows as stored.",
    rules=("DELTA-WRITER-008", "DELTA-WRITER-009", "DELTA-WRITER-010", "DELTA-SCHEMA-009"),
    steps=[Create(schema=INV), Append(rows=rows(INV, (4, "a"), (10, None)))],
    expected=[Expected(rows=rows(INV, (4, "a"), (10, None)), metadata={"features": ["invariants"]})],
)

P_ROW_TRACKING = "delta.enableRowTracking"
case(
    "row-tracking",
    "Row tracking enabled, then UPDATE: materialized row-id / row-commit-version columns stay hidden from reads.",
    rules=("DELTA-ROWTRACK-001", "DELTA-ROWTRACK-002", "DELTA-ROWTRACK-003", "DELTA-ROWTRACK-006", "DELTA-ROWTRACK-019"),
    features=("rowTracking", "domainMetadata"),
    steps=[
        Create(schema=IDV, properties={P_ROW_TRACKING: "true"}, features=("rowTracking", "domainMetadata")),
        Append(rows=idv(1, 2, 3)),
        Update(set={"value": "'updated'"}, where="id = 2"),
        Append(rows=idv(4)),
    ],
    expected=[
        Expected(version=2, rows=rows(IDV, (1, "v1"), (2, "updated"), (3, "v3"))),
        Expected(
            rows=rows(IDV, (1, "v1"), (2, "updated"), (3, "v3"), (4, "v4")),
            metadata={"version": 3, "configuration": {P_ROW_TRACKING: "true"}, "features": ["rowTracking", "domainMetadata"]},
        ),
    ],
    notes="Row ids themselves are not read here (no reader API exposes them uniformly); the case checks they never leak into the schema.",
)

_ROW_ID_COL, _ROW_VERSION_COL = "_row-id-col-lakeconf", "_row-commit-version-col-lakeconf"
IDV_RT = pa.schema([*IDV, (_ROW_ID_COL, pa.int64()), (_ROW_VERSION_COL, pa.int64())])
case(
    "row-tracking-materialized-columns",
    "A row-tracking table whose data file holds the materialized row-id and row-commit-version columns: reads hide them.",
    rules=("DELTA-ROWTRACK-001", "DELTA-ROWTRACK-005", "DELTA-ROWTRACK-016", "DELTA-ROWTRACK-019"),
    violates=("DELTA-ROWTRACK-005", "DELTA-ROWTRACK-014"),
    features=("rowTracking", "domainMetadata"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=IDV),
        _raw(
            raw.chain(
                raw.set_protocol(0, {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["rowTracking", "domainMetadata"]}),
                raw.set_configuration(
                    0,
                    {
                        P_ROW_TRACKING: "true",
                        "delta.rowTracking.materializedRowIdColumnName": _ROW_ID_COL,
                        "delta.rowTracking.materializedRowCommitVersionColumnName": _ROW_VERSION_COL,
                    },
                ),
            ),
            "v0: protocol (1,7) rowTracking + domainMetadata, materialized column names configured",
        ),
        _raw(
            raw.append_data_file(
                rows(IDV_RT, (1, "v1", 100, 1), (2, "v2", None, None)),
                "part-row-tracking.parquet",
                add_fields={"baseRowId": 0, "defaultRowCommitVersion": 1},
            ),
            "commit v1: a file with materialized row-tracking columns, baseRowId 0",
        ),
        _raw(raw.add_domain("delta.rowTracking", '{"rowIdHighWaterMark":1}'), "commit v2: the row-id high-water mark"),
    ],
    expected=[Expected(rows=idv(1, 2), metadata={"version": 2, "features": ["rowTracking", "domainMetadata"]})],
    notes="The materialized columns are not in schemaString; a reader that returns every file column shows them.",
)

# --------------------------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------------------------

case(
    "checkpoint-classic",
    "A classic checkpoint at v3 then one more commit; reading v1 must not start from the v3 checkpoint.",
    rules=("DELTA-CKPT-002", "DELTA-CKPT-003", "DELTA-CKPT-007", "DELTA-CKPT-011", "DELTA-CKPT-028"),
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        Append(rows=rows(BASIC, *B3)),
        Checkpoint(),
        Append(rows=rows(BASIC, *B4)),
    ],
    expected=[
        Expected(version=1, rows=rows(BASIC, *B1)),
        Expected(version=3, rows=rows(BASIC, *B1, *B2, *B3)),
        Expected(rows=rows(BASIC, *B1, *B2, *B3, *B4), metadata={"version": 4}),
    ],
)

case(
    "checkpoint-no-replay",
    "Commits 0-2 deleted after a checkpoint at v3: the table reads from the checkpoint (DAT no_replay).",
    rules=("DELTA-CKPT-002", "DELTA-CKPT-007", "DELTA-CKPT-042", "DELTA-LOG-001"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC, partition_by=("letter",)),
        Append(rows=rows(BASIC, *B1)),
        Delete(where="letter = 'b'"),
        Append(rows=rows(BASIC, *B2)),
        Checkpoint(),
        Append(rows=rows(BASIC, *B3)),
        _raw(raw.delete_commits([0, 1, 2]), "delete commits 0, 1, 2 (metadata cleanup)"),
    ],
    expected=[
        Expected(version=3, rows=rows(BASIC, B1[0], B1[2], *B2)),
        Expected(rows=rows(BASIC, B1[0], B1[2], *B2, *B3), metadata={"version": 4, "partition_columns": ["letter"]}),
        Expected(version=1, error="invalid_table"),
    ],
    notes=(
        "Version 1 can no longer be reconstructed (no commit 1 and no checkpoint at or before it). The spec "
        "has no error taxonomy; the kit classes 'requested version not reconstructable' as invalid_table."
    ),
)

case(
    "checkpoint-stats-struct",
    "writeStatsAsStruct=true, writeStatsAsJson=false: checkpoint with stats_parsed and partitionValues_parsed only.",
    rules=("DELTA-CKPT-022", "DELTA-CKPT-023", "DELTA-CKPT-024", "DELTA-CKPT-010"),
    steps=[
        Create(schema=BASIC, partition_by=("letter",), properties={P_STATS_STRUCT: "true", P_STATS_JSON: "false"}),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        Checkpoint(stats=("struct",)),
        Append(rows=rows(BASIC, *B3)),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1, *B2)),
        Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"version": 3, "configuration": {P_STATS_STRUCT: "true", P_STATS_JSON: "false"}}),
    ],
)

case(
    "no-stats",
    "Data files without any statistics (stats absent from every add): reads are unaffected.",
    rules=("DELTA-STATS-001",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        _raw(raw.strip_stats(), "remove `stats` from every file action"),
    ],
    expected=[Expected(rows=rows(BASIC, *B1, *B2))],
)

case(
    "checkpoint-multipart",
    "A multi-part (3 parts) V1 checkpoint at v3.",
    rules=("DELTA-CKPT-012", "DELTA-CKPT-014", "DELTA-CKPT-015", "DELTA-CKPT-007"),
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1), files=3),
        Append(rows=rows(BASIC, *B2), files=2),
        Delete(where="number = 2"),
        Checkpoint(kind="multipart", parts=3),
        Append(rows=rows(BASIC, *B3)),
    ],
    expected=[
        Expected(version=3, rows=rows(BASIC, B1[0], B1[2], *B2)),
        Expected(rows=rows(BASIC, B1[0], B1[2], *B2, *B3), metadata={"version": 4}),
    ],
)

_MP_INCOMPLETE_STEPS = [
    Create(schema=BASIC),
    Append(rows=rows(BASIC, *B1), files=2),
    Checkpoint(),
    _raw(raw.stash_last_checkpoint(), "keep the _last_checkpoint of the v1 checkpoint"),
    Append(rows=rows(BASIC, *B2), files=2),
    Append(rows=rows(BASIC, *B3)),
    Checkpoint(kind="multipart", parts=3),
    _raw(raw.delete_checkpoint_part(3, 2), "delete part 2 of the v3 checkpoint"),
]
case(
    "checkpoint-multipart-incomplete",
    "A writer died while writing the v3 multi-part checkpoint (part 2 of 3 missing, _last_checkpoint still at v1).",
    rules=("DELTA-CKPT-014", "DELTA-CKPT-002", "DELTA-CKPT-020", "DELTA-CKPT-028"),
    writers=RAW_ONLY,
    steps=[*_MP_INCOMPLETE_STEPS, _raw(raw.restore_last_checkpoint(), "put the v1 _last_checkpoint back")],
    expected=[Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"version": 3}), Expected(version=2, rows=rows(BASIC, *B1, *B2))],
    notes="Positive case: readers must ignore a multi-part checkpoint with missing parts and use the v1 checkpoint + commits 2, 3.",
)

case(
    "checkpoint-multipart-incomplete-hinted",
    "_last_checkpoint points at a multi-part checkpoint (v3) whose part 2 of 3 is missing.",
    rules=("DELTA-CKPT-014", "DELTA-CKPT-028"),
    violates=("DELTA-CKPT-027",),
    writers=RAW_ONLY,
    steps=[*_MP_INCOMPLETE_STEPS],
    expected=[Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"version": 3})],
    notes=(
        "The hint names an incomplete checkpoint. The spec says readers must ignore such a checkpoint and "
        "calls _last_checkpoint a hint, so the answer is the table at v3 (from the v1 checkpoint + commits). "
        "delta-kernel-rs based readers fail here ('Had a _last_checkpoint hint but didn't find any checkpoints')."
    ),
)

case(
    "checkpoint-v2-sidecars",
    "A UUID-named V2 checkpoint whose file actions live in two sidecar files.",
    rules=("DELTA-CKPT-013", "DELTA-CKPT-031", "DELTA-CKPT-032", "DELTA-CKPT-034", "DELTA-CKPT-035", "DELTA-CKPT-040"),
    features=("v2Checkpoint",),
    steps=[
        Create(schema=BASIC, features=("v2Checkpoint",)),
        Append(rows=rows(BASIC, *B1), files=2),
        Append(rows=rows(BASIC, *B2), files=2),
        Checkpoint(kind="v2", sidecars=2),
        Append(rows=rows(BASIC, *B3)),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1, *B2)),
        Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"version": 3, "features": ["v2Checkpoint"]}),
    ],
)

case(
    "checkpoint-v2-inline",
    "A UUID-named V2 checkpoint without sidecars (file actions inside the checkpoint).",
    rules=("DELTA-CKPT-013", "DELTA-CKPT-031", "DELTA-CKPT-033", "DELTA-CKPT-040"),
    features=("v2Checkpoint",),
    steps=[
        Create(schema=BASIC, features=("v2Checkpoint",)),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        Checkpoint(kind="v2", sidecars=0),
        Append(rows=rows(BASIC, *B3)),
    ],
    expected=[Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"version": 3, "features": ["v2Checkpoint"]})],
)

_CKPT_BASE = [
    Create(schema=BASIC),
    Append(rows=rows(BASIC, *B1)),
    Append(rows=rows(BASIC, *B2)),
    Checkpoint(),
    Append(rows=rows(BASIC, *B3)),
]
_CKPT_ROWS = rows(BASIC, *B1, *B2, *B3)

case(
    "last-checkpoint-absent",
    "A checkpoint exists but _last_checkpoint does not: readers find the checkpoint by listing.",
    rules=("DELTA-CKPT-028", "DELTA-CKPT-004"),
    writers=RAW_ONLY,
    steps=[*_CKPT_BASE, _raw(raw.delete_last_checkpoint(), "delete _delta_log/_last_checkpoint")],
    expected=[Expected(version=2, rows=rows(BASIC, *B1, *B2)), Expected(rows=_CKPT_ROWS, metadata={"version": 3})],
)

case(
    "last-checkpoint-corrupt",
    "_last_checkpoint is not valid JSON: it is only a hint, readers ignore it and list the log.",
    rules=("DELTA-CKPT-028",),
    violates=("DELTA-CKPT-027",),
    writers=RAW_ONLY,
    steps=[*_CKPT_BASE, _raw(raw.write_last_checkpoint(b'{"version": 2, "size": '), "truncate _last_checkpoint mid-JSON")],
    expected=[Expected(rows=_CKPT_ROWS, metadata={"version": 3})],
    notes="The spec calls the file a hint but does not say what a reader does with a corrupt one; the kit expects it ignored.",
)

case(
    "last-checkpoint-dangling",
    "_last_checkpoint names a checkpoint (v9) that does not exist: readers fall back to listing.",
    rules=("DELTA-CKPT-028", "DELTA-CKPT-004"),
    violates=("DELTA-CKPT-027",),
    writers=RAW_ONLY,
    steps=[*_CKPT_BASE, _raw(raw.write_last_checkpoint(b'{"version":9,"size":4}'), "point _last_checkpoint at a missing v9 checkpoint")],
    expected=[Expected(rows=_CKPT_ROWS, error_allowed="invalid_table", metadata={"version": 3})],
    notes=(
        "The spec calls _last_checkpoint a hint readers can use and says nothing of a hint naming a missing "
        "checkpoint. No conformant writer leaves one (the checkpoint is written before the hint), so the table "
        "is damaged: listing the log recovers v3 (the reference, Spark), refusing it is conformant too "
        "(delta-kernel-rs readers). A hint newer than the log must never invent versions."
    ),
)

case(
    "last-checkpoint-stale",
    "_last_checkpoint points at the v1 checkpoint while a v3 checkpoint exists: the answer is the same.",
    rules=("DELTA-CKPT-028", "DELTA-CKPT-002", "DELTA-CKPT-020"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Checkpoint(),
        _raw(raw.stash_last_checkpoint(), "keep the v1 _last_checkpoint"),
        Append(rows=rows(BASIC, *B2)),
        Append(rows=rows(BASIC, *B3)),
        Checkpoint(),
        Append(rows=rows(BASIC, *B4)),
        _raw(raw.restore_last_checkpoint(), "put the v1 _last_checkpoint back"),
    ],
    expected=[Expected(rows=rows(BASIC, *B1, *B2, *B3, *B4), metadata={"version": 4})],
)

case(
    "crc-files",
    "Version checksum (.crc) files next to every commit are tolerated and change nothing.",
    rules=("DELTA-CRC-001", "DELTA-CRC-010"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        _raw(raw.write_crc_files(), "write a .crc for each commit lacking one"),
    ],
    expected=[Expected(version=1, rows=rows(BASIC, *B1)), Expected(rows=rows(BASIC, *B1, *B2), metadata={"version": 2})],
)

# --------------------------------------------------------------------------------------------
# Forward compatibility
# --------------------------------------------------------------------------------------------

case(
    "unknown-fields",
    "Every action (and metaData.format) carries fields no spec version defines: readers ignore them.",
    rules=("DELTA-ACTION-027",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        _raw(raw.inject_unknown_fields(), "add futureField/futureScalar to every action"),
    ],
    expected=[Expected(rows=rows(BASIC, *B1, *B2), metadata={"version": 2})],
)

case(
    "unknown-actions",
    "A commit of unknown action kinds (and commitInfo) only: readers skip them.",
    rules=("DELTA-ACTION-027", "DELTA-ACTION-028"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.append_unknown_actions(), "commit v2: futureAction, anotherFutureAction"),
        Append(rows=rows(BASIC, *B2)),
    ],
    expected=[Expected(version=2, rows=rows(BASIC, *B1)), Expected(rows=rows(BASIC, *B1, *B2), metadata={"version": 3})],
)

# --------------------------------------------------------------------------------------------
# Timestamps, txn, domains
# --------------------------------------------------------------------------------------------

_ICT_START = 1704067200000  # 2024-01-01T00:00:00Z
_DAY = 86_400_000
case(
    "time-travel-timestamp",
    "In-commit timestamps pinned to 2024-01-01 + v days; reads as of timestamps between and at commits.",
    rules=("DELTA-ICT-001", "DELTA-ICT-002", "DELTA-ICT-003", "DELTA-ICT-006", "DELTA-ICT-007"),
    features=("inCommitTimestamp",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC, properties={P_ICT: "true"}, features=("inCommitTimestamp",)),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        Append(rows=rows(BASIC, *B3)),
        _raw(raw.pin_in_commit_timestamps(_ICT_START, _DAY), "set inCommitTimestamp(v) = 2024-01-01 + v days"),
    ],
    expected=[
        Expected(timestamp="2024-01-01T12:00:00Z", rows=empty(BASIC), metadata={"version": 0}),
        Expected(timestamp="2024-01-02T12:00:00Z", rows=rows(BASIC, *B1), metadata={"version": 1}),
        Expected(timestamp="2024-01-03T00:00:00Z", rows=rows(BASIC, *B1, *B2), metadata={"version": 2}),
        Expected(timestamp="2024-01-03T23:59:59.999Z", rows=rows(BASIC, *B1, *B2), metadata={"version": 2}),
        Expected(rows=rows(BASIC, *B1, *B2, *B3), metadata={"version": 3, "configuration": {P_ICT: "true"}}),
    ],
    notes=(
        "As of X means the newest version whose commit timestamp is <= X (an exact match included). "
        "Timestamps before the first commit or after the last are left out: the spec does not say "
        "whether they fail or clamp (Spark fails, others clamp)."
    ),
)

case(
    "in-commit-timestamps-enabled-later",
    "In-commit timestamps enabled at v2 on an existing table: enablement version recorded, rows unchanged.",
    rules=("DELTA-ICT-001", "DELTA-ICT-004", "DELTA-ICT-005"),
    features=("inCommitTimestamp",),
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        SetProperties(properties={P_ICT: "true"}),
        Append(rows=rows(BASIC, *B2)),
    ],
    expected=[
        Expected(version=1, rows=rows(BASIC, *B1)),
        Expected(
            rows=rows(BASIC, *B1, *B2),
            metadata={"version": 3, "configuration": {P_ICT: "true", P_ICT_VERSION: "2"}, "features": ["inCommitTimestamp"]},
        ),
    ],
)

case(
    "txn-identifiers",
    "txn actions: the newest version per appId wins, even when it goes down.",
    rules=("DELTA-REPLAY-003", "DELTA-ACTION-023", "DELTA-ACTION-024"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.add_txn("app-1", 5), "commit v2: txn(app-1, 5)"),
        _raw(raw.add_txn("app-1", 3), "commit v3: txn(app-1, 3)"),
        _raw(raw.add_txn("app-2", 1), "commit v4: txn(app-2, 1)"),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1), metadata={"txns": {"app-1": 5}}),
        Expected(rows=rows(BASIC, *B1), metadata={"version": 4, "txns": {"app-1": 3, "app-2": 1}}),
    ],
)

_DOM = "com.example.lakeconf"
case(
    "domain-metadata",
    "A user domain set, changed and removed; readers reconcile it (or ignore it) without affecting rows.",
    rules=("DELTA-DOMAIN-001", "DELTA-DOMAIN-002", "DELTA-DOMAIN-008", "DELTA-DOMAIN-009", "DELTA-REPLAY-004"),
    features=("domainMetadata",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC, features=("domainMetadata",)),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.add_domain(_DOM, '{"k":"v1"}'), "commit v2: set the domain"),
        _raw(raw.add_domain(_DOM, '{"k":"v2"}'), "commit v3: change it"),
        _raw(raw.add_domain(_DOM, '{"k":"v2"}', removed=True), "commit v4: tombstone it"),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1), metadata={"domains": {_DOM: '{"k":"v1"}'}}),
        Expected(version=3, rows=rows(BASIC, *B1), metadata={"domains": {_DOM: '{"k":"v2"}'}}),
        Expected(rows=rows(BASIC, *B1), metadata={"version": 4, "domains": {}, "features": ["domainMetadata"]}),
    ],
)

# --------------------------------------------------------------------------------------------
# More log layouts, protocols and data-file shapes
# --------------------------------------------------------------------------------------------

case(
    "log-compaction-file",
    "A log compaction file 1..4 next to the commits it covers: the snapshot is the same with or without it.",
    rules=("DELTA-LOG-012", "DELTA-LOG-013", "DELTA-LOG-014"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        Delete(where="number = 4"),
        Append(rows=rows(BASIC, *B3)),
        _raw(raw.write_log_compaction(1, 4), "write 00..01.00..04.compacted.json"),
        Append(rows=rows(BASIC, *B4)),
    ],
    expected=[
        Expected(version=2, rows=rows(BASIC, *B1, *B2)),
        Expected(version=4, rows=rows(BASIC, *B1, B2[1], *B3)),
        Expected(rows=rows(BASIC, *B1, B2[1], *B3, *B4), metadata={"version": 5}),
    ],
    notes="Reading v2 must not use the 1..4 compaction (it covers versions past v2).",
)

case(
    "many-versions",
    "Twelve one-row appends: versions past 9 sort and replay like the others.",
    rules=("DELTA-LOG-004", "DELTA-REPLAY-001"),
    steps=[Create(schema=IDV), *[Append(rows=idv(i)) for i in range(12)]],
    expected=[Expected(version=5, rows=idv(*range(5))), Expected(version=10, rows=idv(*range(10))), Expected(rows=idv(*range(12)), metadata={"version": 12})],
)

case(
    "unknown-writer-feature",
    "Protocol (1,7) listing a writer feature nobody implements: reads still succeed (only writes are refused).",
    rules=("DELTA-FEATURE-005", "DELTA-FEATURE-006", "DELTA-FEATURE-010"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.set_protocol(0, {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["lakeconfFutureWriterFeature"]}), "v0 protocol (1,7) with an unknown writer feature"),
    ],
    expected=[Expected(rows=rows(BASIC, *B1), metadata={"protocol": [1, 7]})],
)

case(
    "protocol-3-7-no-features",
    "Protocol (3,7) with empty readerFeatures and writerFeatures: a plain, readable table.",
    rules=("DELTA-FEATURE-002", "DELTA-FEATURE-003"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.set_protocol(0, {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": [], "writerFeatures": []}), "v0 protocol (3,7), no features"),
    ],
    expected=[Expected(rows=rows(BASIC, *B1), metadata={"protocol": [3, 7]})],
)

case(
    "checkpoint-with-deletion-vectors",
    "A checkpoint of a table whose live file carries an on-disk DV: the descriptor survives the checkpoint.",
    rules=("DELTA-DV-004", "DELTA-CKPT-007", "DELTA-CKPT-009", "DELTA-ACTION-005"),
    features=("deletionVectors",),
    steps=[DV_CREATE, Append(rows=idv(*range(6))), Delete(where="id IN (1, 4)"), Checkpoint(), Append(rows=idv(10))],
    expected=[Expected(version=2, rows=idv(0, 2, 3, 5)), Expected(rows=idv(0, 2, 3, 5, 10), metadata={"version": 3})],
)

case(
    "deletion-vectors-shared-file",
    "One DELETE touching two data files: both DVs may share one DV file at different offsets.",
    rules=("DELTA-DV-011", "DELTA-DV-014", "DELTA-DV-004", "DELTA-ACTION-005"),
    features=("deletionVectors",),
    steps=[DV_CREATE, Append(rows=idv(*range(8)), files=2), Delete(where="id IN (0, 3, 4, 7)")],
    expected=[Expected(version=1, rows=idv(*range(8))), Expected(rows=idv(1, 2, 5, 6), metadata={"version": 2})],
)

case(
    "deletion-vector-absolute-path",
    "A DV stored with storageType 'p' (absolute URI) instead of 'u'.",
    rules=("DELTA-DV-005", "DELTA-DV-008", "DELTA-ACTION-009"),
    features=("deletionVectors",),
    writers=RAW_ONLY,
    steps=[DV_CREATE, Append(rows=idv(0, 1, 2, 3)), Delete(where="id = 2"), _raw(raw.dv_to_absolute_path(), "commit v3: the same DV addressed by its absolute URI")],
    expected=[Expected(rows=idv(0, 1, 3), metadata={"version": 3})],
)

CMS = pa.schema(
    [
        ("my col", pa.int64()),
        ("a.b", pa.string()),
        ("ünï", pa.int32()),
        ("s", pa.struct([("x y", pa.int32()), ("z", pa.string())])),
    ]
)
CMS_ROWS = [(1, "p", 10, {"x y": 1, "z": "one"}), (2, "q", None, None), (3, "p", 30, {"x y": None, "z": "three"})]
case(
    "column-mapping-special-names",
    "Name mode allows any column name: spaces, dots, unicode, at top level and inside a struct; partitioned by `a.b`.",
    rules=("DELTA-COLMAP-003", "DELTA-COLMAP-006", "DELTA-COLMAP-013", "DELTA-COLMAP-014"),
    features=("columnMapping",),
    steps=[
        Create(schema=CMS, partition_by=("a.b",), properties={P_CM_MODE: "name"}, features=("columnMapping",)),
        Append(rows=rows(CMS, *CMS_ROWS)),
    ],
    expected=[Expected(rows=rows(CMS, *CMS_ROWS), metadata={"partition_columns": ["a.b"]})],
)

case(
    "checkpoint-column-mapping-struct-stats",
    "Name-mode, partitioned table checkpointed with stats_parsed and partitionValues_parsed (physical names).",
    rules=("DELTA-CKPT-022", "DELTA-CKPT-024", "DELTA-COLMAP-008", "DELTA-COLMAP-014"),
    features=("columnMapping",),
    steps=[
        Create(schema=CM, partition_by=("part",), properties={P_CM_MODE: "name", P_STATS_STRUCT: "true"}, features=("columnMapping",)),
        Append(rows=rows(CM, (1, "ann", "p1"), (2, "bo", "p2"))),
        Checkpoint(stats=("json", "struct")),
        Append(rows=rows(CM, (3, "cy", None))),
    ],
    expected=[Expected(rows=rows(CM, (1, "ann", "p1"), (2, "bo", "p2"), (3, "cy", None)), metadata={"version": 2})],
)

case(
    "zero-row-file",
    "A live data file with no rows (numRecords 0).",
    rules=("DELTA-REPLAY-009", "DELTA-STATS-004"),
    writers=RAW_ONLY,
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.append_data_file(empty(BASIC), "part-empty.parquet"), "commit v2: add an empty parquet file")],
    expected=[Expected(rows=rows(BASIC, *B1), metadata={"version": 2})],
)

BASIC_CT = pa.schema([*BASIC, ("_change_type", pa.string())])
case(
    "data-file-change-type-column",
    "A data file of a CDF table carrying a `_change_type` column: plain reads drop it.",
    rules=("DELTA-CDF-007",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC, properties={P_CDF: "true"}, features=("changeDataFeed",)),
        _raw(raw.append_data_file(rows(BASIC_CT, ("a", 1, 1.1, "insert"), ("b", 2, 2.2, "insert")), "part-with-change-type.parquet"), "commit v1: a file with _change_type"),
    ],
    expected=[Expected(rows=rows(BASIC, ("a", 1, 1.1), ("b", 2, 2.2)), metadata={"version": 1})],
)

BASIC_NO_FLOAT = pa.schema([("letter", pa.string()), ("number", pa.int64())])
case(
    "data-file-missing-column",
    "A data file lacking one schema column: readers return null for it.",
    rules=("DELTA-READER-001",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.append_data_file(rows(BASIC_NO_FLOAT, ("z", 26)), "part-no-float.parquet"), "commit v2: a file without a_float"),
    ],
    expected=[Expected(rows=rows(BASIC, *B1, ("z", 26, None)), metadata={"version": 2})],
)

ENC = pa.schema([("id", pa.int32()), ("ts", pa.timestamp("us", tz="UTC")), ("d9", pa.decimal128(9, 2)), ("d18", pa.decimal128(18, 4)), ("d30", pa.decimal128(30, 5))])
ENC_ROWS = [
    (1, ts("2020-02-29T12:00:00.123456"), Decimal("1234567.89"), Decimal("-12345678901234.5678"), Decimal("1234567890123456789012345.12345")),
    (2, None, None, None, None),
]
case(
    "parquet-physical-encodings",
    "A data file with INT96 timestamps and INT32/INT64/FLBA-backed decimals (the alternatives the type mapping allows).",
    rules=("DELTA-READER-002",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=ENC),
        _raw(
            raw.append_data_file(rows(ENC, *ENC_ROWS), "part-int96.parquet", parquet_options={"use_deprecated_int96_timestamps": True, "store_decimal_as_integer": True}),
            "commit v1: INT96 timestamps, integer-backed decimals",
        ),
    ],
    expected=[Expected(rows=rows(ENC, *ENC_ROWS), metadata={"version": 1})],
)

_CODECS = ("none", "snappy", "gzip", "lz4", "zstd")
case(
    "parquet-codecs",
    "One data file per codec readers should support: uncompressed, snappy, gzip, lz4_raw, zstd.",
    rules=("DELTA-PROPS-002", "DELTA-PROPS-005"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=IDV),
        *[
            _raw(raw.append_data_file(idv(i), f"part-{codec}.parquet", parquet_options={"compression": codec}), f"commit v{i + 1}: a {codec} file")
            for i, codec in enumerate(_CODECS)
        ],
    ],
    expected=[Expected(rows=idv(*range(len(_CODECS))), metadata={"version": len(_CODECS)})],
    notes="pyarrow's 'lz4' writes the LZ4_RAW codec; the Hadoop-framed LZ4 is not produced here.",
)

case(
    "parquet-data-page-v2",
    "A data file written with DataPageV2 pages next to a V1 one.",
    rules=("DELTA-PROPS-004", "DELTA-PROPS-005"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=IDV),
        Append(rows=idv(0, 1)),
        _raw(raw.append_data_file(idv(2, 3), "part-v2pages.parquet", parquet_options={"data_page_version": "2.0"}), "commit v2: a DataPageV2 file"),
    ],
    expected=[Expected(rows=idv(0, 1, 2, 3), metadata={"version": 2})],
)

# --------------------------------------------------------------------------------------------
# Negative cases: the reader must refuse
# --------------------------------------------------------------------------------------------

case(
    "neg-version-gap",
    "Commits 0, 1, 3 with no checkpoint at or after 2: version 1 reads, the latest must fail.",
    rules=("DELTA-LOG-001",),
    violates=("DELTA-LOG-001",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        Append(rows=rows(BASIC, *B3)),
        _raw(raw.delete_commits([2]), "delete commit 2"),
    ],
    expected=[
        Expected(version=1, rows=rows(BASIC, *B1)),
        Expected(error="invalid_table"),
        Expected(version=3, error="invalid_table"),
    ],
)

case(
    "neg-no-protocol",
    "Version 0 without a protocol action: no snapshot can be built.",
    rules=("DELTA-REPLAY-002", "DELTA-ACTION-025"),
    violates=("DELTA-REPLAY-002",),
    writers=RAW_ONLY,
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.drop_action_kind(0, raw.PROTOCOL), "drop protocol from v0")],
    expected=[Expected(error="invalid_table")],
)

case(
    "neg-no-metadata",
    "Version 0 without a metaData action: no snapshot can be built.",
    rules=("DELTA-ACTION-001", "DELTA-REPLAY-002"),
    violates=("DELTA-ACTION-001",),
    writers=RAW_ONLY,
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.drop_action_kind(0, raw.METADATA), "drop metaData from v0")],
    expected=[Expected(error="invalid_table")],
)

case(
    "duplicate-add-in-commit",
    "One commit holds the same add action twice: an invalid commit that readers MAY refuse.",
    rules=("DELTA-ACTION-008", "DELTA-ACTION-012", "DELTA-ACTION-005"),
    violates=("DELTA-ACTION-012",),
    writers=RAW_ONLY,
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.duplicate_first_add(1), "repeat the add line of v1")],
    expected=[Expected(rows=rows(BASIC, *B1), error_allowed="invalid_table", metadata={"version": 1})],
    notes=(
        "The writer broke a MUST (at most one add per path per commit), but the reader clause is only "
        "'readers MAY treat such transactions as invalid'. Both answers conform: the rows of B1 once "
        "(files keyed by (path, dvId)), or an invalid_table error. The case declares the lenient answer, "
        "which every reader measured gives; a strict reader's invalid_table here is conformant too."
    ),
)

_OTHER_SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"integer","nullable":true,"metadata":{}}]}'
case(
    "neg-two-metadata-in-commit",
    "One commit holds two different metaData actions (two schemas): no snapshot is well defined.",
    rules=("DELTA-ACTION-003", "DELTA-REPLAY-002"),
    violates=("DELTA-ACTION-003", "DELTA-STATS-003"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.add_second_metadata(0, schema_string=_OTHER_SCHEMA), "v0: a second metaData with another schema"),
    ],
    expected=[Expected(error="invalid_table"), Expected(version=0, error="invalid_table")],
    notes=(
        "Actions inside a commit are unordered, so neither metaData 'wins'; any rows a reader returns are "
        "an arbitrary pick. The spec states the limit (at most one metaData per version) without a reader "
        "clause; the kit expects the refusal."
    ),
)

case(
    "neg-malformed-json",
    "The last line of commit 1 is cut in half (not a JSON object).",
    rules=("DELTA-LOG-005",),
    violates=("DELTA-LOG-005",),
    writers=RAW_ONLY,
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.truncate_line(1, -1), "truncate the last line of v1")],
    expected=[Expected(version=0, rows=empty(BASIC)), Expected(error="invalid_table")],
)

case(
    "neg-unknown-reader-feature",
    "Protocol (3,7) listing a reader feature nobody implements: readers must refuse.",
    rules=("DELTA-FEATURE-004",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(
            raw.set_protocol(
                0,
                {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["lakeconfFutureFeature"], "writerFeatures": ["lakeconfFutureFeature"]},
            ),
            "v0 protocol requires reader feature lakeconfFutureFeature",
        ),
    ],
    expected=[Expected(error="unsupported")],
)

case(
    "neg-reader-version-4",
    "minReaderVersion 4 (beyond the spec): readers must refuse and say why.",
    rules=("DELTA-ACTION-026",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.set_protocol(0, {"minReaderVersion": 4, "minWriterVersion": 2}), "v0 protocol (4,2)"),
    ],
    expected=[Expected(error="unsupported")],
)

case(
    "neg-reader3-writer5",
    "Protocol (3,5): reader version 3 requires writer version 7.",
    rules=("DELTA-FEATURE-003",),
    violates=("DELTA-FEATURE-003",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        _raw(raw.set_protocol(0, {"minReaderVersion": 3, "minWriterVersion": 5, "readerFeatures": []}), "v0 protocol (3,5)"),
    ],
    expected=[Expected(error="invalid_table")],
    notes="A reader that checks only readerFeatures (empty here) would read B1; the spec calls the protocol illegal.",
)

case(
    "neg-path-escapes-root",
    "An add whose relative path is `../outside-the-table.parquet`.",
    rules=("DELTA-LOG-002", "DELTA-ACTION-017"),
    violates=("DELTA-LOG-002",),
    writers=RAW_ONLY,
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.add_escaping_path(), "commit v2: add ../outside-the-table.parquet")],
    expected=[Expected(version=1, rows=rows(BASIC, *B1)), Expected(error="invalid_table")],
    notes=(
        "The spec allows absolute paths anywhere (shallow clones use them) but data files of the table "
        "live under its root; a relative path that climbs out is refused by the kit, never followed."
    ),
)

case(
    "neg-missing-data-file",
    "A live add whose data file is gone.",
    rules=("DELTA-REPLAY-009",),
    violates=("DELTA-ACTION-017",),
    writers=RAW_ONLY,
    steps=[Create(schema=BASIC), Append(rows=rows(BASIC, *B1)), _raw(raw.delete_first_data_file(), "delete the data file of v1")],
    expected=[Expected(version=0, rows=empty(BASIC)), Expected(error="invalid_table")],
    notes="No catalog rule says it in so many words; a reader must not silently return fewer rows.",
)

case(
    "neg-dv-corrupt",
    "The on-disk DV's bitmap no longer matches its CRC-32.",
    rules=("DELTA-DV-014", "DELTA-DV-013"),
    violates=("DELTA-DV-014",),
    features=("deletionVectors",),
    writers=RAW_ONLY,
    steps=[DV_CREATE, Append(rows=idv(0, 1, 2, 3)), Delete(where="id = 1"), _raw(raw.corrupt_first_dv_file(), "flip a byte in the DV file")],
    expected=[Expected(version=1, rows=idv(0, 1, 2, 3)), Expected(error="invalid_table")],
)

case(
    "neg-no-version-zero",
    "Commit 0 deleted and no checkpoint: replay has no start (neither version 0 nor a checkpoint).",
    rules=("DELTA-LOG-001", "DELTA-REPLAY-001", "DELTA-ACTION-001"),
    violates=("DELTA-LOG-001", "DELTA-REPLAY-002"),
    writers=RAW_ONLY,
    steps=[
        Create(schema=BASIC),
        Append(rows=rows(BASIC, *B1)),
        Append(rows=rows(BASIC, *B2)),
        _raw(raw.delete_commits([0]), "delete commit 0"),
    ],
    expected=[Expected(error="invalid_table"), Expected(version=1, error="invalid_table")],
)

case(
    "neg-dv-file-missing",
    "A live file's on-disk deletion vector is gone: the deleted rows cannot be known.",
    rules=("DELTA-DV-004", "DELTA-DV-006"),
    violates=("DELTA-DV-006",),
    features=("deletionVectors",),
    writers=RAW_ONLY,
    steps=[DV_CREATE, Append(rows=idv(0, 1, 2, 3)), Delete(where="id = 1"), _raw(raw.delete_dv_files(), "delete the DV file")],
    expected=[Expected(version=1, rows=idv(0, 1, 2, 3)), Expected(error="invalid_table")],
    notes="Returning all rows (ignoring the DV) would resurrect deleted data; the only correct answer is an error.",
)

case(
    "neg-dv-unknown-storage-type",
    "A deletion vector with storageType 'x' (only u, i, p exist).",
    rules=("DELTA-DV-005",),
    violates=("DELTA-DV-005",),
    features=("deletionVectors",),
    writers=RAW_ONLY,
    steps=[DV_CREATE, Append(rows=idv(0, 1, 2, 3)), Delete(where="id = 1"), _raw(raw.set_dv_storage_type(2, "x"), "v2: storageType x")],
    expected=[Expected(version=1, rows=idv(0, 1, 2, 3)), Expected(error="invalid_table")],
)

case(
    "neg-column-mapping-unknown-mode",
    "delta.columnMapping.mode=bogus on a column-mapping table.",
    rules=("DELTA-COLMAP-001",),
    violates=("DELTA-COLMAP-001", "DELTA-STATS-003"),
    features=("columnMapping",),
    writers=RAW_ONLY,
    steps=[
        Create(schema=CM, properties={P_CM_MODE: "name"}, features=("columnMapping",)),
        Append(rows=rows(CM, (1, "ann", "p1"))),
        _raw(raw.set_configuration(0, {P_CM_MODE: "bogus"}), "v0 metaData: mode=bogus"),
    ],
    expected=[Expected(error="invalid_table")],
)


def cases() -> list[Case]:
    """Every Delta case, in corpus order."""
    return list(_CASES)


def declared_latest_version(case_: Case) -> int:
    """The version the case's steps end at, per the step model (Create = v0, Checkpoint = none)."""
    version = -1
    for step in case_.steps:
        if isinstance(step, Create):
            version = 0
        elif isinstance(step, Checkpoint):
            continue
        elif isinstance(step, Raw):
            version += getattr(step.fn, "new_commits", 0)
        else:
            version += 1
    return version

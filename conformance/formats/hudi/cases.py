"""The Hudi case corpus: one feature or edge of the spec (tech specs 0.x and 1.x, the timeline, storage
layout and schema evolution pages) per case.

Every expectation is written by hand from the spec and Hudi's documented semantics; rows are never
computed by a reader. Rows are the data columns only, in the table's order: the five ``_hoodie_*`` meta
columns hold instant times and file names a writer picks, so engines return them dropped. Versions count
completed data instants (``facts.py``): every ``Append`` (insert), ``Upsert``, ``Delete``, ``Update``,
``Overwrite`` and ``Optimize`` (a compaction ``commit`` or a clustering ``replacecommit``) makes the next
version; so does a schema change (its ``ALTER_SCHEMA`` commit, a ``commit`` or ``deltacommit`` without files,
as ``reference_impl.hudi.versions`` counts it); creating the table and a ``FailedWrite`` make none. What the
steps mean for Hudi is in ``steps.py``.

Tables are copy-on-write unless a case says merge-on-read, table version 9 unless it names 6 or 8, keyed by
``id``, ordered by ``ts`` with the merge mode named (the default mode depends on the release and the table
version, so cases say which they test), partitioned by ``part`` in Hive style unless a case is about
partition paths. Arrow spelling of Hudi's Avro types: ``string``, ``int32`` int, ``int64`` long, ``float32``
float, ``float64`` double, ``bool_`` boolean, ``binary`` bytes, ``decimal128(p, s)`` decimal, ``date32``
date, ``timestamp("us", tz="UTC")`` timestamp-micros, ``timestamp("us")`` local-timestamp-micros.
"""

from __future__ import annotations

from typing import Iterable

import pyarrow as pa

from conformance.cases.values import D, empty, ntz, rows
from conformance.cases.values import d as day
from conformance.cases.values import ts as utc
from conformance.formats.hudi import facts as F
from conformance.formats.hudi import raw
from conformance.formats.hudi.steps import AddColumnAt, FailedWrite, Upsert
from conformance.model import (
    AddColumn,
    Append,
    Case,
    ChangeColumnType,
    Create,
    Delete,
    DropColumn,
    Expected,
    MoveColumn,
    Optimize,
    Overwrite,
    Raw,
    RenameColumn,
    Update,
)

FORMAT = "hudi"
RAW_ONLY = ("reference",)  # cases with raw steps
COW, MOR = "COPY_ON_WRITE", "MERGE_ON_READ"
EVENT, COMMIT = "EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"

_CASES: list[Case] = []


def read_features(steps: tuple, expected: tuple) -> tuple[str, ...]:
    """The reader features a case needs, from its table configs, steps and refs."""
    out: list[str] = []
    mor = False
    for s in steps:
        if isinstance(s, Create):
            p = {k: str(v) for k, v in s.properties.items()}
            mor = p.get("hoodie.table.type") == MOR
            if mor:
                out.append(F.MERGE_ON_READ)
            version = p.get("hoodie.table.version", "9")
            if version.isdigit() and int(version) in F.TABLE_VERSION_FEATURES:
                out.append(F.TABLE_VERSION_FEATURES[int(version)])
            if p.get("hoodie.record.merge.mode") == EVENT and mor:
                out.append(F.EVENT_TIME)
            if mor and p.get("hoodie.logfile.data.block.format") == "parquet":
                out.append(F.LOG_PARQUET)
        elif isinstance(s, (Delete,)) and mor:
            out.append(F.DELETE_BLOCKS)
        elif isinstance(s, (AddColumn, ChangeColumnType)):
            out.append(F.SCHEMA_EVOLUTION)
        elif isinstance(s, (RenameColumn, DropColumn, MoveColumn, AddColumnAt)):
            out.extend((F.SCHEMA_EVOLUTION, F.SCHEMA_ON_READ))
    for e in expected:
        if e.ref:
            out.append(F.READ_OPTIMIZED_QUERY if F.parse_ref(e.ref)[0] == F.READ_OPTIMIZED else F.INCREMENTAL_QUERY)
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


def table(schema: pa.Schema, *, kind: str = COW, version: int = 9, mode: str | None = EVENT, key: str = "id",
          ordering: str | None = "ts", partition: tuple[str, ...] = ("part",), hive: bool = True,
          **configs: str) -> Create:
    """A Create step: a Hudi table of ``kind`` and table ``version`` (keyword configs spell ``.`` as ``_``)."""
    props = {"hoodie.table.type": kind, "hoodie.table.version": str(version), "hoodie.table.recordkey.fields": key,
             "hoodie.datasource.write.hive_style_partitioning": "true" if hive else "false"}
    if ordering:
        props["hoodie.table.ordering.fields"] = ordering
    if mode:
        props["hoodie.record.merge.mode"] = mode
    props.update({k.replace("_", "."): v for k, v in configs.items()})
    return Create(schema=schema, partition_by=partition, properties=props)


def _raw(fn, description: str) -> Raw:
    return Raw(fn=fn, description=description)


# --------------------------------------------------------------------------------------------
# Shared schemas and data
# --------------------------------------------------------------------------------------------

BASE = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string())])
R1 = [("1", 10, "one", "a"), ("2", 20, "two", "a"), ("3", 30, "three", "b")]
R2 = [("4", 40, "four", "b"), ("5", 50, "five", "a")]
# An upsert: key 2 changes (a greater ordering value), key 6 is new.
UP = [("2", 21, "two v2", "a"), ("6", 60, "six", "b")]
R1_UP = [("1", 10, "one", "a"), ("2", 21, "two v2", "a"), ("3", 30, "three", "b"), ("6", 60, "six", "b")]


def base(*tuples) -> pa.Table:
    return rows(BASE, *tuples)


# --------------------------------------------------------------------------------------------
# Table version x table type x operation
# --------------------------------------------------------------------------------------------

_LAYOUT_RULES = {6: ("HUDI-TIMELINE-009", "HUDI-FILE-012", "HUDI-TIMELINE-018"),
                 8: ("HUDI-TIMELINE-011", "HUDI-FILE-011", "HUDI-TIMELINE-018"),
                 9: ("HUDI-TIMELINE-011", "HUDI-FILE-011", "HUDI-LAYOUT-009")}
_KIND_RULES = {COW: ("HUDI-TABLE-001",), MOR: ("HUDI-TABLE-002", "HUDI-LOG-008")}
_ACTION = {COW: "commit", MOR: "deltacommit"}

for _version in (6, 8, 9):
    for _kind in (COW, MOR):
        _t = "cow" if _kind == COW else "mor"
        _facts = {"table_type": _kind, "table_version": _version, "record_key_fields": ["id"],
                  "partition_fields": ["part"], "ordering_fields": ["ts"]}
        case(
            f"v{_version}-{_t}-insert",
            f"Two inserts into a {_kind} table of table version {_version}; each is a version.",
            rules=("HUDI-LAYOUT-004", "HUDI-TIMELINE-019", "HUDI-FILE-004", "HUDI-TABLE-003", "HUDI-META-001",
                   *_LAYOUT_RULES[_version], *_KIND_RULES[_kind]),
            steps=[table(BASE, kind=_kind, version=_version), Append(rows=base(*R1)), Append(rows=base(*R2))],
            expected=[Expected(version=1, rows=base(*R1), metadata={**_facts, "action": _ACTION[_kind]}),
                      Expected(rows=base(*R1, *R2), metadata={**_facts, "partitions": ["part=a", "part=b"]})],
        )
        case(
            f"v{_version}-{_t}-upsert",
            f"An upsert into a {_kind} table of table version {_version}: one key updated, one inserted.",
            rules=("HUDI-TABLE-003", "HUDI-FILE-002", "HUDI-FILE-003", "HUDI-FILE-013", "HUDI-META-002",
                   *_LAYOUT_RULES[_version], *_KIND_RULES[_kind]),
            steps=[table(BASE, kind=_kind, version=_version), Append(rows=base(*R1)), Upsert(rows=base(*UP))],
            expected=[Expected(version=1, rows=base(*R1)),
                      Expected(version=2, rows=base(*R1_UP), metadata={**_facts, "action": _ACTION[_kind]})],
        )
        case(
            f"v{_version}-{_t}-delete",
            f"A delete by key from a {_kind} table of table version {_version}.",
            rules=("HUDI-TABLE-003", "HUDI-LOG-010", *_LAYOUT_RULES[_version], *_KIND_RULES[_kind]),
            steps=[table(BASE, kind=_kind, version=_version), Append(rows=base(*R1)), Delete(where="id = '2'")],
            expected=[Expected(version=1, rows=base(*R1)),
                      Expected(version=2, rows=base(R1[0], R1[2]), metadata={**_facts, "action": _ACTION[_kind]})],
        )

for _kind in (COW, MOR):
    _t = "cow" if _kind == COW else "mor"
    case(
        f"v9-{_t}-update-where",
        f"An UPDATE ... SET ... WHERE on a {_kind} table: the matching records are upserted with the new value.",
        rules=("HUDI-TABLE-003", "HUDI-FILE-002", *_KIND_RULES[_kind]),
        steps=[table(BASE, kind=_kind), Append(rows=base(*R1)), Update(set={"name": "'changed'"}, where="part = 'a'")],
        expected=[Expected(rows=base(("1", 10, "changed", "a"), ("2", 20, "changed", "a"), R1[2]))],
    )
    case(
        f"v9-{_t}-delete-then-reinsert",
        f"A {_kind} key deleted and then inserted again: the new record is read, the delete no longer applies.",
        rules=("HUDI-TABLE-003", "HUDI-LOG-010", "HUDI-TABLE-006"),
        steps=[table(BASE, kind=_kind), Append(rows=base(*R1)), Delete(where="id = '1'"),
               Upsert(rows=base(("1", 70, "one again", "a")))],
        expected=[Expected(version=2, rows=base(R1[1], R1[2])),
                  Expected(rows=base(("1", 70, "one again", "a"), R1[1], R1[2]))],
    )

case(
    "v9-mor-many-deltacommits",
    "Four upserts of one key in a row on a merge-on-read table: the log blocks merge in order.",
    rules=("HUDI-FILE-011", "HUDI-TABLE-003", "HUDI-LOG-008", "HUDI-LOG-011"),
    steps=[table(BASE, kind=MOR), Append(rows=base(*R1)),
           *[Upsert(rows=base(("2", 20 + i, f"two v{i}", "a"))) for i in range(1, 5)]],
    expected=[Expected(version=3, rows=base(R1[0], ("2", 22, "two v2", "a"), R1[2])),
              Expected(rows=base(R1[0], ("2", 24, "two v4", "a"), R1[2]))],
)

# --------------------------------------------------------------------------------------------
# Ordering: event time vs commit time
# --------------------------------------------------------------------------------------------

_LATE = [("2", 5, "two late", "a")]  # an upsert whose ordering value is lower than the stored one
for _kind in (COW, MOR):
    _t = "cow" if _kind == COW else "mor"
    case(
        f"event-time-older-loses-{_t}",
        f"EVENT_TIME_ORDERING on {_kind}: an upsert with a lower ordering value than the stored record is dropped.",
        rules=("HUDI-LAYOUT-009", "HUDI-TABLE-003", "HUDI-TABLE-006"),
        steps=[table(BASE, kind=_kind, mode=EVENT), Append(rows=base(*R1)), Upsert(rows=base(*_LATE))],
        expected=[Expected(rows=base(*R1), metadata={"merge_mode": EVENT})],
    )
    case(
        f"commit-time-later-wins-{_t}",
        f"COMMIT_TIME_ORDERING on {_kind}: the later write wins whatever its ordering value.",
        rules=("HUDI-LAYOUT-009", "HUDI-TABLE-003"),
        steps=[table(BASE, kind=_kind, mode=COMMIT), Append(rows=base(*R1)), Upsert(rows=base(*_LATE))],
        expected=[Expected(rows=base(R1[0], _LATE[0], R1[2]), metadata={"merge_mode": COMMIT})],
    )

case(
    "event-time-v6-mor",
    "EVENT_TIME_ORDERING in a table-version-6 merge-on-read table (the 0.x log layout, logs bound by base instant).",
    rules=("HUDI-LAYOUT-009", "HUDI-FILE-012", "HUDI-TABLE-003"),
    steps=[table(BASE, kind=MOR, version=6, mode=EVENT), Append(rows=base(*R1)),
           Upsert(rows=base(*_LATE, ("3", 31, "three v2", "b")))],
    expected=[Expected(rows=base(R1[0], R1[1], ("3", 31, "three v2", "b")))],
)

DELETED = pa.schema([*BASE, ("_hoodie_is_deleted", pa.bool_())])
for _kind in (COW, MOR):
    _t = "cow" if _kind == COW else "mor"
    case(
        f"is-deleted-column-{_t}",
        f"An upsert whose _hoodie_is_deleted is true deletes the key ({_kind}).",
        rules=("HUDI-TABLE-003", "HUDI-META-001"),
        steps=[table(DELETED, kind=_kind), Append(rows=rows(DELETED, *[(*r, False) for r in R1])),
               Upsert(rows=rows(DELETED, ("2", 25, "two", "a", True)))],
        expected=[Expected(rows=rows(DELETED, (*R1[0], False), (*R1[2], False)))],
    )

# --------------------------------------------------------------------------------------------
# Log blocks
# --------------------------------------------------------------------------------------------

case(
    "mor-log-parquet-blocks",
    "Merge-on-read with Parquet data blocks in the log files (hoodie.logfile.data.block.format=parquet).",
    rules=("HUDI-LOG-004", "HUDI-LOG-006", "HUDI-TABLE-003"),
    steps=[table(BASE, kind=MOR, hoodie_logfile_data_block_format="parquet"), Append(rows=base(*R1)),
           Upsert(rows=base(*UP)), Delete(where="id = '3'")],
    expected=[Expected(version=2, rows=base(*R1_UP)),
              Expected(rows=base(R1_UP[0], R1_UP[1], R1_UP[3]))],
)
case(
    "mor-delete-block-event-time",
    "A delete block after an upsert with a greater ordering value: a plain delete wins regardless (its "
    "ordering value is the natural default).",
    rules=("HUDI-LOG-010", "HUDI-LAYOUT-009"),
    steps=[table(BASE, kind=MOR, mode=EVENT), Append(rows=base(*R1)), Upsert(rows=base(("1", 99, "one v2", "a"))),
           Delete(where="id = '1'")],
    expected=[Expected(version=2, rows=base(("1", 99, "one v2", "a"), R1[1], R1[2])),
              Expected(rows=base(R1[1], R1[2]))],
)
case(
    "mor-v8-log-blocks",
    "Table version 8 merge-on-read: log files named by their deltacommit's requested time, bound to the slice by "
    "completion time.",
    rules=("HUDI-FILE-007", "HUDI-FILE-011", "HUDI-LOG-001", "HUDI-LOG-002", "HUDI-LOG-003", "HUDI-LOG-005"),
    steps=[table(BASE, kind=MOR, version=8), Append(rows=base(*R1)), Upsert(rows=base(*UP)),
           Upsert(rows=base(("3", 33, "three v3", "b")))],
    expected=[Expected(rows=base(R1_UP[0], R1_UP[1], ("3", 33, "three v3", "b"), R1_UP[3]))],
)

# --------------------------------------------------------------------------------------------
# Partition paths and key generators
# --------------------------------------------------------------------------------------------

case(
    "partition-hive-style",
    "Hive-style partition paths: part=a, part=b.",
    rules=("HUDI-LAYOUT-015", "HUDI-LAYOUT-008", "HUDI-META-005"),
    steps=[table(BASE, hive=True), Append(rows=base(*R1))],
    expected=[Expected(rows=base(*R1), metadata={"partitions": ["part=a", "part=b"], "partition_fields": ["part"]})],
)
case(
    "partition-plain-style",
    "Partition paths that are bare values (hoodie.datasource.write.hive_style_partitioning=false).",
    rules=("HUDI-LAYOUT-015", "HUDI-LAYOUT-014"),
    steps=[table(BASE, hive=False), Append(rows=base(*R1))],
    expected=[Expected(rows=base(*R1), metadata={"partitions": ["a", "b"]})],
)
_SLASHED = [("1", 10, "one", "x/y"), ("2", 20, "two", "100%"), ("3", 30, "three", "a")]
case(
    "partition-url-encoded",
    "URL-encoded partition values (hoodie.datasource.write.partitionpath.urlencode=true): a slash and a percent "
    "sign escaped as %2F and %25; rows keep the original values.",
    rules=("HUDI-LAYOUT-015", "HUDI-LAYOUT-014"),
    steps=[table(BASE, hive=False, hoodie_datasource_write_partitionpath_urlencode="true"),
           Append(rows=base(*_SLASHED))],
    expected=[Expected(rows=base(*_SLASHED), metadata={"partitions": ["100%25", "a", "x%2Fy"]})],
)
case(
    "partition-null-value",
    "A null partition value goes to the default partition (__HIVE_DEFAULT_PARTITION__); the row keeps its null.",
    rules=("HUDI-LAYOUT-015", "HUDI-LAYOUT-014"),
    steps=[table(BASE, hive=True), Append(rows=base(R1[0], ("7", 70, "seven", None)))],
    expected=[Expected(rows=base(R1[0], ("7", 70, "seven", None)),
                       metadata={"partitions": ["part=__HIVE_DEFAULT_PARTITION__", "part=a"]})],
)
case(
    "keygen-nonpartitioned",
    "A non-partitioned table: files directly under the base path, the empty partition path in commit metadata.",
    rules=("HUDI-LAYOUT-008", "HUDI-COMMIT-005"),
    steps=[table(BASE, partition=()), Append(rows=base(*R1)), Upsert(rows=base(*UP))],
    expected=[Expected(rows=base(*R1_UP), metadata={"partitions": [""], "partition_fields": []})],
)
case(
    "keygen-nonpartitioned-mor",
    "A non-partitioned merge-on-read table with an upsert in the log.",
    rules=("HUDI-LAYOUT-008", "HUDI-COMMIT-005", "HUDI-TABLE-002"),
    steps=[table(BASE, kind=MOR, partition=()), Append(rows=base(*R1)), Upsert(rows=base(*UP))],
    expected=[Expected(rows=base(*R1_UP), metadata={"partitions": [""]})],
)
REGIONS = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("name", pa.string()), ("part", pa.string()),
                     ("region", pa.string())])
_REG = [("1", 10, "one", "a", "east"), ("1", 11, "one west", "a", "west"), ("2", 20, "two", "b", "east")]
case(
    "keygen-complex",
    "A complex key generator: record key (id, name) and two partition fields (part, region); two records share "
    "an id and differ in name.",
    rules=("HUDI-LAYOUT-007", "HUDI-LAYOUT-008", "HUDI-META-004"),
    steps=[Create(schema=REGIONS, partition_by=("part", "region"),
                  properties={"hoodie.table.type": COW, "hoodie.table.version": "9",
                              "hoodie.table.recordkey.fields": "id,name", "hoodie.table.ordering.fields": "ts",
                              "hoodie.record.merge.mode": EVENT,
                              "hoodie.datasource.write.hive_style_partitioning": "true"}),
           Append(rows=rows(REGIONS, *_REG)), Upsert(rows=rows(REGIONS, ("2", 21, "two", "b", "east")))],
    expected=[Expected(rows=rows(REGIONS, _REG[0], _REG[1], ("2", 21, "two", "b", "east")),
                       metadata={"record_key_fields": ["id", "name"], "partition_fields": ["part", "region"],
                                 "partitions": ["part=a/region=east", "part=a/region=west", "part=b/region=east"]})],
)
EVENTS = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("name", pa.string()), ("day", pa.int64())])
case(
    "keygen-timestamp",
    "A timestamp-based key generator: partitions are the day of an epoch-milliseconds column, formatted yyyy-MM-dd "
    "in UTC; the column keeps its value.",
    rules=("HUDI-LAYOUT-008", "HUDI-LAYOUT-015"),
    steps=[Create(schema=EVENTS, partition_by=("day",),
                  properties={"hoodie.table.type": COW, "hoodie.table.version": "9",
                              "hoodie.table.recordkey.fields": "id", "hoodie.table.ordering.fields": "ts",
                              "hoodie.record.merge.mode": EVENT, "hoodie.table.keygenerator.type": "TIMESTAMP",
                              "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
                              "hoodie.keygen.timebased.output.dateformat": "yyyy-MM-dd",
                              "hoodie.keygen.timebased.timezone": "UTC"}),
           Append(rows=rows(EVENTS, ("1", 1, "one", 1704067200000), ("2", 2, "two", 1704153600123)))],
    expected=[Expected(rows=rows(EVENTS, ("1", 1, "one", 1704067200000), ("2", 2, "two", 1704153600123)),
                       metadata={"partitions": ["2024-01-01", "2024-01-02"]})],
)

# --------------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------------

PRIMS = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("b", pa.bool_()), ("i", pa.int32()), ("l", pa.int64()),
                   ("f", pa.float32()), ("dbl", pa.float64()), ("dec", pa.decimal128(10, 2)),
                   ("dec38", pa.decimal128(38, 10)), ("s", pa.string()), ("bin", pa.binary()), ("d", pa.date32())])
_PRIM_ROWS = [
    ("1", 1, True, -2**31, -2**63, -1.5, -2.25, D("-99999999.99"), D("-9999999999999999999999999999.9999999999"),
     "", b"", day("0001-01-01")),
    ("2", 2, False, 2**31 - 1, 2**63 - 1, 3.5, 1e300, D("99999999.99"), D("9999999999999999999999999999.9999999999"),
     "héllo wörld 日本 🎉", b"\x00\xff" * 9, day("9999-12-31")),
    ("3", 3, None, None, None, None, None, None, None, None, None, None),
]
case(
    "types-primitives",
    "Every primitive Avro type Hudi maps, with extremes, multi-byte strings and a row of nulls.",
    rules=("HUDI-META-001", "HUDI-COMMIT-003"),
    steps=[table(PRIMS, partition=()), Append(rows=rows(PRIMS, *_PRIM_ROWS))],
    expected=[Expected(rows=rows(PRIMS, *_PRIM_ROWS))],
)
case(
    "types-primitives-mor-log",
    "Every primitive type through an Avro log block: the upsert rewrites each row with the same values.",
    rules=("HUDI-LOG-008", "HUDI-TABLE-003"),
    steps=[table(PRIMS, kind=MOR, partition=()), Append(rows=rows(PRIMS, *_PRIM_ROWS[:1])),
           Upsert(rows=rows(PRIMS, *_PRIM_ROWS))],
    expected=[Expected(rows=rows(PRIMS, *_PRIM_ROWS))],
)
TIMES = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("at", pa.timestamp("us", tz="UTC")),
                   ("wall", pa.timestamp("us"))])
_TIME_ROWS = [("1", 1, utc("2024-02-29 12:34:56.789123"), ntz("2024-02-29 12:34:56.789123")),
              ("2", 2, utc("1969-12-31 23:59:59.999999"), ntz("1900-01-01 00:00:00.000001")),
              ("3", 3, None, None)]
case(
    "types-timestamps",
    "timestamp-micros (an instant, read as UTC) and local-timestamp-micros (wall clock), before and after the "
    "epoch, and nulls.",
    rules=("HUDI-META-001",),
    steps=[table(TIMES, partition=()), Append(rows=rows(TIMES, *_TIME_ROWS))],
    expected=[Expected(rows=rows(TIMES, *_TIME_ROWS))],
)
NESTED = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("tags", pa.list_(pa.string())),
                    ("attrs", pa.map_(pa.string(), pa.int64())),
                    ("point", pa.struct([("x", pa.float64()), ("y", pa.float64())]))])
_NESTED_ROWS = [("1", 1, ["a", "b"], [("k1", 1), ("k2", 2)], {"x": 1.0, "y": 2.0}),
                ("2", 2, [], [], {"x": None, "y": None}),
                ("3", 3, ["c", None], [("k", None)], None),
                ("4", 4, None, None, None)]
case(
    "types-nested",
    "Arrays, maps with string keys and records, with empty collections, null elements and null values.",
    rules=("HUDI-META-001",),
    steps=[table(NESTED, partition=()), Append(rows=rows(NESTED, *_NESTED_ROWS))],
    expected=[Expected(rows=rows(NESTED, *_NESTED_ROWS))],
)
case(
    "types-nested-mor-log",
    "Nested values through an Avro log block.",
    rules=("HUDI-LOG-008",),
    steps=[table(NESTED, kind=MOR, partition=()), Append(rows=rows(NESTED, *_NESTED_ROWS[:1])),
           Upsert(rows=rows(NESTED, *_NESTED_ROWS))],
    expected=[Expected(rows=rows(NESTED, *_NESTED_ROWS))],
)

# --------------------------------------------------------------------------------------------
# Schema evolution on write (the seed's table) and type promotion
# --------------------------------------------------------------------------------------------

case(
    "evolve-add-column",
    "A nullable column added at the end: rows written before it read null.",
    rules=("HUDI-EVOL-001", "HUDI-COMMIT-003"),
    steps=[table(BASE), Append(rows=base(*R1)), AddColumn(field=pa.field("extra", pa.int32())),
           Append(rows=rows(pa.schema([*BASE, ("extra", pa.int32())]), ("4", 40, "four", "b", 4)))],
    expected=[Expected(version=1, rows=base(*R1)),
              Expected(rows=rows(pa.schema([*BASE, ("extra", pa.int32())]), *[(*r, None) for r in R1],
                                 ("4", 40, "four", "b", 4)))],
)
case(
    "evolve-add-column-mor",
    "A nullable column added at the end of a merge-on-read table; an upsert in the log carries it.",
    rules=("HUDI-EVOL-001",),
    steps=[table(BASE, kind=MOR), Append(rows=base(*R1)), AddColumn(field=pa.field("extra", pa.string())),
           Upsert(rows=rows(pa.schema([*BASE, ("extra", pa.string())]), ("2", 22, "two", "a", "x")))],
    expected=[Expected(rows=rows(pa.schema([*BASE, ("extra", pa.string())]), (*R1[0], None),
                                 ("2", 22, "two", "a", "x"), (*R1[2], None)))],
)
case(
    "evolve-add-meta-prefixed-column",
    "A custom nullable column whose name starts with the meta prefix (_hoodie_meta_col) is data like any other.",
    rules=("HUDI-EVOL-005",),
    steps=[table(BASE), Append(rows=base(*R1)), AddColumn(field=pa.field("_hoodie_meta_col", pa.string())),
           Append(rows=rows(pa.schema([*BASE, ("_hoodie_meta_col", pa.string())]), ("4", 40, "four", "b", "m")))],
    expected=[Expected(rows=rows(pa.schema([*BASE, ("_hoodie_meta_col", pa.string())]), *[(*r, None) for r in R1],
                                 ("4", 40, "four", "b", "m")))],
)
POINTED = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("s", pa.struct([("a", pa.int32())]))])
POINTED2 = pa.schema([("id", pa.string()), ("ts", pa.int64()),
                      ("s", pa.struct([("a", pa.int32()), ("b", pa.string())]))])
case(
    "evolve-add-nested-field",
    "A nullable field appended to a struct (the struct's type widened on write): older rows read it as null.",
    rules=("HUDI-EVOL-002",),
    steps=[table(POINTED, partition=()), Append(rows=rows(POINTED, ("1", 1, {"a": 1}))),
           ChangeColumnType(name="s", type=POINTED2.field("s").type),
           Append(rows=rows(POINTED2, ("2", 2, {"a": 2, "b": "x"})))],
    expected=[Expected(rows=rows(POINTED2, ("1", 1, {"a": 1, "b": None}), ("2", 2, {"a": 2, "b": "x"})))],
)

# Promotions on write (HUDI-PROMO): the table's column widens; files written before read as the wider type.
_PROMOTIONS = [
    ("int-to-long", pa.int32(), pa.int64(), [7, -7], [7, -7], 2**40, "HUDI-PROMO-007"),
    ("int-to-float", pa.int32(), pa.float32(), [7, -7], [7.0, -7.0], 2.5, "HUDI-PROMO-013"),
    ("int-to-double", pa.int32(), pa.float64(), [7, -7], [7.0, -7.0], 2.5, "HUDI-PROMO-019"),
    ("long-to-float", pa.int64(), pa.float32(), [7, -7], [7.0, -7.0], 2.5, "HUDI-PROMO-014"),
    ("long-to-double", pa.int64(), pa.float64(), [2**40, -7], [float(2**40), -7.0], 2.5, "HUDI-PROMO-020"),
    ("float-to-double", pa.float32(), pa.float64(), [1.5, -0.25], [1.5, -0.25], 1e300, "HUDI-PROMO-021"),
    ("int-to-string", pa.int32(), pa.string(), [7, -7], ["7", "-7"], "x", "HUDI-PROMO-025"),
    ("long-to-string", pa.int64(), pa.string(), [2**40, -7], [str(2**40), "-7"], "x", "HUDI-PROMO-026"),
]
for _slug, _old, _new, _before, _after, _later, _rule in _PROMOTIONS:
    _s_old = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", _old)])
    _s_new = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("v", _new)])
    for _kind in ((COW, MOR) if _slug in ("int-to-long", "float-to-double") else (COW,)):
        _t = "" if _kind == COW else "-mor"
        case(
            f"promote-{_slug}{_t}",
            f"Type promotion on write: column v from {_old} to {_new} ({_kind}); older files read as {_new}.",
            rules=(_rule, "HUDI-EVOL-006", "HUDI-EVOL-015"),
            steps=[table(_s_old, kind=_kind, partition=()),
                   Append(rows=rows(_s_old, ("1", 1, _before[0]), ("2", 2, _before[1]))),
                   ChangeColumnType(name="v", type=_new),
                   Upsert(rows=rows(_s_new, ("3", 3, _later)))],
            expected=[Expected(rows=rows(_s_new, ("1", 1, _after[0]), ("2", 2, _after[1]), ("3", 3, _later)))],
        )
ARR = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("xs", pa.list_(pa.int32()))])
ARR2 = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("xs", pa.list_(pa.int64()))])
case(
    "promote-array-element",
    "Promotion of an array's element type from int to long (promotions apply inside complex types).",
    rules=("HUDI-EVOL-008", "HUDI-EVOL-017"),
    steps=[table(ARR, partition=()), Append(rows=rows(ARR, ("1", 1, [1, None, 3]))),
           ChangeColumnType(name="xs", type=pa.list_(pa.int64())), Append(rows=rows(ARR2, ("2", 2, [2**40])))],
    expected=[Expected(rows=rows(ARR2, ("1", 1, [1, None, 3]), ("2", 2, [2**40])))],
)

# --------------------------------------------------------------------------------------------
# Schema evolution on read (hoodie.schema.on.read.enable: ALTER TABLE, InternalSchema field ids)
# --------------------------------------------------------------------------------------------
# The table starts with rows in partition a (one base file written before the change); rows written after the
# change go to partition b (a new file group: the old file keeps the old schema) or, merge-on-read, update a key of
# partition a (a log block in the new schema over a base file in the old one). A reader must resolve every file
# by field id (HUDI-EVOLR-017): a by-name reader loses renamed columns and revives dropped ones.

_ST = pa.struct([("a", pa.int32()), ("b", pa.string())])
_MV = pa.map_(pa.string(), pa.struct([("x", pa.int32())]))
_AR = pa.list_(pa.struct([("e", pa.int32())]))
SOR = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("name", pa.string()), ("qty", pa.int32()), ("s", _ST),
                 ("m", _MV), ("arr", _AR), ("part", pa.string())])
# id, ts, name, qty, s, m, arr, part
SOR_R1 = [("1", 10, "one", 1, {"a": 1, "b": "b1"}, [("k", {"x": 1})], [{"e": 1}], "a"),
          ("2", 20, "two", 2, {"a": 2, "b": "b2"}, [("k", {"x": 2})], [{"e": 2}], "a")]


def _sor_schema(*changes: tuple[str, object]) -> pa.Schema:
    """SOR with top-level columns replaced / dropped / inserted: (name, field or None) pairs, in order of SOR,
    a name not in SOR added at its place in the list given by ``after:<col>`` keys."""
    fields = list(SOR)
    for name, new in changes:
        if name.startswith("after:"):
            k = [f.name for f in fields].index(name[6:]) + 1
            fields.insert(k, new)
            continue
        k = [f.name for f in fields].index(name)
        if new is None:
            fields.pop(k)
        else:
            fields[k] = new
    return pa.schema(fields)


def _sor_case(slug: str, description: str, rules: tuple[str, ...], change, after_schema: pa.Schema, old_rows,
              new_row, *, kinds=(COW, MOR), versions=(9,), extra_expected=(), log_format: str | None = None) -> None:
    """One schema-on-read change per table kind and version: rows, the ALTER, one more write, read latest + v1."""
    for kind in kinds:
        for version in versions:
            suffix = ("" if kind == COW else "-mor") + ("" if version == 9 else f"-v{version}")
            configs = {"hoodie_logfile_data_block_format": log_format} if log_format and kind == MOR else {}
            # MOR: the new row updates key 2 of partition a (a log block over the old base file); COW: a new key in
            # partition b (a second file group; the first keeps its old-schema base file).
            later = new_row(kind)
            expected_rows = [r for r in old_rows if kind == COW or r[0] != later[0]] + [later]
            case(
                f"sor-{slug}{suffix}",
                f"{description} ({'merge-on-read' if kind == MOR else 'copy-on-write'}, table version {version}).",
                rules=rules + ("HUDI-EVOLR-017",),
                steps=[table(SOR, kind=kind, version=version, **configs), Append(rows=rows(SOR, *SOR_R1)), *change,
                       (Upsert if kind == MOR else Append)(rows=rows(after_schema, later))],
                expected=[Expected(version=1, rows=rows(SOR, *SOR_R1)),
                          Expected(rows=rows(after_schema, *expected_rows)), *extra_expected],
            )


def _later(kind: str, *cols) -> tuple:
    """The row written after the change: key 2 again in partition a (MOR, an update) or key 3 in b (COW)."""
    return (("2", 21) if kind == MOR else ("3", 30)) + cols + (("a",) if kind == MOR else ("b",))


_S1 = {"a": 1, "b": "b1"}
_S2 = {"a": 2, "b": "b2"}
_M1, _M2, _A1, _A2 = [("k", {"x": 1})], [("k", {"x": 2})], [{"e": 1}], [{"e": 2}]

# rename top level: name -> full_name keeps its data (id) in the old files
_RENAMED = _sor_schema(("name", pa.field("full_name", pa.string())))
_sor_case("rename-column", "RENAME COLUMN name TO full_name under schema on read: old files' values come back "
          "under the new name", ("HUDI-EVOLR-016", "HUDI-EVOLR-004", "HUDI-EVOLR-001"),
          [RenameColumn(old="name", new="full_name")], _RENAMED,
          [("1", 10, "one", 1, _S1, _M1, _A1, "a"), ("2", 20, "two", 2, _S2, _M2, _A2, "a")],
          lambda k: _later(k, "later", 3, {"a": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3}]),
          versions=(9, 6))
# rename nested: s.a -> s.aa
_ST_R = pa.struct([("aa", pa.int32()), ("b", pa.string())])
_sor_case("rename-nested", "RENAME COLUMN s.a TO aa: a struct field renamed, its old values kept",
          ("HUDI-EVOLR-016",), [RenameColumn(old="s.a", new="aa")], _sor_schema(("s", pa.field("s", _ST_R))),
          [("1", 10, "one", 1, {"aa": 1, "b": "b1"}, _M1, _A1, "a"), ("2", 20, "two", 2, {"aa": 2, "b": "b2"}, _M2,
                                                                     _A2, "a")],
          lambda k: _later(k, "later", 3, {"aa": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3}]))
# drop top level: qty gone from every file
_sor_case("drop-column", "DROP COLUMN qty: the column vanishes from old files too", ("HUDI-EVOLR-014",),
          [DropColumn(name="qty")], _sor_schema(("qty", None)),
          [("1", 10, "one", _S1, _M1, _A1, "a"), ("2", 20, "two", _S2, _M2, _A2, "a")],
          lambda k: _later(k, "later", {"a": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3}]))
# drop nested: s.b
_ST_D = pa.struct([("a", pa.int32())])
_sor_case("drop-nested", "DROP COLUMN s.b: a struct field dropped", ("HUDI-EVOLR-014",),
          [DropColumn(name="s.b")], _sor_schema(("s", pa.field("s", _ST_D))),
          [("1", 10, "one", 1, {"a": 1}, _M1, _A1, "a"), ("2", 20, "two", 2, {"a": 2}, _M2, _A2, "a")],
          lambda k: _later(k, "later", 3, {"a": 3}, [("k", {"x": 3})], [{"e": 3}]))
# move: qty AFTER id
_MOVED = pa.schema([SOR.field("id"), SOR.field("qty"), SOR.field("ts"), SOR.field("name"), SOR.field("s"),
                    SOR.field("m"), SOR.field("arr"), SOR.field("part")])
_sor_case("move-after", "ALTER COLUMN qty AFTER id: the column takes its new place, old files' values with it",
          ("HUDI-EVOLR-012", "HUDI-EVOLR-010"), [MoveColumn(name="qty", after="id")], _MOVED,
          [("1", 1, 10, "one", _S1, _M1, _A1, "a"), ("2", 2, 20, "two", _S2, _M2, _A2, "a")],
          lambda k: (("2", 3, 21) if k == MOR else ("3", 3, 30)) + ("later", {"a": 3, "b": "b3"}, [("k", {"x": 3})],
                                                                   [{"e": 3}], "a" if k == MOR else "b"))
# add nested FIRST: s.c first in s
_ST_F = pa.struct([("c", pa.int32()), ("a", pa.int32()), ("b", pa.string())])
_sor_case("add-nested-first", "ADD COLUMNS(s.c int FIRST): a new first struct field, null in old files",
          ("HUDI-EVOLR-007", "HUDI-EVOLR-009"), [AddColumnAt(path="s.c", type=pa.int32(), first=True)],
          _sor_schema(("s", pa.field("s", _ST_F))),
          [("1", 10, "one", 1, {"c": None, "a": 1, "b": "b1"}, _M1, _A1, "a"),
           ("2", 20, "two", 2, {"c": None, "a": 2, "b": "b2"}, _M2, _A2, "a")],
          lambda k: _later(k, "later", 3, {"c": 9, "a": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3}]))
# add AFTER at the top level
_sor_case("add-after", "ADD COLUMNS(note string AFTER id): a new column in the middle, null in old files",
          ("HUDI-EVOLR-007", "HUDI-EVOLR-010"), [AddColumnAt(path="note", type=pa.string(), after="id")],
          _sor_schema(("after:id", pa.field("note", pa.string()))),
          [("1", None, 10, "one", 1, _S1, _M1, _A1, "a"), ("2", None, 20, "two", 2, _S2, _M2, _A2, "a")],
          lambda k: (("2", "n", 21) if k == MOR else ("3", "n", 30)) + ("later", 3, {"a": 3, "b": "b3"},
                                                                        [("k", {"x": 3})], [{"e": 3}],
                                                                        "a" if k == MOR else "b"))
# map value field
_MV_Y = pa.map_(pa.string(), pa.struct([("x", pa.int32()), ("y", pa.string())]))
_sor_case("add-map-value-field", "ADD COLUMNS(m.value.y string): a field added to a map's value struct",
          ("HUDI-EVOLR-008",), [AddColumnAt(path="m.value.y", type=pa.string())],
          _sor_schema(("m", pa.field("m", _MV_Y))),
          [("1", 10, "one", 1, _S1, [("k", {"x": 1, "y": None})], _A1, "a"),
           ("2", 20, "two", 2, _S2, [("k", {"x": 2, "y": None})], _A2, "a")],
          lambda k: _later(k, "later", 3, {"a": 3, "b": "b3"}, [("k", {"x": 3, "y": "y3"})], [{"e": 3}]))
# array element field
_AR_F = pa.list_(pa.struct([("e", pa.int32()), ("f", pa.string())]))
_sor_case("add-array-element-field", "ADD COLUMNS(arr.element.f string): a field added to an array's element "
          "struct (the current page allows array-nested changes)", ("HUDI-EVOLR-005", "HUDI-EVOLR-007"),
          [AddColumnAt(path="arr.element.f", type=pa.string())], _sor_schema(("arr", pa.field("arr", _AR_F))),
          [("1", 10, "one", 1, _S1, _M1, [{"e": 1, "f": None}], "a"),
           ("2", 20, "two", 2, _S2, _M2, [{"e": 2, "f": None}], "a")],
          lambda k: _later(k, "later", 3, {"a": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3, "f": "f3"}]),
          kinds=(COW,))
# type change int -> long (after a rename turned schema on read on)
_sor_case("change-type", "RENAME COLUMN qty TO quantity, then ALTER COLUMN quantity TYPE bigint: old int values "
          "read as long under the new name", ("HUDI-CHG-001", "HUDI-EVOLR-012", "HUDI-EVOLR-016"),
          [RenameColumn(old="qty", new="quantity"), ChangeColumnType(name="quantity", type=pa.int64())],
          _sor_schema(("qty", pa.field("quantity", pa.int64()))),
          [("1", 10, "one", 1, _S1, _M1, _A1, "a"), ("2", 20, "two", 2, _S2, _M2, _A2, "a")],
          lambda k: _later(k, "later", 2**40, {"a": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3}]),
          versions=(9, 6))
# rename, then add a column with the old name: old data stays with the renamed column (ids, not names)
_REUSED = _sor_schema(("name", pa.field("full_name", pa.string())), ("after:id", pa.field("name", pa.string())))
_sor_case("rename-then-add-old-name", "RENAME COLUMN name TO full_name, then ADD COLUMNS(name string AFTER id): "
          "the old files' name values belong to full_name; the new name column is null in them",
          ("HUDI-EVOLR-016", "HUDI-EVOLR-007", "HUDI-EVOLR-010"),
          [RenameColumn(old="name", new="full_name"), AddColumnAt(path="name", type=pa.string(), after="id")],
          _REUSED,
          [("1", None, 10, "one", 1, _S1, _M1, _A1, "a"), ("2", None, 20, "two", 2, _S2, _M2, _A2, "a")],
          lambda k: (("2", "new", 21) if k == MOR else ("3", "new", 30)) + ("later", 3, {"a": 3, "b": "b3"},
                                                                            [("k", {"x": 3})], [{"e": 3}],
                                                                            "a" if k == MOR else "b"),
          versions=(9, 6))
case(
    "sor-rename-then-add-old-name-mor-parquet-log",
    "RENAME then ADD the old name on a merge-on-read table with Parquet log blocks; the update of key 2 is a "
    "Parquet block in the new schema over the old base file, read-optimized sees the base file only.",
    rules=("HUDI-EVOLR-017", "HUDI-EVOLR-016", "HUDI-EVOLR-007"),
    steps=[table(SOR, kind=MOR, hoodie_logfile_data_block_format="parquet"), Append(rows=rows(SOR, *SOR_R1)),
           RenameColumn(old="name", new="full_name"), AddColumnAt(path="name", type=pa.string(), after="id"),
           Upsert(rows=rows(_REUSED, ("2", "new", 21, "later", 3, {"a": 3, "b": "b3"}, [("k", {"x": 3})],
                                      [{"e": 3}], "a")))],
    expected=[Expected(rows=rows(_REUSED, ("1", None, 10, "one", 1, _S1, _M1, _A1, "a"),
                                 ("2", "new", 21, "later", 3, {"a": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3}],
                                  "a"))),
              Expected(ref="read_optimized", rows=rows(_REUSED, ("1", None, 10, "one", 1, _S1, _M1, _A1, "a"),
                                                       ("2", None, 20, "two", 2, _S2, _M2, _A2, "a")))],
)
case(
    "sor-time-travel-before-rename",
    "Time travel to the version before RENAME COLUMN name TO full_name reads with that version's schema (the old "
    "name); the ALTER's own commit (version 2) already has the new one; the incremental query over the later "
    "insert returns its row under the new name.",
    rules=("HUDI-EVOLR-017", "HUDI-EVOLR-016", "HUDI-COMMIT-003"),
    steps=[table(SOR), Append(rows=rows(SOR, *SOR_R1)), RenameColumn(old="name", new="full_name"),
           Append(rows=rows(_RENAMED, ("3", 30, "three", 3, {"a": 3, "b": "b3"}, [("k", {"x": 3})], [{"e": 3}],
                                       "b")))],
    expected=[Expected(version=1, rows=rows(SOR, *SOR_R1)),
              Expected(version=2, rows=rows(_RENAMED, *SOR_R1)),
              Expected(version=3, rows=rows(_RENAMED, *SOR_R1, ("3", 30, "three", 3, {"a": 3, "b": "b3"},
                                                                 [("k", {"x": 3})], [{"e": 3}], "b"))),
              Expected(ref="incremental:2:3", rows=rows(_RENAMED, ("3", 30, "three", 3, {"a": 3, "b": "b3"},
                                                                    [("k", {"x": 3})], [{"e": 3}], "b")))],
)
case(
    "sor-many-changes-mor",
    "A sequence of ALTERs on a merge-on-read table (rename, nested rename, nested drop, map-value add, move, drop), "
    "each followed by nothing, then one update: every file resolves through the versions by id.",
    rules=("HUDI-EVOLR-017", "HUDI-EVOLR-004", "HUDI-EVOLR-008", "HUDI-EVOLR-014", "HUDI-EVOLR-016"),
    steps=[table(SOR, kind=MOR), Append(rows=rows(SOR, *SOR_R1)),
           RenameColumn(old="name", new="label"), RenameColumn(old="s.a", new="aa"), DropColumn(name="s.b"),
           AddColumnAt(path="m.value.y", type=pa.string()), MoveColumn(name="qty", after="id"),
           DropColumn(name="arr"),
           Upsert(rows=rows(pa.schema([("id", pa.string()), ("qty", pa.int32()), ("ts", pa.int64()),
                                       ("label", pa.string()), ("s", pa.struct([("aa", pa.int32())])),
                                       ("m", _MV_Y), ("part", pa.string())]),
                            ("1", 7, 11, "one v2", {"aa": 1}, [("k", {"x": 1, "y": "y"})], "a")))],
    expected=[Expected(rows=rows(pa.schema([("id", pa.string()), ("qty", pa.int32()), ("ts", pa.int64()),
                                            ("label", pa.string()), ("s", pa.struct([("aa", pa.int32())])),
                                            ("m", _MV_Y), ("part", pa.string())]),
                                 ("1", 7, 11, "one v2", {"aa": 1}, [("k", {"x": 1, "y": "y"})], "a"),
                                 ("2", 2, 20, "two", {"aa": 2}, [("k", {"x": 2, "y": None})], "a"))),
              Expected(version=1, rows=rows(SOR, *SOR_R1))],
)



def _spoil_history(text: str):
    """A raw step: the newest completed ``.hoodie/.schema/*.schemacommit`` file's content replaced by ``text``
    (file surgery by name, never through the reference's parsers)."""

    def fn(storage) -> None:
        names = sorted(f.path for f in storage.list(".hoodie/.schema") if f.path.endswith(".schemacommit"))
        storage.write_atomic(names[-1], text.encode("utf-8"))

    return fn


_SOR_NEG_STEPS = [table(SOR), Append(rows=rows(SOR, *SOR_R1)), RenameColumn(old="name", new="full_name"),
                  Append(rows=rows(_RENAMED, ("3", 30, "three", 3, {"a": 3, "b": "b3"}, [("k", {"x": 3})],
                                              [{"e": 3}], "b")))]
case(
    "neg-sor-history-not-json",
    "The newest InternalSchema history file (.hoodie/.schema) is not JSON: the table's files cannot be resolved "
    "by field id, and a reader must refuse rather than fall back to names.",
    rules=("HUDI-EVOLR-017",),
    steps=[*_SOR_NEG_STEPS, _raw(_spoil_history('{"schemas":['), "truncate the newest history file")],
    expected=[Expected(error="invalid_table")],
    violates=("HUDI-EVOLR-017",),
)
case(
    "neg-sor-history-unknown-type",
    "The newest InternalSchema history file gives a column a type no Hudi release writes (varchar): a reader "
    "must refuse the table.",
    rules=("HUDI-EVOLR-017",),
    steps=[*_SOR_NEG_STEPS, _raw(_spoil_history(
        '{"schemas":[{"max_column_id":0,"version_id":0,"type":"record","fields":[{"id":0,"name":"id",'
        '"optional":true,"type":"varchar"}]}]}'), "a history with an unknown type")],
    expected=[Expected(error="invalid_table")],
    violates=("HUDI-EVOLR-017",),
)

# --------------------------------------------------------------------------------------------
# Time travel, incremental and read-optimized queries
# --------------------------------------------------------------------------------------------

case(
    "time-travel-versions",
    "Three writes; each earlier state is read by time travel to its instant.",
    rules=("HUDI-TIMELINE-019", "HUDI-FILE-013", "HUDI-TIMELINE-015"),
    steps=[table(BASE), Append(rows=base(*R1)), Upsert(rows=base(*UP)), Delete(where="id = '1'")],
    expected=[Expected(version=1, rows=base(*R1)), Expected(version=2, rows=base(*R1_UP)),
              Expected(version=3, rows=base(*R1_UP[1:]))],
)
case(
    "time-travel-mor",
    "Time travel on merge-on-read: a read point between two deltacommits skips the later log block.",
    rules=("HUDI-TIMELINE-019", "HUDI-FILE-011", "HUDI-LOG-011"),
    steps=[table(BASE, kind=MOR), Append(rows=base(*R1)), Upsert(rows=base(*UP)),
           Upsert(rows=base(("1", 11, "one v2", "a")))],
    expected=[Expected(version=1, rows=base(*R1)), Expected(version=2, rows=base(*R1_UP)),
              Expected(rows=base(("1", 11, "one v2", "a"), *R1_UP[1:]))],
)
case(
    "time-travel-v6-mor",
    "Time travel on a table-version-6 merge-on-read table (read points by requested time).",
    rules=("HUDI-TIMELINE-019", "HUDI-FILE-012", "HUDI-TIMELINE-014"),
    steps=[table(BASE, kind=MOR, version=6), Append(rows=base(*R1)), Upsert(rows=base(*UP))],
    expected=[Expected(version=1, rows=base(*R1)), Expected(version=2, rows=base(*R1_UP))],
)
for _kind in (COW, MOR):
    _t = "cow" if _kind == COW else "mor"
    case(
        f"incremental-{_t}",
        f"An incremental query over versions (1, 3] of a {_kind} table: the records written by the second and third "
        "writes, each in its latest state.",
        rules=("HUDI-TABLE-005", "HUDI-META-002"),
        steps=[table(BASE, kind=_kind), Append(rows=base(*R1)), Upsert(rows=base(*UP)),
               Upsert(rows=base(("3", 31, "three v2", "b")))],
        expected=[Expected(ref="incremental:1:3", rows=base(R1_UP[1], ("3", 31, "three v2", "b"), R1_UP[3])),
                  Expected(ref="incremental:2:", rows=base(("3", 31, "three v2", "b"))),
                  Expected(ref="incremental:0:1", rows=base(*R1))],
    )
case(
    "read-optimized-mor",
    "A read-optimized query of merge-on-read reads base files only: before compaction it misses the log; after, "
    "it agrees with the snapshot.",
    rules=("HUDI-TABLE-004", "HUDI-TIMELINE-013"),
    steps=[table(BASE, kind=MOR), Append(rows=base(*R1)), Upsert(rows=base(("1", 11, "one v2", "a"))), Optimize()],
    expected=[Expected(ref="read_optimized:2", rows=base(*R1)),
              Expected(version=2, rows=base(("1", 11, "one v2", "a"), *R1[1:])),
              Expected(ref="read_optimized", rows=base(("1", 11, "one v2", "a"), *R1[1:]),
                       metadata={"action": "commit"})],
)
case(
    "read-optimized-cow",
    "A read-optimized query of copy-on-write is its snapshot.",
    rules=("HUDI-TABLE-004",),
    steps=[table(BASE), Append(rows=base(*R1)), Upsert(rows=base(*UP))],
    expected=[Expected(ref="read_optimized", rows=base(*R1_UP))],
)

# --------------------------------------------------------------------------------------------
# Compaction, clustering, insert overwrite
# --------------------------------------------------------------------------------------------

for _version in (6, 9):
    case(
        f"v{_version}-mor-compaction",
        f"Compaction of a table-version-{_version} merge-on-read table: a commit with new base files; rows unchanged, "
        "then an upsert logs on top of the compacted slice.",
        rules=("HUDI-TIMELINE-013", "HUDI-TABLE-002", "HUDI-FILE-003", "HUDI-FILE-013"),
        steps=[table(BASE, kind=MOR, version=_version), Append(rows=base(*R1)), Upsert(rows=base(*UP)), Optimize(),
               Upsert(rows=base(("6", 61, "six v2", "b")))],
        expected=[Expected(version=3, rows=base(*R1_UP), metadata={"action": "commit"}),
                  Expected(rows=base(*R1_UP[:3], ("6", 61, "six v2", "b")))],
    )
case(
    "cow-clustering",
    "Clustering a copy-on-write table: a replacecommit rewrites its file groups; the replaced groups are no longer "
    "read.",
    rules=("HUDI-COMMIT-004", "HUDI-TIMELINE-013"),
    steps=[table(BASE), Append(rows=base(*R1)), Append(rows=base(*R2)), Optimize()],
    expected=[Expected(rows=base(*R1, *R2), metadata={"action": "replacecommit"}),
              Expected(version=2, rows=base(*R1, *R2))],
)
for _kind in (COW, MOR):
    _t = "cow" if _kind == COW else "mor"
    case(
        f"insert-overwrite-table-{_t}",
        f"insert_overwrite_table on {_kind}: a replacecommit replaces every file group; only the new rows are read.",
        rules=("HUDI-COMMIT-004", "HUDI-COMMIT-001"),
        steps=[table(BASE, kind=_kind), Append(rows=base(*R1)), Overwrite(rows=base(*R2))],
        expected=[Expected(version=1, rows=base(*R1)),
                  Expected(rows=base(*R2), metadata={"action": "replacecommit"})],
    )

# --------------------------------------------------------------------------------------------
# Failed writes and rollback
# --------------------------------------------------------------------------------------------

for _kind in (COW, MOR):
    _t = "cow" if _kind == COW else "mor"
    case(
        f"failed-write-invisible-{_t}",
        f"A write that never completed ({_kind}: requested and inflight, its files on storage) is not read.",
        rules=("HUDI-TIMELINE-019", "HUDI-FILE-010", "HUDI-FILE-015", "HUDI-LOG-011"),
        steps=[table(BASE, kind=_kind), Append(rows=base(*R1)), FailedWrite(rows=base(("1", 99, "lost", "a")))],
        expected=[Expected(rows=base(*R1))],
    )
    case(
        f"failed-write-rolled-back-{_t}",
        f"A failed write rolled back ({_kind}), then a new upsert: only completed writes are read.",
        rules=("HUDI-TIMELINE-020", "HUDI-LOG-009", "HUDI-TIMELINE-017"),
        steps=[table(BASE, kind=_kind), Append(rows=base(*R1)),
               FailedWrite(rows=base(("1", 99, "lost", "a")), rollback=True), Upsert(rows=base(*UP))],
        expected=[Expected(version=1, rows=base(*R1)), Expected(rows=base(*R1_UP))],
    )

# --------------------------------------------------------------------------------------------
# Negative cases (raw surgery on the reference writer's tables)
# --------------------------------------------------------------------------------------------

case(
    "neg-table-version-99",
    "hoodie.table.version 99: a version no release writes; readers must refuse it rather than guess.",
    rules=("HUDI-LAYOUT-006",),
    steps=[table(BASE), Append(rows=base(*R1)), _raw(raw.set_properties(hoodie_table_version="99"), "version 99")],
    expected=[Expected(error="unsupported")],
    violates=("HUDI-LAYOUT-006",),
)
case(
    "neg-layout-version-mismatch",
    "Table version 9 with timeline layout version 1: the pair is inconsistent.",
    rules=("HUDI-LAYOUT-004",),
    steps=[table(BASE), Append(rows=base(*R1)),
           _raw(raw.set_properties(hoodie_timeline_layout_version="1"), "layout 1 for table version 9")],
    expected=[Expected(error="invalid_table")],
    violates=("HUDI-LAYOUT-004",),
)
case(
    "neg-only-inflight-instants",
    "Every data instant left requested/inflight (no completed file): the table has no committed rows.",
    rules=("HUDI-TIMELINE-019", "HUDI-TIMELINE-002", "HUDI-FILE-010"),
    steps=[table(BASE), Append(rows=base(*R1)), _raw(raw.uncomplete_all(), "delete the completed instant files")],
    expected=[Expected(rows=empty(BASE), error_allowed="invalid_table")],
    notes="With no completed write the table has no schema on the timeline: returning no rows, or refusing the "
          "table for that, are both conformant.",
)
case(
    "neg-last-write-inflight-mor",
    "The latest deltacommit of a merge-on-read table left inflight: its log block is skipped.",
    rules=("HUDI-LOG-011", "HUDI-TIMELINE-019"),
    steps=[table(BASE, kind=MOR), Append(rows=base(*R1)), Upsert(rows=base(*UP)),
           _raw(raw.uncomplete_last(), "the upsert's completed file deleted")],
    expected=[Expected(rows=base(*R1))],
)
case(
    "neg-corrupt-log-block",
    "The upsert's log block is corrupt (its framing lengths no longer agree): readers skip it, not fail.",
    rules=("HUDI-LOG-007", "HUDI-LOG-006"),
    steps=[table(BASE, kind=MOR), Append(rows=base(*R1)), Upsert(rows=base(("1", 11, "one v2", "a"))),
           _raw(raw.corrupt_last_log_block(), "overwrite the back half of the last block")],
    expected=[Expected(rows=base(*R1), error_allowed="invalid_table")],
    violates=("HUDI-LOG-006",),
    notes="The spec's total block length exists so that readers can detect a torn block and skip it; a reader "
          "that refuses the file instead is strict but loses no data silently.",
)
case(
    "neg-missing-base-file",
    "The only base file of a non-partitioned table deleted from storage: its completed commit names a file that "
    "is gone.",
    rules=("HUDI-FILE-013", "HUDI-COMMIT-002"),
    steps=[table(BASE, partition=()), Append(rows=base(*R1)), _raw(raw.delete_a_base_file(), "delete a base file")],
    expected=[Expected(rows=empty(BASE), error_allowed="invalid_table")],
    violates=("HUDI-COMMIT-002",),
    notes="Without a metadata table, Hudi readers build file groups from the file listing (Java's file-system view, "
          "hudi-rs), so a deleted file group is simply not there: no rows. A reader that checks the commit metadata "
          "against the listing refuses the table, which is conformant too; the validator names the broken rule.",
)
case(
    "neg-unknown-action",
    "A completed instant of an action no spec names (frobnicate): readers ignore it, or refuse it as unsupported.",
    rules=("HUDI-TIMELINE-008",),
    steps=[table(BASE), Append(rows=base(*R1)), _raw(raw.add_completed_instant("frobnicate"), "a frobnicate instant")],
    expected=[Expected(rows=base(*R1), error_allowed="unsupported")],
    violates=("HUDI-TIMELINE-008",),
    notes="Java lists the timeline by the file extensions it knows, so it never sees the instant. Releases have added "
          "actions within one table version (indexing, logcompaction), so a reader that meets an action it does not "
          "know cannot tell a newer writer from a broken table: refusing it as unsupported is conformant too.",
)
case(
    "neg-garbage-commit-metadata",
    "The latest commit's metadata is neither JSON nor Avro.",
    rules=("HUDI-TIMELINE-018", "HUDI-TIMELINE-017"),
    steps=[table(BASE), Append(rows=base(*R1)), Upsert(rows=base(*UP)),
           _raw(raw.garble_last_commit(), "garbage in the completed instant")],
    expected=[Expected(error="invalid_table")],
    violates=("HUDI-TIMELINE-018",),
)
case(
    "neg-missing-table-name",
    "hoodie.properties without hoodie.table.type: a required key is missing.",
    rules=("HUDI-LAYOUT-003",),
    steps=[table(BASE), Append(rows=base(*R1)), _raw(raw.drop_property("hoodie.table.type"), "drop the table type")],
    expected=[Expected(rows=base(*R1), error_allowed="invalid_table")],
    violates=("HUDI-LAYOUT-003",),
    notes="Java falls back to COPY_ON_WRITE when the key is missing; the spec lists it as required.",
)


def cases() -> list[Case]:
    """Every Hudi case, in corpus order."""
    return list(_CASES)

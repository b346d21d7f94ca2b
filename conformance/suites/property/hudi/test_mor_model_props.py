"""Merge-on-read (and copy-on-write) tables against an in-memory model (reference_impl.hudi.writer / table, hudi-rs).

A generated table (MERGE_ON_READ or COPY_ON_WRITE; table version 6 or 9; merge mode EVENT_TIME_ORDERING or
COMMIT_TIME_ORDERING; Avro or Parquet log data blocks; ordering field ``ts``; record key ``k`` scoped by partition ``p``, one or two partitions)
gets a generated list of operations written with the reference writer:

* insert: new keys (keys the table holds are left out: Hudi's insert would duplicate them);
* upsert: keys the table holds, with an ordering value lower than, equal to or higher than the stored one, or
  null, plus possibly new keys;
* delete: keys the table holds, as a plain delete (no ordering value: Java's IntWrapper 0) or with an ordering
  value lower/equal/higher than the stored one;
* compact (MOR only).

The model applies table.py's documented merge semantics per key, older to newer: COMMIT_TIME_ORDERING, the later
write wins, deletes included; EVENT_TIME_ORDERING, a newer record wins when its ordering value is at least the
stored one (a null counts as lowest, ties go to the later write), a plain delete always wins, a delete with a value
loses only to a stored record with a strictly greater value. A key the table no longer holds is new to the writer
(its index looks up the merged slices), so its next write starts afresh. A delete's ordering value may be 0: as a
long (the ordering field's type) it is an ordinary value, not the int 0 of a plain delete (the natural-order
default that always wins); the reference and hudi-rs agree on that.

After every committed operation the model's rows are those of the new version: the reference reads every
version (time travel by the kit's version numbers, compaction commits included), the latest state, and the
read-optimized state right after a compaction (compaction merges every log, so base files alone hold the rows);
hudi-rs reads every version to the same rows where it is installed.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from conformance.suites.property.delta._support import examples
from conformance.suites.property.hudi._support import canonical, hudi_rs_available, hudi_rs_read, need_hudi_rs

COLUMNS = ["k", "p", "v", "ts"]
SCHEMA = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("p", pa.string(), nullable=False),
                    pa.field("v", pa.int64()), pa.field("ts", pa.int64())])
KEYS = [f"k{i}" for i in range(4)]
EVENT, COMMIT = "EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"
RULES = ("HUDI-TABLE-003", "HUDI-TABLE-004", "HUDI-LAYOUT-009", "HUDI-LOG-010", "HUDI-TIMELINE-019")


@dataclass(frozen=True)
class HudiTable:
    table_type: str  # COPY_ON_WRITE / MERGE_ON_READ
    version: int
    mode: str
    partitions: tuple[str, ...]
    log_format: str = "avro"  # MOR data blocks: Avro or Parquet

    @property
    def mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"


tables = st.builds(HudiTable, st.sampled_from(["MERGE_ON_READ", "MERGE_ON_READ", "COPY_ON_WRITE"]),
                   st.sampled_from([6, 9]), st.sampled_from([EVENT, COMMIT]),
                   st.sampled_from([("a",), ("a", "b")]), st.sampled_from(["avro", "parquet"]))
# the ordering value relative to the stored one: it is resolved when the operation runs, on the model's state
RELATIONS = st.sampled_from([-1, 0, 1, None])


def operations(table: HudiTable) -> st.SearchStrategy[tuple]:
    """("insert", [(p, k, v, ts)]), ("upsert", [(p, k, v, rel)]), ("delete", [(p, k, rel | "plain")]), ("compact",)."""
    key = st.tuples(st.sampled_from(table.partitions), st.sampled_from(KEYS))
    small = st.integers(-9, 9)
    insert = st.lists(st.tuples(key, small, st.none() | st.integers(0, 5)), min_size=1, max_size=3,
                      unique_by=lambda r: r[0]).map(lambda rs: ("insert", rs))
    upsert = st.lists(st.tuples(key, small, RELATIONS), min_size=1, max_size=3,
                      unique_by=lambda r: r[0]).map(lambda rs: ("upsert", rs))
    delete = st.lists(st.tuples(key, st.sampled_from(["plain", -1, 0, 1])), min_size=1, max_size=2,
                      unique_by=lambda r: r[0]).map(lambda rs: ("delete", rs))
    ops = [insert, upsert, upsert, delete]
    if table.mor:
        ops.append(st.just(("compact",)))
    return st.one_of(ops)


def _ge(new: Any, old: Any) -> bool:
    """Event-time: ``new`` at least ``old``, a null counting as lowest."""
    if new is None:
        return old is None
    return old is None or new >= old


@dataclass
class Model:
    """The rows the table holds, per (partition, key)."""

    table: HudiTable
    rows: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def resolve(self, key: tuple[str, str], rel: Any) -> Any:
        """An ordering value ``rel`` below/at/above the stored one (3 when there is none); None stays null."""
        if rel is None:
            return None
        old = self.rows.get(key, {}).get("ts")
        return (3 if old is None else old) + rel

    def upsert(self, recs: list[dict[str, Any]]) -> None:
        for r in recs:
            key = (r["p"], r["k"])
            old = self.rows.get(key)
            if old is None or self.table.mode == COMMIT or _ge(r["ts"], old["ts"]):
                self.rows[key] = dict(r)

    def delete(self, key: tuple[str, str], value: Any) -> None:
        old = self.rows.get(key)
        if old is None:
            return
        if value is None or self.table.mode == COMMIT:
            del self.rows[key]  # a plain delete, or commit-time ordering: the later write wins
        elif old["ts"] is None or not old["ts"] > value:
            del self.rows[key]  # the delete loses only to a strictly greater stored value

    def snapshot(self) -> list[tuple]:
        return canonical(self.rows.values(), COLUMNS)


def create(d: str, table: HudiTable) -> None:
    from reference_impl.hudi import writer as W

    W.create_table(d, SCHEMA, record_key=["k"], partition_fields=["p"], ordering_fields=["ts"],
                   table_type=table.table_type, table_version=table.version, merge_mode=table.mode,
                   log_block_format=table.log_format)


def run(table: HudiTable, ops: list[tuple], d: str) -> tuple[Model, dict[int, list[tuple]], set[int]]:
    """Write ``ops``; the model's rows at every version the writes made, and the versions compactions made."""
    from reference_impl.hudi import writer as W

    create(d, table)
    model = Model(table)
    states: dict[int, list[tuple]] = {}
    compactions: set[int] = set()
    for op in ops:
        done = None
        if op[0] == "insert":
            recs = [{"p": p, "k": k, "v": v, "ts": ts} for (p, k), v, ts in op[1] if (p, k) not in model.rows]
            if recs:
                done = W.insert(d, pa.Table.from_pylist(recs, schema=SCHEMA))
                model.upsert(recs)
        elif op[0] == "upsert":
            recs = [{"p": p, "k": k, "v": v, "ts": model.resolve((p, k), rel)} for (p, k), v, rel in op[1]]
            done = W.upsert(d, pa.Table.from_pylist(recs, schema=SCHEMA))
            model.upsert(recs)
        elif op[0] == "delete":
            held = [(key, None if rel == "plain" else model.resolve(key, rel)) for key, rel in op[1]
                    if key in model.rows]
            if held:
                plain = [key for key, value in held if value is None]
                valued = [(key, value) for key, value in held if value is not None]
                # one delete call per kind: a keys table either carries the ordering column or not
                for keys, with_ts in ((plain, False), (valued, True)):
                    if not keys:
                        continue
                    rows = [{"p": k[0][0], "k": k[0][1], "ts": k[1]} for k in keys] if with_ts else \
                        [{"p": p, "k": k} for p, k in keys]
                    done = W.delete(d, pa.Table.from_pylist(rows))
                    assert done is not None
                    for key in (k for k, _ in keys) if with_ts else keys:
                        model.delete(key, dict(keys).get(key) if with_ts else None)
                    states[len(states) + 1] = model.snapshot()
                done = None  # recorded above, one version per call
        else:
            done = W.compact(d)
            if done is not None:
                compactions.add(len(states) + 1)
        if done is not None:
            states[len(states) + 1] = model.snapshot()
    return model, states, compactions


def _ref(d: str, version: int | None, query: str = "snapshot") -> list[tuple]:
    from reference_impl.hudi import versions as V

    return canonical(V.read_table(d, version=version, query=query, meta_columns=False).to_pylist(), COLUMNS)


@st.composite
def scenarios(draw) -> tuple[HudiTable, list[tuple]]:
    table = draw(tables, label="table")
    return table, draw(st.lists(operations(table), min_size=1, max_size=6), label="ops")


@pytest.mark.rule(*RULES)
@examples(0.25, floor=5)
@given(scenarios())
def test_reference_matches_model(scenario):
    """The reference reads every version, the latest state and the read-optimized state after compactions as the
    model; the validator finds nothing."""
    from reference_impl.hudi.validate import validate_table

    table, ops = scenario
    note(str(table))
    with tempfile.TemporaryDirectory() as d:
        model, states, compactions = run(table, ops, d)
        for version, want in states.items():
            assert _ref(d, version) == want, f"reference at version {version}"
        assert _ref(d, None) == model.snapshot()
        for version in compactions:
            assert _ref(d, version, "read_optimized") == states[version], f"read-optimized at version {version}"
        assert [f"{v.rule}: {v.message}" for v in validate_table(d)] == []


@pytest.mark.rule(*RULES)
@examples(0.25, floor=5)
@given(scenarios())
def test_hudi_rs_matches_model(scenario):
    """hudi-rs reads every version, the latest state and the read-optimized state after compactions as the model."""
    need_hudi_rs()
    table, ops = scenario
    note(str(table))
    with tempfile.TemporaryDirectory() as d:
        model, states, compactions = run(table, ops, d)
        for version, want in states.items():
            got = canonical(hudi_rs_read(d, version).to_pylist(), COLUMNS)
            assert got == want, f"hudi-rs at version {version}:\n got {got}\nwant {want}"
        for version in compactions:  # base files alone hold the rows right after a compaction
            got = canonical(hudi_rs_read(d, ref=f"read_optimized:{version}").to_pylist(), COLUMNS)
            assert got == states[version], f"hudi-rs read-optimized at version {version}"
        assert canonical(hudi_rs_read(d).to_pylist(), COLUMNS) == model.snapshot()


def test_hudi_rs_runs_here():
    """The model suite reads with hudi-rs too; where it is absent, say so (a failure under LAKECONF_REQUIRE_ENGINES)."""
    need_hudi_rs()
    assert hudi_rs_available()

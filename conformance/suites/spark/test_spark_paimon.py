"""Spark (paimon-spark 0.9.0 on Spark 3.5) as a Paimon writer and reader, on local disk and on MinIO.

Spark writes append and primary-key tables (partitioned, fixed buckets, deletion vectors), upserts,
updates and deletes rows, compacts, tags, branches, expires snapshots and evolves the schema, each
through the SQL or DataFrame call a Spark user types; the table lands exactly at ``TableRef.uri``.
Every table Spark writes is read back by the reference reader (``reference_impl.paimon.table``) at
each snapshot and compared with what Spark itself returns, its facts with the reference's, and the
reference validator runs over it: a violation that no registered writer-side finding explains
fails the test (it is a writer finding to file, never hidden). Where paimon-spark 0.9 and the
reference part on purpose-built edges the test pins both answers and says which side the spec takes.

The 3.5 line only: no paimon-spark for Spark 4.0 resolves from Maven Central.
"""

from __future__ import annotations

import json
import time
import uuid

import pyarrow as pa
import pytest

from conformance.compare import compare
from conformance.engines.spark import lines, session as se
from conformance.formats.paimon.steps import WriteChanges
from conformance.model import (
    AddColumn,
    Append,
    ChangeColumnType,
    Create,
    CreateRef,
    Delete,
    DropColumn,
    ExpireSnapshots,
    MoveColumn,
    Optimize,
    Overwrite,
    RenameColumn,
    SetPartitioning,
    SetProperties,
    Update,
)
from reference_impl.errors import InvalidTable, Unsupported

pytestmark = pytest.mark.spark

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("part", pa.string(), nullable=False),
        pa.field("amount", pa.float64()),
        pa.field("ts", pa.timestamp("us", tz="UTC")),
    ]
)
ROWS = pa.table(
    {
        "id": pa.array([1, 2, 3, 4, 5, 6], pa.int64()),
        "part": ["a", "b", "a", "b", "a", "b"],
        "amount": [1.5, 2.5, None, 4.0, 5.5, 6.5],
        "ts": pa.array([0, 86_400_000_000, 2_000_000, 3_000_000, 4_000_000, 5_000_000], pa.timestamp("us", tz="UTC")),
    },
    schema=SCHEMA,
)


@pytest.fixture(scope="module", autouse=True)
def _paimon_line(spark_engine):
    """Paimon has a Spark runtime for the 3.5 line only: other lines skip with the reason."""
    if "3.5" not in _driver().RUNTIMES or spark_engine.line.name not in _driver().RUNTIMES:
        pytest.skip(f"no paimon-spark runtime for Spark {spark_engine.line.name} (only {sorted(_driver().RUNTIMES)})")
    from conformance import formats

    if not formats.get("paimon").drivers.get("spark"):
        pytest.skip("conformance/formats/paimon registers no spark driver")
    if "paimon" not in spark_engine.formats():
        pytest.skip(f"LAKECONF_SPARK_FORMATS leaves paimon out ({','.join(spark_engine.formats())})")


# Storage-agnostic steps (DDL, refusals): local disk suffices and keeps the suite short.
LOCAL_ONLY = pytest.mark.parametrize("store", ["local"], indirect=True)


def _driver():
    from conformance.formats.paimon.drivers import spark as driver

    return driver


def _ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def _rows(table: pa.Table, columns=("id", "part", "amount")) -> list[tuple]:
    data = table.select(list(columns)).to_pylist()
    return sorted((tuple(r[c] for c in columns) for r in data), key=lambda r: tuple(str(x) for x in r))


def _ref(store, name: str):
    return store.table_ref("paimon", f"{name}-{uuid.uuid4().hex[:8]}")


def _reference():
    """The reference reader, describe and validator, or skip with the reason."""
    try:
        from reference_impl.paimon import table
        from reference_impl.paimon.validate import validate_table
    except Exception as exc:  # a helper may still be writing them
        pytest.skip(f"reference_impl.paimon cannot be imported: {type(exc).__name__}: {exc}")
    return table, validate_table


def _snapshot_ids(store, ref, branch: str | None = None) -> list[int]:
    prefix = f"branch/branch-{branch}/snapshot" if branch else "snapshot"
    out = []
    for info in store.storage(ref.uri).list(prefix):
        name = info.path.rsplit("/", 1)[-1]
        if name.startswith("snapshot-"):
            out.append(int(name[len("snapshot-"):]))
    return sorted(out)


def _commit_kinds(store, ref) -> dict[int, str]:
    storage = store.storage(ref.uri)
    return {i: json.loads(storage.read(f"snapshot/snapshot-{i}"))["commitKind"] for i in _snapshot_ids(store, ref)}


def _agree(spark_engine, store, table_ref, **selection) -> pa.Table:
    """Spark and the reference read the same rows (same columns and logical types) at a selection;
    ``selection`` is the engine's (at/timestamp/ref) plus the reference's own spelling (``reference``)."""
    table, _ = _reference()
    reference_kw = selection.pop("reference", {})
    got = spark_engine.read(table_ref, **selection)
    want = table.read_table(store.storage(table_ref.uri), **reference_kw)
    result = compare(got, want)
    assert result.equal, f"spark and the reference differ at {selection or 'latest'}: {result.summary}"
    return got


def _agree_everywhere(spark_engine, store, ref) -> None:
    """Every live snapshot of main reads the same through Spark and the reference, and so do the facts."""
    table, _ = _reference()
    for sid in _snapshot_ids(store, ref):
        _agree(spark_engine, store, ref, at=sid, reference={"snapshot_id": sid})
    _agree(spark_engine, store, ref)
    _agree_facts(spark_engine, store, ref)


def _agree_facts(spark_engine, store, table_ref, **selection) -> dict:
    table, _ = _reference()
    reference_kw = selection.pop("reference", {})
    got = spark_engine.describe(table_ref, **selection)
    want = table.describe(store.storage(table_ref.uri), **reference_kw)
    differ = {k: (got[k], want[k]) for k in got if k in want and got[k] != want[k]}
    assert not differ, f"facts differ (spark, reference): {differ}"
    return got


def _update(spark_engine, ref, step: Update) -> bool:
    """Run one UPDATE; False when this session cannot (another runtime's analyzer rule refuses Paimon
    tables: the driver's Unsupported names it, see test_update_gap_in_a_shared_session)."""
    try:
        spark_engine.write(ref, [step])
    except Unsupported as exc:
        assert "RewriteUpdateTableForRowLineage" in str(exc), exc
        return False
    return True


def _assert_valid(store, ref, spark_engine) -> None:
    """The reference validator finds nothing wrong with Spark's table but what registered writer-side
    findings explain: anything else is a writer finding to file, listed in the failure."""
    from conformance.writer_checks import explain_violation

    _, validate_table = _reference()
    found = [v for v in validate_table(store.storage(ref.uri))
             if explain_violation("paimon/spark-suite", spark_engine.name, v.rule, v.message, store=store.name,
                                  writer_version=spark_engine.version()) is None]
    assert not found, [(v.rule, v.message, getattr(v, "where", "")) for v in found]


# ----------------------------------------------------------------------------------------------
# The session
# ----------------------------------------------------------------------------------------------


def test_session_offers_paimon_on_35_only(spark_engine):
    assert se.line_formats(lines.LINES["3.5"])[0] == "paimon"  # its extension first (before Hudi's, Iceberg's)
    assert "paimon" not in se.line_formats(lines.LINES["4.0"])
    spark = se.get()
    extensions = spark.conf.get("spark.sql.extensions").split(",")
    assert extensions[0] == "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions"
    assert spark.conf.get("spark.sql.catalog.paimon") == "org.apache.paimon.spark.SparkCatalog"
    caps = spark_engine.capabilities()
    assert "paimon" in caps.read and "paimon" in caps.write
    assert {"CreateRef", "ExpireSnapshots", "Optimize"} <= caps.write_steps["paimon"]
    assert "WriteChanges" not in caps.write_steps["paimon"] and "SetPartitioning" not in caps.write_steps["paimon"]
    assert "paimon-spark 0.9.0" in spark_engine.version()


# ----------------------------------------------------------------------------------------------
# Append tables
# ----------------------------------------------------------------------------------------------


@pytest.mark.rule("PAIMON-LAYOUT-001", "PAIMON-PART-005")
def test_append_partitioned_time_travel(spark_engine, store):
    ref = _ref(store, "append")
    spark_engine.write(
        ref,
        [
            Create(schema=SCHEMA, partition_by=("part",), properties={"file.format": "parquet"}),
            Append(rows=ROWS.slice(0, 4), files=2),
            Append(rows=ROWS.slice(4, 2)),
        ],
    )
    storage = store.storage(ref.uri)
    # The table is exactly at TableRef.uri (not under a catalog's <warehouse>/<db>.db/).
    assert storage.exists("schema/schema-0") and storage.exists("snapshot/LATEST")
    assert {p.path.split("/", 1)[0] for p in storage.walk("")} == {"schema", "snapshot", "manifest", "part=a", "part=b"}
    assert _snapshot_ids(store, ref) == [1, 2]

    got = _agree(spark_engine, store, ref)
    assert _rows(got) == _rows(ROWS)
    assert got.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert _ids(_agree(spark_engine, store, ref, at=1, reference={"snapshot_id": 1})) == [1, 2, 3, 4]
    assert spark_engine.read(ref, at=0).num_rows == 0
    assert spark_engine.read(ref, columns=["id"]).column_names == ["id"]
    with pytest.raises(InvalidTable):
        spark_engine.read(ref, at=9)

    facts = _agree_facts(spark_engine, store, ref)
    assert facts["primary_keys"] == [] and facts["partition_keys"] == ["part"] and facts["bucket"] == -1
    assert facts["merge_engine"] is None and facts["commit_kind"] == "APPEND" and facts["snapshot_id"] == 2
    assert facts["options"]["file.format"] == "parquet"
    _agree_facts(spark_engine, store, ref, at=1, reference={"snapshot_id": 1})
    _assert_valid(store, ref, spark_engine)


@pytest.mark.rule("PAIMON-MANIFEST-021")
def test_append_delete_update_overwrite(spark_engine, store):
    ref = _ref(store, "append-rewrite")
    spark_engine.write(
        ref,
        [
            Create(schema=SCHEMA),
            Append(rows=ROWS),
            Delete(where="id IN (1, 4)"),  # copy-on-write: the file is rewritten
        ],
    )
    updated = _update(spark_engine, ref, Update(set={"amount": "amount * 10"}, where="id = 2"))
    got = _agree(spark_engine, store, ref)
    assert _rows(got) == [(2, "b", 25.0 if updated else 2.5), (3, "a", None), (5, "a", 5.5), (6, "b", 6.5)]
    _agree_everywhere(spark_engine, store, ref)
    with pytest.raises(Unsupported, match="deletion-vectors.enabled"):
        spark_engine.write(ref, [Delete(where="id = 2", how="deletion-vectors")])
    with pytest.raises(Unsupported):
        spark_engine.write(ref, [Delete(where="id = 2", how="position-deletes")])

    spark_engine.write(ref, [Overwrite(rows=ROWS.slice(0, 2))])
    assert _ids(_agree(spark_engine, store, ref)) == [1, 2]
    assert _commit_kinds(store, ref)[max(_snapshot_ids(store, ref))] == "OVERWRITE"
    _agree_facts(spark_engine, store, ref)
    _assert_valid(store, ref, spark_engine)


@LOCAL_ONLY
def test_update_gap_in_a_shared_session(spark_engine, store):
    """UPDATE runs on Paimon tables unless iceberg-spark-runtime 1.12's extension shares the session:
    its RewriteUpdateTableForRowLineage rule raises scala.MatchError on Paimon's SparkTable (any
    extension order). The driver says so as Unsupported, and the table is left as it was."""
    ref = _ref(store, "update")
    spark_engine.write(ref, [Create(schema=SCHEMA, properties={"primary-key": "id", "bucket": "1"}),
                             Append(rows=ROWS.slice(0, 2))])
    updated = _update(spark_engine, ref, Update(set={"amount": "0.0"}, where="id = 1"))
    assert updated == ("iceberg" not in se.started_formats())
    assert _rows(_agree(spark_engine, store, ref)) == [(1, "a", 0.0 if updated else 1.5), (2, "b", 2.5)]
    assert _snapshot_ids(store, ref) == ([1, 2] if updated else [1])
    _assert_valid(store, ref, spark_engine)


# ----------------------------------------------------------------------------------------------
# Primary-key tables
# ----------------------------------------------------------------------------------------------


@pytest.mark.rule("PAIMON-BUCKET-001")
def test_primary_key_upsert_update_delete(spark_engine, store):
    ref = _ref(store, "pk")
    spark_engine.write(
        ref,
        [
            Create(schema=SCHEMA, properties={"primary-key": "id,part", "bucket": "2", "partition": "part"}),
            Append(rows=ROWS.slice(0, 4)),
            # an upsert of id 2 and two new keys
            Append(rows=pa.table({"id": pa.array([2, 5, 6], pa.int64()), "part": ["b", "a", "b"],
                                  "amount": [20.0, 5.5, 6.5], "ts": pa.array([0, 0, 0], pa.timestamp("us", tz="UTC"))},
                                 schema=SCHEMA)),
        ],
    )
    updated = _update(spark_engine, ref, Update(set={"amount": "coalesce(amount, 0) + 100"}, where="id = 4"))
    spark_engine.write(ref, [Delete(where="id = 1")])
    got = _agree(spark_engine, store, ref)
    assert _rows(got) == [(2, "b", 20.0), (3, "a", None), (4, "b", 104.0 if updated else 4.0), (5, "a", 5.5),
                          (6, "b", 6.5)]
    facts = _agree_facts(spark_engine, store, ref)
    assert facts["primary_keys"] == ["id", "part"] and facts["partition_keys"] == ["part"]
    assert facts["bucket"] == 2 and facts["merge_engine"] == "deduplicate"
    _agree_everywhere(spark_engine, store, ref)
    _assert_valid(store, ref, spark_engine)
    with pytest.raises(Unsupported, match="copy-on-write|rewritten files"):
        spark_engine.write(ref, [Delete(where="id = 2", how="copy-on-write")])

    # Full compaction: one COMPACT snapshot, the same rows for both readers.
    spark_engine.write(ref, [Optimize()])
    assert _commit_kinds(store, ref)[max(_snapshot_ids(store, ref))] == "COMPACT"
    assert _rows(_agree(spark_engine, store, ref)) == _rows(got)
    _agree_facts(spark_engine, store, ref)
    _assert_valid(store, ref, spark_engine)


def test_partial_update_and_first_row(spark_engine, store):
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("a", pa.string()), pa.field("b", pa.string())])
    for engine_name, want in (("partial-update", [(1, "a1", "b2")]), ("first-row", [(1, "a1", None)])):
        ref = _ref(store, engine_name)
        spark_engine.write(
            ref,
            [
                Create(schema=schema, properties={"primary-key": "id", "bucket": "1", "merge-engine": engine_name}),
                Append(rows=pa.table({"id": pa.array([1], pa.int64()), "a": ["a1"], "b": pa.array([None], pa.string())},
                                     schema=schema)),
                Append(rows=pa.table({"id": pa.array([1], pa.int64()), "a": pa.array([None], pa.string()), "b": ["b2"]},
                                     schema=schema)),
            ],
        )
        got = _agree(spark_engine, store, ref)
        assert _rows(got, ("id", "a", "b")) == want, engine_name
        assert _agree_facts(spark_engine, store, ref)["merge_engine"] == engine_name
        _agree_everywhere(spark_engine, store, ref)
        _assert_valid(store, ref, spark_engine)


@pytest.mark.rule("PAIMON-INDEX-008")
def test_deletion_vectors(spark_engine, store):
    for name, props in (("dv-pk", {"primary-key": "id", "bucket": "1"}), ("dv-append", {})):
        ref = _ref(store, name)
        spark_engine.write(
            ref,
            [
                Create(schema=SCHEMA, properties={**props, "deletion-vectors.enabled": "true"}),
                Append(rows=ROWS.slice(0, 4)),
                Append(rows=ROWS.slice(4, 2)),
                Delete(where="id IN (1, 5)", how="deletion-vectors"),
            ],
        )
        updated = _update(spark_engine, ref, Update(set={"amount": "-1.0"}, where="id = 2"))
        got = _agree(spark_engine, store, ref)
        assert _rows(got) == [(2, "b", -1.0 if updated else 2.5), (3, "a", None), (4, "b", 4.0), (6, "b", 6.5)], name
        storage = store.storage(ref.uri)
        if name == "dv-append":  # the DELETE wrote a deletion vector file
            assert [p for p in storage.list("index") if p.path.rsplit("/", 1)[-1].startswith("index-")]
        else:  # each commit of a DV primary-key table is followed by the lookup compaction that makes its DVs
            kinds = _commit_kinds(store, ref)
            assert [kinds[i] for i in sorted(kinds)][:2] == ["APPEND", "COMPACT"], kinds
        _agree_everywhere(spark_engine, store, ref)
        _assert_valid(store, ref, spark_engine)


# ----------------------------------------------------------------------------------------------
# Tags, branches, time, expiry
# ----------------------------------------------------------------------------------------------


@pytest.mark.rule("PAIMON-SNAP-015")
def test_tags_branches_timestamps_expiry(spark_engine, store):
    ref = _ref(store, "refs")
    spark_engine.write(ref, [Create(schema=SCHEMA, properties={"primary-key": "id", "bucket": "1"}),
                             Append(rows=ROWS.slice(0, 2))])
    time.sleep(0.05)
    cut = time.time()
    time.sleep(0.05)
    spark_engine.write(
        ref,
        [
            Append(rows=ROWS.slice(2, 2)),
            CreateRef(name="first", kind="tag", version=1),
            CreateRef(name="dev", kind="branch", version=None),
            Append(rows=ROWS.slice(4, 1), branch="dev"),
            Delete(where="id = 2"),
        ],
    )
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(cut)) + f".{int(cut * 1000) % 1000:03d}Z"
    assert _ids(_agree(spark_engine, store, ref, timestamp=stamp, reference={"timestamp": stamp})) == [1, 2]
    assert _ids(_agree(spark_engine, store, ref, ref="first", reference={"tag": "first"})) == [1, 2]
    assert _ids(_agree(spark_engine, store, ref, ref="dev", reference={"branch": "dev"})) == [1, 2, 3, 4, 5]
    assert _ids(_agree(spark_engine, store, ref)) == [1, 3, 4]
    assert _agree_facts(spark_engine, store, ref, ref="first", reference={"tag": "first"})["snapshot_id"] == 1
    _agree_facts(spark_engine, store, ref, ref="dev", reference={"branch": "dev"})
    _agree_facts(spark_engine, store, ref, timestamp=stamp, reference={"timestamp": stamp})
    with pytest.raises(InvalidTable):
        spark_engine.read(ref, ref="nope")
    # The branch was made from a tag (paimon-spark 0.9's create_branch takes no snapshot): the
    # helper tag is gone from main, the branch keeps its copy.
    storage = store.storage(ref.uri)
    assert [p.path.rsplit("/", 1)[-1] for p in storage.list("tag")] == ["tag-first"]
    _assert_valid(store, ref, spark_engine)

    spark_engine.write(ref, [ExpireSnapshots(retain_last=1)])
    assert _snapshot_ids(store, ref) == [max(_snapshot_ids(store, ref))]
    assert _ids(_agree(spark_engine, store, ref)) == [1, 3, 4]
    assert _ids(_agree(spark_engine, store, ref, ref="first", reference={"tag": "first"})) == [1, 2]  # a tag keeps its snapshot
    with pytest.raises(InvalidTable):
        spark_engine.read(ref, at=2)  # expired
    _agree_facts(spark_engine, store, ref, ref="first", reference={"tag": "first"})
    _assert_valid(store, ref, spark_engine)


def test_timestamp_before_the_first_snapshot(spark_engine, store):
    """A disagreement pinned on both sides: for an instant before the earliest snapshot the reference
    (like Java's ``earlierOrEqualTimeMills``, which finds none) refuses the read, while paimon-spark
    0.9's ``scan.timestamp-millis`` falls back to reading the earliest snapshot."""
    table, _ = _reference()
    ref = _ref(store, "early")
    spark_engine.write(ref, [Create(schema=SCHEMA), Append(rows=ROWS.slice(0, 2)), Append(rows=ROWS.slice(2, 2))])
    early = "2001-01-01T00:00:00Z"
    with pytest.raises(InvalidTable):
        table.read_table(store.storage(ref.uri), timestamp=early)
    assert _ids(spark_engine.read(ref, timestamp=early)) == [1, 2]  # snapshot 1, not an error
    with pytest.raises(InvalidTable):
        spark_engine.describe(ref, timestamp=early)  # the driver's own selection follows the facts' definition


# ----------------------------------------------------------------------------------------------
# Schema evolution and what Spark cannot write (storage-agnostic: local disk only)
# ----------------------------------------------------------------------------------------------

@LOCAL_ONLY
@pytest.mark.rule("PAIMON-SCHEMA-007", "PAIMON-SCHEMA-015")
def test_schema_evolution(spark_engine, store):
    ref = _ref(store, "evolve")
    small = pa.schema([pa.field("id", pa.int32(), nullable=False), pa.field("part", pa.string()),
                       pa.field("v", pa.float32())])
    first = pa.table({"id": pa.array([1, 2], pa.int32()), "part": ["a", "b"], "v": pa.array([0.5, 1.5], pa.float32())},
                     schema=small)
    spark_engine.write(
        ref,
        [
            Create(schema=small),
            Append(rows=first),
            AddColumn(field=pa.field("note", pa.string())),
            RenameColumn(old="v", new="value"),
            ChangeColumnType(name="id", type=pa.int64()),
            ChangeColumnType(name="value", type=pa.float64()),
            MoveColumn(name="note", after=None),
            Append(rows=pa.table({"note": ["n"], "id": pa.array([3], pa.int64()), "part": ["c"], "value": [2.5]})),
            DropColumn(name="part"),
            SetProperties(properties={"snapshot.num-retained.max": "50"}),
            Append(rows=pa.table({"note": ["m"], "id": pa.array([4], pa.int64()), "value": [3.5]})),
        ],
    )
    got = _agree(spark_engine, store, ref)
    assert got.column_names == ["note", "id", "value"]
    assert got.schema.field("id").type == pa.int64() and got.schema.field("value").type == pa.float64()
    assert sorted(got.column("id").to_pylist()) == [1, 2, 3, 4]
    facts = _agree_facts(spark_engine, store, ref)
    assert facts["options"]["snapshot.num-retained.max"] == "50" and facts["schema_id"] >= 6
    _agree_everywhere(spark_engine, store, ref)
    _assert_valid(store, ref, spark_engine)

    with pytest.raises(Unsupported, match="partition keys are fixed"):
        spark_engine.write(ref, [SetPartitioning(partition_by=("id",))])
    with pytest.raises(Unsupported, match="row kinds|rowkind"):
        spark_engine.write(ref, [WriteChanges(rows=first.slice(0, 1), kinds=("-D",))])
    with pytest.raises(Unsupported, match="values only"):
        spark_engine.write(_ref(store, "bad"), [Create(schema=small, partition_by=("bucket(2, id)",))])


@LOCAL_ONLY
def test_broken_tables_are_invalid(spark_engine, store):
    """Paimon's refusal of a table whose files are gone or garbled is InvalidTable, not an engine error."""
    ref = _ref(store, "broken")
    spark_engine.write(ref, [Create(schema=SCHEMA), Append(rows=ROWS)])
    storage = store.storage(ref.uri)
    data = [p.path for p in storage.walk("") if p.path.rsplit("/", 1)[-1].startswith("data-")]
    assert data
    storage.delete(data[0])
    with pytest.raises(InvalidTable):
        spark_engine.read(ref)

    garbled = _ref(store, "garbled")
    spark_engine.write(garbled, [Create(schema=SCHEMA), Append(rows=ROWS)])
    g = store.storage(garbled.uri)
    g.write_atomic("snapshot/snapshot-1", b"{ not json")
    with pytest.raises(InvalidTable):
        spark_engine.read(garbled)

    with pytest.raises(InvalidTable):
        spark_engine.read(_ref(store, "nothing-here"))


@LOCAL_ONLY
def test_optimize_append_table_is_no_silent_noop(spark_engine, store):
    """paimon-spark 0.9's CALL sys.compact commits nothing on a bucket-unaware append table (any
    compaction.min.file-num): the step says Unsupported instead of leaving a table that looks compacted."""
    ref = _ref(store, "append-compact")
    spark_engine.write(ref, [Create(schema=SCHEMA), Append(rows=ROWS.slice(0, 2)), Append(rows=ROWS.slice(2, 2))])
    with pytest.raises(Unsupported, match="made no commit"):
        spark_engine.write(ref, [Optimize()])
    assert _commit_kinds(store, ref) == {1: "APPEND", 2: "APPEND"}
    # a fixed-bucket append table compacts
    fixed = _ref(store, "append-compact-fixed")
    spark_engine.write(fixed, [Create(schema=SCHEMA, properties={"bucket": "1", "bucket-key": "id"}),
                               Append(rows=ROWS.slice(0, 2)), Append(rows=ROWS.slice(2, 2)),
                               Append(rows=ROWS.slice(4, 2)), Optimize()])
    assert _commit_kinds(store, fixed)[4] == "COMPACT"
    assert _ids(_agree(spark_engine, store, fixed)) == [1, 2, 3, 4, 5, 6]
    _assert_valid(store, fixed, spark_engine)


@LOCAL_ONLY
def test_dates_before_1582_are_shifted_by_the_writer(spark_engine, store):
    """A writer finding pinned: paimon-spark 0.9 turns Spark's proleptic-Gregorian DATE '0001-01-01'
    into 0000-12-30 in the file (days -719164, not -719162) and shifts TIMESTAMP likewise by two days:
    it converts through java.sql.Date/Timestamp (the hybrid Julian calendar). Dates after 1582 are exact."""
    import pyarrow.parquet as pq

    ref = _ref(store, "old-dates")
    schema = pa.schema([pa.field("id", pa.int32()), pa.field("d", pa.date32())])
    rows = pa.table({"id": pa.array([1, 2], pa.int32()),
                     "d": pa.array([-719162, 19000], pa.date32())}, schema=schema)  # 0001-01-01, 2022-01-08
    spark_engine.write(ref, [Create(schema=schema), Append(rows=rows)])
    storage = store.storage(ref.uri)
    data = [p.path for p in storage.walk("") if p.path.rsplit("/", 1)[-1].startswith("data-")]
    written = pq.read_table(storage.uri(data[0]).replace("file://", "")).column("d").cast(pa.int32()).to_pylist()
    assert sorted(written) == [-719164, 19000]

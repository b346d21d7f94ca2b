"""Iceberg in the engine adapters: pyiceberg (reader and writer), pyiceberg-core, DuckDB, Polars, Daft.

Each reader reads small Iceberg tables written by PyIceberg (through the ``pyiceberg`` adapter's
writer) and, when it is importable, by the reference writer, on local disk and on MinIO: the latest
rows, every version of the kit's numbering, tags and branches, timestamps, and the declared gaps
(a gap must surface as ``Unsupported``, never as wrong rows). ``iceberg_facts`` is checked on
hand-written metadata. Known engine disagreements are strict xfails naming the spec sentence, so a
fixed engine turns them into failures to triage.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import re
import time

import pyarrow as pa
import pytest

from conformance import model as M
from conformance.compare import compare
from conformance.formats.iceberg import facts as F
from conformance.engines.base import REF_TRAVEL, TIME_TRAVEL, TIMESTAMP_TRAVEL
from conformance.engines.reference import ReferenceEngine
from conformance.findings import deviation_reason
from conformance.engines.registry import builtin_names, load_engines
from conformance.model import TableRef
from reference_impl.errors import InvalidTable, Unsupported

pytest.importorskip("pyiceberg")

READERS = ["pyiceberg", "pyiceberg-core", "duckdb", "polars", "daft"]
SCHEMA = pa.schema([pa.field("id", pa.int64()), pa.field("v", pa.int32()), pa.field("ts", pa.timestamp("us"))])


def rows(ids, bump: dict[int, int] | None = None) -> pa.Table:
    bump = bump or {}
    return pa.table(
        {
            "id": ids,
            "v": [i * 10 + bump.get(i, 0) for i in ids],
            "ts": [dt.datetime(2024, 1, 1 + i % 28, i % 24) for i in ids],
        },
        schema=SCHEMA,
    )


def ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def same(got: pa.Table, want: pa.Table) -> None:
    c = compare(got, want)
    assert c.equal, c.diff


@pytest.fixture(scope="module")
def engines():
    found = {e.name: e for e in load_engines(READERS)}
    yield found
    for e in found.values():
        e.close()


@pytest.fixture(params=READERS)
def engine(request, engines):
    e = engines[request.param]
    reason = e.available()
    if reason:
        pytest.skip(reason)
    return e


def _lacks(engine, feature: str) -> bool:
    return bool(engine.capabilities().missing_read_features("iceberg", [feature]))


# ----------------------------------------------------------------------------------------------
# A history written by PyIceberg
# ----------------------------------------------------------------------------------------------


class History:
    """A pyiceberg-written table: rows per version, refs, and timestamps between commits."""

    def __init__(self, table: TableRef) -> None:
        self.table = table
        self.versions: dict[int, pa.Table] = {}
        self.refs: dict[str, pa.Table] = {}
        self.stamps: list[tuple[str, int]] = []  # (ISO time after a commit, version then current)
        self.missing: list[int] = []


def _stamp() -> str:
    time.sleep(0.005)  # commit times are milliseconds: keep the stamps strictly between commits
    out = dt.datetime.now(dt.timezone.utc).isoformat()
    time.sleep(0.005)
    return out


def write_history(table: TableRef, pyiceberg) -> History:
    h = History(table)
    h.versions[0] = rows([])
    pyiceberg.write(table, [M.Create(schema=SCHEMA, partition_by=("bucket(4, id)", "day(ts)"))])
    pyiceberg.write(table, [M.Append(rows=rows([1, 2, 3]))])
    h.versions[1] = rows([1, 2, 3])
    h.stamps.append((_stamp(), 1))
    pyiceberg.write(table, [M.Append(rows=rows([4, 5]), files=2)])
    h.versions[2] = rows([1, 2, 3, 4, 5])
    h.stamps.append((_stamp(), 2))
    pyiceberg.write(table, [M.Delete(where="id = 2"), M.CreateRef(name="t1", kind="tag", version=2),
                            M.CreateRef(name="b1", kind="branch")])
    h.versions[3] = rows([1, 3, 4, 5])
    h.stamps.append((_stamp(), 3))
    pyiceberg.write(table, [M.Append(rows=rows([9]), branch="b1")])  # sequence number 4, off main
    h.missing.append(4)
    pyiceberg.write(table, [M.Update(set={"v": "v + 1"}, where="id >= 4")])
    h.versions[5] = rows([1, 3, 4, 5], bump={4: 1, 5: 1})
    h.stamps.append((_stamp(), 5))
    h.refs = {"t1": h.versions[2], "b1": rows([1, 3, 4, 5, 9]), "main": h.versions[5]}
    return h


@pytest.fixture(scope="module")
def history(tmp_path_factory, engines) -> History:
    if engines["pyiceberg"].available():
        pytest.skip(engines["pyiceberg"].available())
    return write_history(TableRef(format="iceberg", uri=str(tmp_path_factory.mktemp("ice") / "t")), engines["pyiceberg"])


# ----------------------------------------------------------------------------------------------
# Registry and capabilities
# ----------------------------------------------------------------------------------------------


def test_readers_registered(engines):
    assert set(READERS) <= set(builtin_names())
    for name in READERS:
        e = engines[name]
        if e.available() is None:
            assert "iceberg" in e.capabilities().read, name
            assert e.version() and "not installed" not in e.version().split(" (")[0]
    assert engines["pyiceberg"].roles() == ["reader", "writer"]
    assert engines["pyiceberg-core"].roles() == ["reader"]


@pytest.mark.parametrize(
    "name, feature",
    [
        ("pyiceberg", F.EQUALITY_DELETES), ("polars", F.EQUALITY_DELETES), ("daft", F.EQUALITY_DELETES),
        ("daft", F.DELETION_VECTORS), ("pyiceberg-core", TIME_TRAVEL), ("pyiceberg-core", REF_TRAVEL),
        ("pyiceberg-core", TIMESTAMP_TRAVEL),
    ],
)
def test_declared_gaps_have_reasons(engines, name, feature):
    caps = engines[name].capabilities()
    assert caps.missing_read_features("iceberg", [feature]) == [feature]
    assert "does not declare" not in caps.reason("iceberg", feature)


def test_duckdb_timestamp_gap_is_delta_only(engines):
    caps = engines["duckdb"].capabilities()
    assert caps.missing_read_features("delta", [TIMESTAMP_TRAVEL]) == [TIMESTAMP_TRAVEL]
    assert caps.missing_read_features("iceberg", [TIMESTAMP_TRAVEL]) == []


# ----------------------------------------------------------------------------------------------
# Reading a PyIceberg-written table
# ----------------------------------------------------------------------------------------------


@pytest.mark.rule("ICEBERG-SCAN-001")
def test_reads_latest(engine, history):
    same(engine.read(history.table), history.versions[5])


def test_reads_file_uri_and_projects(engine, history):
    table = TableRef(format="iceberg", uri="file://" + history.table.uri)
    same(engine.read(table, columns=["id"]), history.versions[5].select(["id"]))


@pytest.mark.rule("ICEBERG-SNAP-002")
def test_reads_every_version(engine, history):
    for version, want in history.versions.items():
        if _lacks(engine, TIME_TRAVEL) and version not in (0, max(history.versions)):
            with pytest.raises(Unsupported):
                engine.read(history.table, at=version)
            continue
        same(engine.read(history.table, at=version), want)


def test_version_off_main_or_unknown_is_invalid(engine, history):
    for version in history.missing + [99]:
        with pytest.raises(InvalidTable):
            engine.read(history.table, at=version)


@pytest.mark.rule("ICEBERG-META-039", "ICEBERG-META-040")
def test_reads_tags_and_branches(engine, history):
    for ref, want in history.refs.items():
        if _lacks(engine, REF_TRAVEL) and ref != "main":
            with pytest.raises(Unsupported):
                engine.read(history.table, ref=ref)
            continue
        same(engine.read(history.table, ref=ref), want)
    if not _lacks(engine, REF_TRAVEL):
        with pytest.raises(InvalidTable):
            engine.read(history.table, ref="no-such-ref")


@pytest.mark.rule("ICEBERG-SNAP-015")
def test_reads_as_of_timestamps(engine, history):
    for stamp, version in history.stamps:
        if _lacks(engine, TIMESTAMP_TRAVEL):
            with pytest.raises(Unsupported):
                engine.read(history.table, timestamp=stamp)
            continue
        same(engine.read(history.table, timestamp=stamp), history.versions[version])


@pytest.mark.rule("ICEBERG-SNAP-015")
def test_timestamp_before_first_snapshot_is_an_error(engine, history):
    if _lacks(engine, TIMESTAMP_TRAVEL):
        pytest.skip("declares no timestamp travel")
    if engine.name == "duckdb":
        # DuckDB 1.5.5 returns no rows before the first snapshot. The spec's error is a SHOULD ('If no
        # snapshot exists prior to the timestamp given ... systems should raise an informative error'),
        # so no rows is the lenient answer the corpus allows too (iceberg/v2-timestamp-bounds).
        assert engine.read(history.table, timestamp="2000-01-01T00:00:00+00:00").num_rows == 0
        return
    with pytest.raises(InvalidTable):
        engine.read(history.table, timestamp="2000-01-01T00:00:00+00:00")


def test_missing_table_raises(engine, tmp_path):
    with pytest.raises(BaseException):
        engine.read(TableRef(format="iceberg", uri=str(tmp_path / "nothing")))


# ----------------------------------------------------------------------------------------------
# Tables written by the reference writer: every delete mechanism
# ----------------------------------------------------------------------------------------------

MECHANISMS = [("copy-on-write", "2", None), ("position-deletes", "2", F.POSITION_DELETES),
              ("equality-deletes", "2", F.EQUALITY_DELETES), ("deletion-vectors", "3", F.DELETION_VECTORS)]


@pytest.fixture(scope="module")
def reference_tables(tmp_path_factory):
    writer = pytest.importorskip("reference_impl.iceberg.writer")
    from reference_impl.storage import open_storage

    out = {}
    base = tmp_path_factory.mktemp("ref")
    for how, fv, _feature in MECHANISMS:
        loc = str(base / how)
        st = open_storage(loc)
        writer.create_table(st, SCHEMA, partition_by=("bucket(2, id)",), properties={"format-version": fv})
        writer.append(st, rows([1, 2, 3, 4]))
        writer.delete(st, "id = 2", how=how)
        writer.append(st, rows([2]))  # a later commit: no delete of sequence number 2 may hide it
        out[how] = TableRef(format="iceberg", uri=loc)
    return out


@pytest.mark.rule("ICEBERG-DELETE-010", "ICEBERG-DELETE-015", "ICEBERG-DV-012")
@pytest.mark.parametrize("how, fv, feature", MECHANISMS, ids=[m[0] for m in MECHANISMS])
def test_reads_reference_deletes_or_declares_the_gap(engine, reference_tables, how, fv, feature):
    table = reference_tables[how]
    want = rows([1, 2, 3, 4])
    if feature is not None and _lacks(engine, feature):
        # A declared gap must be an error, never the deleted rows back.
        with pytest.raises(BaseException) as err:
            engine.read(table)
        assert not isinstance(err.value, (KeyboardInterrupt, SystemExit))
        return
    same(engine.read(table), want)
    if not _lacks(engine, TIME_TRAVEL):
        same(engine.read(table, at=1), want)


# ----------------------------------------------------------------------------------------------
# MinIO
# ----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minio_tables(tmp_path_factory, engines):
    from conformance.storage.testing import minio_or_skip
    from conformance.storage.s3_options import object_store_options

    server = minio_or_skip(str(tmp_path_factory.mktemp("minio")))
    try:
        opts = object_store_options(server.s3_config)
        out = {}
        t = TableRef(format="iceberg", uri=f"s3://{server.bucket}/pyiceberg-t", storage_options=opts)
        engines["pyiceberg"].write(t, [
            M.Create(schema=SCHEMA, partition_by=("bucket(2, id)",)), M.Append(rows=rows([1, 2, 3])),
            M.Delete(where="id = 2"), M.CreateRef(name="t1", kind="tag", version=1),
        ])
        out["pyiceberg"] = t
        try:
            from reference_impl.iceberg import writer
            from reference_impl.storage import open_storage
        except ImportError:
            writer = None
        if writer is not None:
            r = TableRef(format="iceberg", uri=f"s3://{server.bucket}/reference-t", storage_options=opts)
            st = open_storage(r.uri, s3=server.s3_config)
            writer.create_table(st, SCHEMA, partition_by=("day(ts)",))
            writer.append(st, rows([1, 2, 3]))
            writer.delete(st, "id = 2")
            writer.create_ref(st, "t1", "tag", version=1)
            out["reference"] = r
        yield out
    finally:
        server.stop()


@pytest.mark.rule("ICEBERG-SCAN-001", "ICEBERG-META-039")
@pytest.mark.parametrize("writer", ["pyiceberg", "reference"])
def test_reads_on_minio(engine, minio_tables, writer):
    if writer not in minio_tables:
        pytest.skip(f"{writer} writer not importable")
    table = minio_tables[writer]
    same(engine.read(table), rows([1, 3]))
    same(engine.read(table, at=0), rows([]))
    if _lacks(engine, TIME_TRAVEL):
        with pytest.raises(Unsupported):
            engine.read(table, at=1)
    else:
        same(engine.read(table, at=1), rows([1, 2, 3]))
    if not _lacks(engine, REF_TRAVEL):
        same(engine.read(table, ref="t1"), rows([1, 2, 3]))


def test_facts_on_minio(minio_tables, engines):
    table = minio_tables["pyiceberg"]
    assert F.metadata_location(table).startswith(table.uri + "/metadata/")
    assert engines["pyiceberg"].describe(table)["refs"] == {"main": "branch", "t1": "tag"}


# ----------------------------------------------------------------------------------------------
# The pyiceberg writer
# ----------------------------------------------------------------------------------------------


@pytest.mark.rule("ICEBERG-COMMIT-009", "ICEBERG-GEN-010", "ICEBERG-SNAP-008")
def test_pyiceberg_writes_one_snapshot_per_step(history):
    md = F.load_metadata(history.table)
    assert md["location"] == "file://" + os.path.abspath(history.table.uri)
    names = os.listdir(os.path.join(history.table.uri, "metadata"))
    assert all(re.match(r"^\d{5}-[0-9a-f-]{36}\.metadata\.json$", n) for n in names if n.endswith(".metadata.json"))
    by_seq = {s["sequence-number"]: s["summary"]["operation"] for s in md["snapshots"]}
    # id 2 sits alone in its day partition: its file goes whole (a "delete"); the update rewrites (an "overwrite").
    assert by_seq == {1: "append", 2: "append", 3: "delete", 4: "append", 5: "overwrite"}


def test_pyiceberg_describe_agrees_with_metadata_json(history, engines):
    got = engines["pyiceberg"].describe(history.table)
    assert got == F.facts_from_metadata(F.load_metadata(history.table))
    assert got["partition_spec"] == ["bucket(4, id)", "day(ts)"]
    assert got["refs"] == {"main": "branch", "t1": "tag", "b1": "branch"}
    assert got["format_version"] == 2 and got["operation"] == "overwrite"
    assert engines["pyiceberg"].describe(history.table, at=1)["operation"] == "append"


@pytest.mark.rule("ICEBERG-PART-033", "ICEBERG-PART-032")
def test_pyiceberg_v1_table(tmp_path, engines):
    table = TableRef(format="iceberg", uri=str(tmp_path / "v1"))
    e = engines["pyiceberg"]
    e.write(table, [
        M.Create(schema=SCHEMA, partition_by=("id",), properties={"format-version": "1"}),
        M.Append(rows=rows([1, 2])), M.Delete(where="id = 1"),
        M.SetPartitioning(partition_by=("day(ts)",)), M.Append(rows=rows([3])),
    ])
    md = F.load_metadata(table)
    assert md["format-version"] == 1 and all("sequence-number" not in s for s in md["snapshots"])
    assert [ids(e.read(table, at=v)) for v in (0, 1, 2, 3)] == [[], [1, 2], [2], [2, 3]]
    # v1 evolution keeps the old field as void (the spec's rule for v1) and adds the new one.
    assert e.describe(table)["partition_spec"] == ["void(id)", "day(ts)"]
    # PyIceberg cannot write into a v1 spec holding a void field and a new field of the same column.
    with pytest.raises(Unsupported) as err:
        e.write(table, [M.SetPartitioning(partition_by=("day(ts)", "bucket(2, id)")), M.Append(rows=rows([4]))])
    assert err.value.feature == "partition-spec"


@pytest.mark.rule("ICEBERG-EVOL-001", "ICEBERG-EVOL-010")
def test_pyiceberg_schema_steps(tmp_path, engines):
    table = TableRef(format="iceberg", uri=str(tmp_path / "evol"))
    e = engines["pyiceberg"]
    e.write(table, [
        M.Create(schema=SCHEMA), M.Append(rows=rows([1])),
        M.AddColumn(field=pa.field("x", pa.int32())), M.RenameColumn(old="v", new="w"),
        M.ChangeColumnType(name="x", type=pa.int64()), M.MoveColumn(name="x", after=None),
        M.DropColumn(name="ts"), M.SetProperties(properties={"k": "v"}),
    ])
    latest = e.read(table)
    assert latest.column_names == ["x", "id", "w"] and latest.schema.field("x").type == pa.int64()
    assert e.read(table, at=1).column_names == ["id", "v", "ts"]  # the snapshot's schema
    facts = e.describe(table)
    assert facts["schema_id"] == 5 and facts["properties"] == {"k": "v"}
    assert e.describe(table, at=1)["schema_id"] == 0


def test_pyiceberg_overwrite_with_a_new_schema(tmp_path, engines):
    table = TableRef(format="iceberg", uri=str(tmp_path / "ow"))
    e = engines["pyiceberg"]
    new = pa.table({"id": pa.array([7], pa.int64()), "name": ["seven"]})
    e.write(table, [M.Create(schema=SCHEMA), M.Append(rows=rows([1, 2])), M.Overwrite(rows=new)])
    same(e.read(table), new)
    same(e.read(table, at=1), rows([1, 2]))
    assert [s["summary"]["operation"] for s in F.load_metadata(table)["snapshots"]] == ["append", "overwrite"]


@pytest.mark.parametrize(
    "steps, feature",
    [
        ([M.Create(schema=SCHEMA, properties={"format-version": "3"})], F.FORMAT_V3),
        ([M.Create(schema=SCHEMA), M.Append(rows=rows([1])), M.Delete(where="id = 1", how="position-deletes")], "position-deletes"),
        ([M.Create(schema=SCHEMA, properties={"write.delete.mode": "merge-on-read"}), M.Append(rows=rows([1])),
          M.Delete(where="id = 1")], F.POSITION_DELETES),
        ([M.Create(schema=SCHEMA), M.Optimize()], "Optimize"),
        ([M.Create(schema=SCHEMA), M.Append(rows=rows([1])), M.Delete(where="id % 2 = 0")], "predicate"),
    ],
    ids=["v3", "delete-how", "merge-on-read", "optimize", "predicate"],
)
def test_pyiceberg_refuses_what_it_cannot_write(tmp_path, engines, steps, feature):
    with pytest.raises(Unsupported) as err:
        engines["pyiceberg"].write(TableRef(format="iceberg", uri=str(tmp_path / "t")), steps)
    assert err.value.feature == feature


@pytest.mark.rule("ICEBERG-REF-008", "ICEBERG-META-032")
def test_pyiceberg_expire_snapshots_keeps_refs(tmp_path, engines):
    table = TableRef(format="iceberg", uri=str(tmp_path / "exp"))
    e = engines["pyiceberg"]
    e.write(table, [M.Create(schema=SCHEMA)] + [M.Append(rows=rows([i])) for i in (1, 2, 3, 4)]
            + [M.CreateRef(name="keep", kind="tag", version=2), M.ExpireSnapshots(retain_last=1)])
    md = F.load_metadata(table)
    assert sorted(s["sequence-number"] for s in md["snapshots"]) == [2, 4]
    same(e.read(table, ref="keep"), rows([1, 2]))
    for gone in (1, 3):
        with pytest.raises(InvalidTable):
            e.read(table, at=gone)


@pytest.mark.rule("ICEBERG-META-034")
@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="finding: pyiceberg 0.12 expire_snapshots removes only the expired snapshots' own snapshot-log entries; "
    "spec (snapshot-log): 'When snapshots are expired from the list of valid snapshots, all entries before a "
    "snapshot that has expired should be removed.' A time-travel read between the kept tag and an expired "
    "snapshot then resolves to the tag's older state instead of failing.",
)
def test_pyiceberg_expiry_trims_the_snapshot_log(tmp_path, engines):
    table = TableRef(format="iceberg", uri=str(tmp_path / "exp-log"))
    e = engines["pyiceberg"]
    e.write(table, [M.Create(schema=SCHEMA)] + [M.Append(rows=rows([i])) for i in (1, 2, 3)]
            + [M.CreateRef(name="keep", kind="tag", version=1), M.ExpireSnapshots(retain_last=1)])
    md = F.load_metadata(table)
    kept = {s["snapshot-id"] for s in md["snapshots"]}
    log = [entry["snapshot-id"] for entry in md["snapshot-log"]]
    assert len(log) == 1 and log[0] in kept  # everything up to the last expired entry is gone


# ----------------------------------------------------------------------------------------------
# Engine disagreements found while writing the adapters (strict xfails: a fix must be triaged)
# ----------------------------------------------------------------------------------------------


def _rust_panic() -> type[BaseException]:
    """pyo3's PanicException (a BaseException), the class a Rust panic reaches Python as."""
    try:
        from polars.exceptions import PanicException
    except ImportError:  # polars absent: the test skips before anything could panic
        return BaseException
    return PanicException


@pytest.mark.rule("ICEBERG-SNAP-009")
@pytest.mark.xfail(
    strict=True,
    raises=_rust_panic(),
    reason=deviation_reason("polars-old-snapshot-read-with-current-schema", "polars"),
)
def test_polars_reads_a_snapshot_older_than_a_schema_change(tmp_path, engines):
    if engines["polars"].available():
        pytest.skip(engines["polars"].available())
    table = TableRef(format="iceberg", uri=str(tmp_path / "pol"))
    engines["pyiceberg"].write(table, [M.Create(schema=SCHEMA), M.Append(rows=rows([1])),
                                       M.AddColumn(field=pa.field("x", pa.int32()))])
    same(engines["polars"].read(table, at=1), rows([1]))


@pytest.mark.rule("ICEBERG-PART-033")
@pytest.mark.xfail(
    strict=True,
    raises=InvalidTable,
    reason=deviation_reason("v1-partition-field-without-field-id-refused", "pyiceberg-core"),
)
def test_pyiceberg_core_reads_v1_void_partition(tmp_path, engines):
    if engines["pyiceberg-core"].available():
        pytest.skip(engines["pyiceberg-core"].available())
    table = TableRef(format="iceberg", uri=str(tmp_path / "void"))
    # The reference writes the v1 evolution as the spec says (the old field becomes void under its
    # old name); pyiceberg 0.12 refuses to write into that spec at all.
    ReferenceEngine().write(table, [
        M.Create(schema=SCHEMA, partition_by=("id",), properties={"format-version": "1"}), M.Append(rows=rows([1])),
        M.SetPartitioning(partition_by=("bucket(2, id)",)), M.Append(rows=rows([2])),
    ])
    same(engines["pyiceberg-core"].read(table), rows([1, 2]))


# ----------------------------------------------------------------------------------------------
# iceberg_facts on hand-written metadata
# ----------------------------------------------------------------------------------------------


def _snap(sid, seq, parent=None, ts=1000, op="append", schema_id=0):
    s = {"snapshot-id": sid, "timestamp-ms": ts, "summary": {"operation": op}, "manifest-list": "x", "schema-id": schema_id}
    if seq is not None:
        s["sequence-number"] = seq
    if parent is not None:
        s["parent-snapshot-id"] = parent
    return s


def _metadata(fv=2, snapshots=(), current=None, log=(), refs=None, **extra):
    md = {
        "format-version": fv, "table-uuid": "u", "location": "file:///x", "last-updated-ms": 1,
        "last-column-id": 2, "current-schema-id": 0,
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": False, "type": "long"},
            {"id": 2, "name": "ts", "required": False, "type": "timestamp"}]}],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": [
            {"source-id": 1, "field-id": 1000, "name": "b", "transform": "bucket[16]"},
            {"source-id": 2, "field-id": 1001, "name": "d", "transform": "day"}]}],
        "properties": {"a": "1"}, "snapshots": list(snapshots), "current-snapshot-id": current,
        "snapshot-log": [{"snapshot-id": s, "timestamp-ms": t} for s, t in log],
    }
    if refs is not None:
        md["refs"] = refs
    md.update(extra)
    return md


def _put(root, name, md, gz=False):
    os.makedirs(os.path.join(root, "metadata"), exist_ok=True)
    data = json.dumps(md).encode()
    with open(os.path.join(root, "metadata", name), "wb") as fh:
        fh.write(gzip.compress(data) if gz else data)


@pytest.mark.rule("ICEBERG-COMMIT-008", "ICEBERG-COMMIT-009", "ICEBERG-COMMIT-010")
def test_facts_current_metadata_file(tmp_path):
    root = str(tmp_path / "t")
    table = TableRef(format="iceberg", uri=root)
    _put(root, "v1.metadata.json", _metadata())
    _put(root, "v2.metadata.json", _metadata(fv=1))
    assert F.metadata_location(table) == f"file://{root}/metadata/v2.metadata.json"
    with open(os.path.join(root, "metadata", "version-hint.text"), "w") as fh:
        fh.write("1\n")
    # A lagging hint is a starting point: the commit is the creation of v<N+1>, so readers probe up.
    assert F.metadata_location(table).endswith("/v2.metadata.json")
    with open(os.path.join(root, "metadata", "version-hint.text"), "w") as fh:
        fh.write("7")
    assert F.metadata_location(table).endswith("/v2.metadata.json")  # a dangling hint falls back to listing
    _put(root, "v3.gz.metadata.json", _metadata(fv=3), gz=True)
    assert F.load_metadata(table)["format-version"] == 3
    other = str(tmp_path / "c")
    _put(other, "00001-00000000-0000-0000-0000-000000000001.metadata.json", _metadata())
    _put(other, "00001-00000000-0000-0000-0000-000000000002.metadata.json", _metadata())
    with pytest.raises(InvalidTable, match="only the catalog"):
        F.metadata_location(TableRef(format="iceberg", uri=other))
    with pytest.raises(InvalidTable):
        F.metadata_location(TableRef(format="iceberg", uri=str(tmp_path / "empty")))


def test_facts_versions_v2_and_v1():
    chain = [_snap(11, 1, ts=100), _snap(12, 2, 11, ts=200), _snap(20, 3, 11, ts=250), _snap(13, 4, 12, ts=300)]
    md = _metadata(snapshots=chain, current=13, log=[(11, 100), (12, 200), (13, 300)], refs={
        "main": {"snapshot-id": 13, "type": "branch"}, "side": {"snapshot-id": 20, "type": "branch"}})
    assert F.select_snapshot(md, at=0) is None
    assert [F.select_snapshot(md, at=n)["snapshot-id"] for n in (1, 2, 4)] == [11, 12, 13]
    with pytest.raises(InvalidTable):
        F.select_snapshot(md, at=3)  # sequence number 3 is on the side branch
    assert F.select_snapshot(md, ref="side")["snapshot-id"] == 20
    assert F.select_snapshot(md, timestamp=260)["snapshot-id"] == 12  # the log, not the snapshot list
    with pytest.raises(InvalidTable):
        F.select_snapshot(md, timestamp=50)
    with pytest.raises(InvalidTable):
        F.select_snapshot(md, ref="nope")
    v1 = _metadata(fv=1, snapshots=[_snap(1, None), _snap(2, None, 1), _snap(3, None, 2)], current=3)
    assert [F.select_snapshot(v1, at=n)["snapshot-id"] for n in (1, 2, 3)] == [1, 2, 3]
    assert F.select_snapshot(v1, ref="main")["snapshot-id"] == 3  # main exists without refs
    expired = _metadata(fv=1, snapshots=[_snap(2, None, 1), _snap(3, None, 2)], current=3)
    with pytest.raises(InvalidTable, match="expired"):
        F.select_snapshot(expired, at=1)
    empty = _metadata(current=-1)  # Java's "no current snapshot" of v1/v2
    assert F.select_snapshot(empty) is None and F.select_snapshot(empty, ref="main") is None
    with pytest.raises(InvalidTable):
        F.select_snapshot(_metadata(snapshots=chain, current=13), timestamp=400)  # no snapshot-log at all


def test_facts_describe_keys():
    md = _metadata(snapshots=[_snap(11, 1, op="append", schema_id=0)], current=11, refs={"t": {"snapshot-id": 11, "type": "tag"}})
    assert F.facts_from_metadata(md) == {
        "format_version": 2, "partition_spec": ["bucket(16, id)", "day(ts)"], "schema_id": 0,
        "properties": {"a": "1"}, "refs": {"t": "tag", "main": "branch"}, "operation": "append",
    }
    assert F.partition_expression("truncate[4]", "s") == "truncate(4, s)"
    assert F.partition_expression("identity", "p") == "p"
    assert F.partition_expression("void", "p") == "void(p)"

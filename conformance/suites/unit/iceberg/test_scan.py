"""Scan planning (reference_impl.iceberg.scan): live files, delete scope rules, the fast manifest decoder; PyIceberg peer check.

``Builder`` (also used by test_read.py) writes small Iceberg tables with the reference's own
manifest, manifest-list and metadata writers plus the delete writers, one commit at a time.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import time
from typing import Any, Iterable, Mapping

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from reference_impl.errors import InvalidTable
from reference_impl.iceberg import avro as A
from reference_impl.iceberg import deletes as D
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import partitioning as P
from reference_impl.iceberg import scan as SC
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import transforms as X
from reference_impl.iceberg import types as T
from reference_impl.storage import LocalStorage

UUID = "6f8a2a4e-3c51-4d0c-9b0e-7d9d3e1c2b10"


def F(fid: int, name: str, t: T.IcebergType, required: bool = False, **kw: Any) -> T.NestedField:
    return T.NestedField(id=fid, name=name, type=t, required=required, **kw)


def identity(field_id: int, source: int, name: str) -> P.PartitionField:
    return P.PartitionField(source_ids=(source,), field_id=field_id, name=name, transform=X.IdentityTransform())


class Builder:
    """A table written commit by commit: data files (Parquet with field ids), manifests, manifest lists, metadata JSON."""

    def __init__(self, root, schema: T.Schema, *, spec: P.PartitionSpec | None = None, version: int = 2,
                 properties: Mapping[str, str] | None = None) -> None:
        self.st = LocalStorage(str(root))
        self.version = version
        self.schemas = [schema]
        self.current_schema_id = schema.schema_id
        self.specs = [spec or P.PartitionSpec(spec_id=0)]
        self.default_spec_id = self.specs[0].spec_id
        self.properties = dict(properties or {})
        self.snapshots: list[M.Snapshot] = []
        self.snapshot_log: list[M.SnapshotLogEntry] = []
        self.metadata_log: list[M.MetadataLogEntry] = []
        self.refs: dict[str, M.SnapshotRef] = {}
        self.current: int | None = None
        self.seq = 0
        self.next_row_id = 0 if version >= 3 else None
        self.manifests: list[MF.ManifestFile] = []  # the current snapshot's
        self.entries: dict[str, list[MF.ManifestEntry]] = {}  # manifest path -> entries with effective values
        self.n_files = 0
        self.n_meta = 0
        self.clock = 1_000_000
        self._lists: dict[int, list[MF.ManifestFile]] = {}
        self.write_metadata()

    # -- schema and specs
    @property
    def schema(self) -> T.Schema:
        return next(s for s in self.schemas if s.schema_id == self.current_schema_id)

    def spec(self, spec_id: int | None = None) -> P.PartitionSpec:
        sid = self.default_spec_id if spec_id is None else spec_id
        return next(s for s in self.specs if s.spec_id == sid)

    def set_schema(self, schema: T.Schema) -> None:
        self.schemas.append(schema)
        self.current_schema_id = schema.schema_id
        self.write_metadata()

    def set_spec(self, spec: P.PartitionSpec) -> None:
        self.specs.append(spec)
        self.default_spec_id = spec.spec_id
        self.write_metadata()

    def set_properties(self, **props: str) -> None:
        self.properties.update(props)
        self.write_metadata()

    # -- files
    def data_file(self, rows: pa.Table | Mapping[str, list], *, partition: Mapping[int, Any] | None = None, spec_id: int | None = None,
                  schema: T.Schema | None = None, ids: bool = True, raw: bool = False, name: str | None = None) -> MF.DataFile:
        """Write rows as a Parquet data file of ``schema`` (default: current) with field ids; its DataFile."""
        schema = schema or self.schema
        table = rows if isinstance(rows, pa.Table) else pa.table(rows)
        if not raw:
            fields, arrays = [], []
            for f in schema.fields:
                if f.name not in table.column_names or f.type == T.UNKNOWN:
                    continue
                af = T.to_arrow_field(f)
                arrays.append(table.column(f.name).cast(af.type))
                fields.append(af if ids else pa.field(af.name, _strip_ids(af.type), nullable=af.nullable))
            table = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
        self.n_files += 1
        path = f"data/{name or f'f{self.n_files:04d}'}.parquet"
        buf = io.BytesIO()
        pq.write_table(table, buf)
        self.st.put_if_absent(path, buf.getvalue())
        return MF.DataFile(file_path=self.st.uri(path), file_format="parquet", record_count=table.num_rows,
                           file_size_in_bytes=len(buf.getvalue()), partition=dict(partition or {}))

    def position_deletes(self, deletes: Mapping[str, Iterable[int]], *, partition: Mapping[int, Any] | None = None) -> MF.DataFile:
        self.n_files += 1
        return D.write_position_deletes(self.st, f"data/pos-{self.n_files:04d}.parquet", deletes, partition=partition)

    def dvs(self, dvs: Mapping[str, Iterable[int]], *, partitions: Mapping[str, Mapping[int, Any]] | None = None) -> list[MF.DataFile]:
        self.n_files += 1
        return D.write_dvs(self.st, f"data/dv-{self.n_files:04d}.puffin", dvs, partitions=partitions)

    def equality_deletes(self, rows: pa.Table | Mapping[str, list], ids: Iterable[int], *, partition: Mapping[int, Any] | None = None) -> MF.DataFile:
        self.n_files += 1
        table = rows if isinstance(rows, pa.Table) else pa.table(rows)
        return D.write_equality_deletes(self.st, f"data/eq-{self.n_files:04d}.parquet", table, tuple(ids), self.schema, partition=partition)

    # -- commits
    def commit(self, *, add: Iterable[MF.DataFile] = (), remove: Iterable[str] = (), deletes: Iterable[MF.DataFile] = (),
               add_specs: Mapping[str, int] | None = None, delete_specs: Mapping[int, int] | None = None,
               operation: str | None = None, branch: str | None = None) -> M.Snapshot:
        """One snapshot: ``add`` data files, ``remove`` data files by path (DELETED entries), add delete files."""
        add, deletes, remove = list(add), list(deletes), set(remove)
        v = self.version
        self.seq += 1 if v >= 2 else 0
        seq = self.seq if v >= 2 else 0
        sid = 100 + len(self.snapshots) + 1
        parent = self.current if branch is None or branch not in self.refs else self.refs[branch].snapshot_id
        base = self.manifests if branch is None else self._manifests_of(parent)
        out: list[MF.ManifestFile] = []
        first_row_id = self.next_row_id
        rows_assigned = 0
        new_manifests: list[tuple[list[MF.ManifestEntry], P.PartitionSpec, int]] = []
        for mf in base:
            es = self.entries[mf.manifest_path]
            if mf.content == MF.MANIFEST_DATA and any(e.data_file.file_path in remove for e in es if e.is_live):
                kept = []
                for e in es:
                    if not e.is_live:
                        continue
                    st = MF.DELETED if e.data_file.file_path in remove else MF.EXISTING
                    kept.append(dataclasses.replace(e, status=st, snapshot_id=sid if st == MF.DELETED else e.snapshot_id))
                new_manifests.append((kept, self.spec(mf.partition_spec_id), MF.MANIFEST_DATA))
            else:
                out.append(mf)
        by_spec: dict[int, list[MF.DataFile]] = {}
        for f in add:
            by_spec.setdefault((add_specs or {}).get(f.file_path, self.default_spec_id), []).append(f)
        for spec_id, files in by_spec.items():
            new_manifests.append(([MF.ManifestEntry(status=MF.ADDED, data_file=f, snapshot_id=sid if v == 1 else None) for f in files],
                                  self.spec(spec_id), MF.MANIFEST_DATA))
        dby_spec: dict[int, list[MF.DataFile]] = {}
        for i, f in enumerate(deletes):
            dby_spec.setdefault((delete_specs or {}).get(i, self.default_spec_id), []).append(f)
        for spec_id, files in dby_spec.items():
            new_manifests.append(([MF.ManifestEntry(status=MF.ADDED, data_file=f) for f in files], self.spec(spec_id), MF.MANIFEST_DELETES))
        fresh = []
        for es, spec, content in new_manifests:
            mfr = None
            if v >= 3 and content == MF.MANIFEST_DATA:
                mfr = first_row_id + rows_assigned
                rows_assigned += sum(e.data_file.record_count for e in es if e.is_live and e.data_file.first_row_id is None)
            fresh.append(self._write_manifest(es, spec, content, sid, seq, mfr))
        if v >= 3:
            # Older manifests without first_row_id get one too (Row Lineage for Upgraded Tables).
            for i, mf in enumerate(out):
                if mf.content == MF.MANIFEST_DATA and mf.first_row_id is None:
                    es = self.entries[mf.manifest_path]
                    out[i] = dataclasses.replace(mf, first_row_id=first_row_id + rows_assigned)
                    rows_assigned += sum(e.data_file.record_count for e in es if e.is_live and e.data_file.first_row_id is None)
        mfs = fresh + out
        ml = f"metadata/snap-{sid}.avro"
        self.st.put_if_absent(ml, MF.write_manifest_list(mfs, format_version=v, snapshot_id=sid, parent_snapshot_id=parent,
                                                         sequence_number=seq if v >= 2 else None,
                                                         first_row_id=first_row_id if v >= 3 else None))
        self.clock += 1000
        snap = M.Snapshot(snapshot_id=sid, parent_snapshot_id=parent, sequence_number=seq, timestamp_ms=self.clock,
                          manifest_list=self.st.uri(ml), summary={"operation": operation or ("append" if not deletes and not remove else "delete")},
                          schema_id=self.current_schema_id,
                          first_row_id=first_row_id if v >= 3 else None, added_rows=rows_assigned if v >= 3 else None)
        self.snapshots.append(snap)
        self._lists[sid] = mfs
        if v >= 3:
            self.next_row_id = first_row_id + rows_assigned
        if branch is None:
            self.current = sid
            self.manifests = mfs
            self.snapshot_log.append(M.SnapshotLogEntry(snapshot_id=sid, timestamp_ms=self.clock))
            if v >= 2:
                self.refs["main"] = M.SnapshotRef(snapshot_id=sid, type="branch")
        else:
            self.refs[branch] = M.SnapshotRef(snapshot_id=sid, type="branch")
        self.write_metadata()
        return snap

    def _manifests_of(self, sid: int | None) -> list[MF.ManifestFile]:
        return [] if sid is None else self._lists[sid]

    def tag(self, name: str, snapshot_id: int, kind: str = "tag") -> None:
        self.refs[name] = M.SnapshotRef(snapshot_id=snapshot_id, type=kind)
        self.write_metadata()

    def _write_manifest(self, es: list[MF.ManifestEntry], spec: P.PartitionSpec, content: int, sid: int, seq: int,
                        first_row_id: int | None) -> MF.ManifestFile:
        self.n_files += 1
        path = f"metadata/m{self.n_files:04d}-{sid}.avro"
        raw = MF.write_manifest(es, schema=self.schema, spec=spec, format_version=self.version, content=content)
        self.st.put_if_absent(path, raw)
        mf = MF.manifest_file_for(es, manifest_path=self.st.uri(path), manifest_length=len(raw), spec=spec, schema=self.schema,
                                  added_snapshot_id=sid, sequence_number=seq, content=content, first_row_id=first_row_id)
        # Remember entries with their effective values, as a later rewrite must write them (SEQ-006, LINEAGE-016).
        self.entries[mf.manifest_path] = list(MF.inherit_entries(es, mf, v1_manifest=self.version == 1))
        return mf

    def write_metadata(self) -> None:
        self.n_meta += 1
        md = self.metadata()
        path = f"metadata/v{self.n_meta}.metadata.json"
        self.st.put_if_absent(path, M.metadata_to_json(md).encode())
        self.st.write_atomic("metadata/version-hint.text", str(self.n_meta).encode())
        self.metadata_log.append(M.MetadataLogEntry(metadata_file=self.st.uri(path), timestamp_ms=self.clock))

    def metadata(self) -> M.TableMetadata:
        last_col = max(max((i for i, _ in T.walk_fields(s)), default=0) for s in self.schemas)
        return M.TableMetadata(
            format_version=self.version, table_uuid=UUID, location=self.st.root, last_sequence_number=self.seq,
            last_updated_ms=self.clock, last_column_id=last_col, schemas=tuple(self.schemas), current_schema_id=self.current_schema_id,
            partition_specs=tuple(self.specs), default_spec_id=self.default_spec_id,
            last_partition_id=max(s.last_assigned_field_id for s in self.specs), properties=self.properties,
            current_snapshot_id=self.current, snapshots=tuple(self.snapshots), snapshot_log=tuple(self.snapshot_log),
            metadata_log=tuple(self.metadata_log), sort_orders=(P.UNSORTED,), refs=dict(self.refs),
            next_row_id=self.next_row_id,
        )

    @property
    def md(self) -> M.TableMetadata:
        return self.metadata()

    def plan(self, snapshot_id: int | None = None) -> list[SC.FileScanTask]:
        md = self.md
        snap = S.snapshot_by_id(md, snapshot_id) if snapshot_id is not None else S.current_snapshot(md)
        return SC.plan_files(self.st, md, snap)


def _strip_ids(t: pa.DataType) -> pa.DataType:
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _strip_ids(f.type), nullable=f.nullable) for f in t])
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _strip_ids(t.value_type), nullable=t.value_field.nullable))
    if pa.types.is_map(t):
        return pa.map_(pa.field("key", _strip_ids(t.key_type), nullable=False), pa.field("value", _strip_ids(t.item_type), nullable=t.item_field.nullable))
    return t


def deletes_of(tasks: list[SC.FileScanTask]) -> dict[str, list[str]]:
    """{data file name: sorted delete file names (DVs as name@offset)}."""
    def name(f: MF.DataFile) -> str:
        n = f.file_path.rsplit("/", 1)[1]
        return f"{n}@{f.content_offset}" if D.is_dv(f) else n
    return {name(t.data_file): sorted(name(d) for d in t.deletes) for t in tasks}


SCHEMA = T.Schema(schema_id=0, fields=(F(1, "id", T.LONG, True), F(2, "cat", T.STRING)))
PART = P.PartitionSpec(spec_id=0, fields=(identity(1000, 2, "cat"),))


@pytest.fixture
def part_table(tmp_path):
    return Builder(tmp_path / "t", SCHEMA, spec=PART)


def _rows(ids, cat):
    return {"id": list(ids), "cat": [cat] * len(list(ids))}


# ---------------------------------------------------------------------------------------------
# Scope rules


@pytest.mark.rule("ICEBERG-DELETE-010", "ICEBERG-DELETE-011", "ICEBERG-SEQ-010", "ICEBERG-SCAN-006")
def test_position_delete_scope(part_table):
    b = part_table
    a = b.data_file(_rows([1, 2], "x"), partition={1000: "x"}, name="a")
    c = b.data_file(_rows([3], "y"), partition={1000: "y"}, name="c")
    same_commit = b.position_deletes({a.file_path: [0]}, partition={1000: "x"})
    b.commit(add=[a, c], deletes=[same_commit])  # seq 1: equal sequence numbers -> applies
    # seq 2: partition-scoped files (no referenced file, no bounds); one in x, one in y.
    in_x = dataclasses.replace(b.position_deletes({a.file_path: [1]}, partition={1000: "x"}), referenced_data_file=None,
                               lower_bounds={}, upper_bounds={})
    in_y = dataclasses.replace(b.position_deletes({a.file_path: [1]}, partition={1000: "y"}), referenced_data_file=None)
    b.commit(deletes=[in_x, in_y])
    d = b.data_file(_rows([4], "x"), partition={1000: "x"}, name="d")
    b.commit(add=[d])  # seq 3: newer than every delete
    md = b.md
    live = S.live_files(b.st, md)
    tasks = SC.plan_files(b.st, md, S.current_snapshot(md))
    name = lambda f: f.file_path.rsplit("/", 1)[1]  # noqa: E731
    assert deletes_of(tasks) == {"a.parquet": sorted([name(same_commit), name(in_x)]), "c.parquet": [], "d.parquet": []}
    assert {t.data_file.file_path for t in tasks} == {e.data_file.file_path for e in live.data_files}
    assert sorted(t.data_sequence_number for t in tasks) == [1, 1, 3] and {t.spec_id for t in tasks} == {0}


@pytest.mark.rule("ICEBERG-DELETE-010", "ICEBERG-SEQ-010", "ICEBERG-SEQ-008")
def test_delete_sequence_numbers_decide(tmp_path):
    """Data sequence numbers decide, not file sequence numbers: an entry with an explicit older data sequence number."""
    b = Builder(tmp_path / "t", SCHEMA)
    a = b.data_file(_rows([1, 2, 3], None), name="a")
    b.commit(add=[a])  # seq 1
    b.commit(add=[b.data_file(_rows([9], None), name="pad")])  # seq 2
    pos = b.position_deletes({a.file_path: [2]})
    eq = b.equality_deletes({"id": [1]}, [1])
    # A compaction-style commit: both deletes carry data sequence number 1 (= a's), file sequence number 3.
    sid = 100 + len(b.snapshots) + 1
    es = [MF.ManifestEntry(status=MF.ADDED, data_file=f, sequence_number=1) for f in (pos, eq)]
    b.seq += 1
    mf = b._write_manifest(es, b.spec(), MF.MANIFEST_DELETES, sid, b.seq, None)
    mfs = [mf] + b.manifests
    ml = f"metadata/snap-{sid}.avro"
    b.st.put_if_absent(ml, MF.write_manifest_list(mfs, format_version=2, snapshot_id=sid, parent_snapshot_id=b.current, sequence_number=b.seq))
    b.snapshots.append(M.Snapshot(snapshot_id=sid, parent_snapshot_id=b.current, sequence_number=b.seq, timestamp_ms=b.clock + 1,
                                  manifest_list=b.st.uri(ml), summary={"operation": "delete"}))
    b.current, b.manifests, b._lists[sid] = sid, mfs, mfs
    b.refs["main"] = M.SnapshotRef(snapshot_id=sid, type="branch")
    got = deletes_of(b.plan())
    # position delete: 1 <= 1 applies; equality delete: 1 < 1 is false, so it does not.
    assert got["a.parquet"] == [pos.file_path.rsplit("/", 1)[1]]
    assert got["pad.parquet"] == []


@pytest.mark.rule("ICEBERG-DELETE-015", "ICEBERG-SCAN-006")
def test_equality_delete_scope(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA, spec=PART)
    x = b.data_file(_rows([1], "x"), partition={1000: "x"}, name="x")
    y = b.data_file(_rows([1], "y"), partition={1000: "y"}, name="y")
    same = b.equality_deletes({"id": [1]}, [1], partition={1000: "x"})
    b.commit(add=[x, y], deletes=[same])  # seq 1: same sequence number, not applied
    later = b.equality_deletes({"id": [1]}, [1], partition={1000: "x"})
    b.commit(deletes=[later])  # seq 2, partition x only
    got = deletes_of(b.plan())
    assert got == {"x.parquet": [later.file_path.rsplit("/", 1)[1]], "y.parquet": []}
    # An unpartitioned spec makes a global equality delete (spec 1 has no fields).
    b.set_spec(P.PartitionSpec(spec_id=1))
    glob = b.equality_deletes({"id": [1]}, [1])
    b.commit(deletes=[glob])
    got = deletes_of(b.plan())
    gname = glob.file_path.rsplit("/", 1)[1]
    assert got["y.parquet"] == [gname] and gname in got["x.parquet"]


@pytest.mark.rule("ICEBERG-DELETE-015")
def test_void_only_spec_is_global_for_equality_deletes(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA, spec=PART)
    x = b.data_file(_rows([1], "x"), partition={1000: "x"}, name="x")
    b.commit(add=[x])
    b.set_spec(P.PartitionSpec(spec_id=1, fields=(P.PartitionField(source_ids=(2,), field_id=1001, name="cat_void", transform=X.VoidTransform()),)))
    glob = b.equality_deletes({"id": [1]}, [1], partition={1001: None})
    b.commit(deletes=[glob])
    assert deletes_of(b.plan())["x.parquet"] == [glob.file_path.rsplit("/", 1)[1]]


@pytest.mark.rule("ICEBERG-SCAN-006", "ICEBERG-DELETE-010")
def test_deletes_do_not_cross_specs_with_equal_values(tmp_path):
    """Two specs whose tuples hold the same value: a partition-scoped delete stays in its own spec."""
    b = Builder(tmp_path / "t", SCHEMA, spec=PART)
    x = b.data_file(_rows([1], "x"), partition={1000: "x"}, name="x")
    b.commit(add=[x])
    b.set_spec(P.PartitionSpec(spec_id=1, fields=(identity(1001, 2, "cat2"),)))
    pos = dataclasses.replace(b.position_deletes({x.file_path: [0]}, partition={1001: "x"}), referenced_data_file=None)
    eq = b.equality_deletes({"id": [1]}, [1], partition={1001: "x"})
    b.commit(deletes=[pos, eq])
    assert deletes_of(b.plan())["x.parquet"] == []


@pytest.mark.rule("ICEBERG-DELETE-010", "ICEBERG-DV-012")
def test_delete_naming_the_file_in_another_partition_is_corrupt(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA, spec=PART)
    x = b.data_file(_rows([1], "x"), partition={1000: "x"}, name="x")
    b.commit(add=[x])
    b.commit(deletes=[b.position_deletes({x.file_path: [0]}, partition={1000: "y"})])
    with pytest.raises(InvalidTable, match="metadata is corrupt") as exc:
        b.plan()
    assert exc.value.rule == "ICEBERG-DELETE-010"


@pytest.mark.rule("ICEBERG-DELETE-010", "ICEBERG-DV-010", "ICEBERG-DV-012", "ICEBERG-DELETE-011")
def test_dv_supersedes_position_delete_files(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA, version=3)
    a = b.data_file(_rows([1, 2, 3], None), name="a")
    c = b.data_file(_rows([4], None), name="c")
    pos = b.position_deletes({a.file_path: [0], c.file_path: [0]})  # an upgraded table's old position deletes
    b.commit(add=[a, c], deletes=[pos])
    dv = b.dvs({a.file_path: [0, 1]})
    b.commit(deletes=dv)
    got = deletes_of(b.plan())
    assert got["a.parquet"] == [f"{dv[0].file_path.rsplit('/', 1)[1]}@{dv[0].content_offset}"]  # the DV replaces pos
    assert got["c.parquet"] == [pos.file_path.rsplit("/", 1)[1]]


@pytest.mark.rule("ICEBERG-DV-012")
def test_dv_older_than_its_data_file_does_not_apply(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA, version=3)
    a = b.data_file(_rows([1], None), name="a")
    dv = b.dvs({a.file_path: [0]})
    b.commit(deletes=dv)  # seq 1: the DV
    b.commit(add=[a])  # seq 2: the data file (same path, added later)
    assert deletes_of(b.plan())["a.parquet"] == []


@pytest.mark.rule("ICEBERG-DV-009")
def test_two_dvs_for_one_data_file_are_refused(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA, version=3)
    a = b.data_file(_rows([1, 2], None), name="a")
    b.commit(add=[a], deletes=b.dvs({a.file_path: [0]}))
    b.commit(deletes=b.dvs({a.file_path: [1]}))
    with pytest.raises(InvalidTable, match="two deletion vectors") as exc:
        b.plan()
    assert exc.value.rule == "ICEBERG-DV-009"


@pytest.mark.rule("ICEBERG-DELETE-010")
def test_position_delete_file_path_bounds_prune(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA)
    a = b.data_file(_rows([1], None), name="a")
    z = b.data_file(_rows([2], None), name="z")
    pos = b.position_deletes({a.file_path: [0], a.file_path.replace("a.parquet", "b.parquet"): [0]})
    assert pos.referenced_data_file is None
    b.commit(add=[a, z], deletes=[pos])
    got = deletes_of(b.plan())
    assert got == {"a.parquet": [pos.file_path.rsplit("/", 1)[1]], "z.parquet": []}


@pytest.mark.rule("ICEBERG-SCAN-007")
def test_float_partitions_compare_by_normalised_bits():
    spec = P.PartitionSpec(spec_id=3, fields=(identity(1000, 5, "f"),))
    k = SC.partition_key
    assert k(spec, {1000: float("nan")}) == k(spec, {1000: -float("nan")})
    assert k(spec, {1000: 0.0}) != k(spec, {1000: -0.0})
    assert k(spec, {1000: 1.5}) == k(spec, {1000: 1.5}) and k(spec, {1000: None}) != k(spec, {1000: 0.0})
    assert k(spec, {1000: 1}) != k(P.PartitionSpec(spec_id=4, fields=spec.fields), {1000: 1})


@pytest.mark.rule("ICEBERG-SCAN-001", "ICEBERG-SNAP-013")
def test_deleted_entries_are_not_scanned_and_duplicates_are_refused(tmp_path):
    b = Builder(tmp_path / "t", SCHEMA)
    a = b.data_file(_rows([1], None), name="a")
    c = b.data_file(_rows([2], None), name="c")
    b.commit(add=[a, c])
    b.commit(remove=[a.file_path])
    assert list(deletes_of(b.plan())) == ["c.parquet"]
    b.commit(add=[c])  # c is now live in two manifests
    with pytest.raises(InvalidTable, match="live twice") as exc:
        b.plan()
    assert exc.value.rule == "ICEBERG-SNAP-013"


def test_filter_prunes_data_files(part_table):
    b = part_table
    x = b.data_file(_rows([1], "x"), partition={1000: "x"}, name="x")
    y = b.data_file(_rows([2], "y"), partition={1000: "y"}, name="y")
    b.commit(add=[x, y])
    md = b.md
    tasks = SC.plan_files(b.st, md, S.current_snapshot(md), filter=lambda f, spec: f.partition.get(1000) == "y")
    assert [t.data_file.file_path.rsplit("/", 1)[1] for t in tasks] == ["y.parquet"]
    assert SC.plan_files(b.st, md, None) == []


# ---------------------------------------------------------------------------------------------
# The fast manifest decoder equals read_manifest + inheritance


def _canonical(raw: bytes, mf: MF.ManifestFile, version: int) -> list[MF.ManifestEntry]:
    return [e for e in MF.read_manifest(raw, manifest_file=mf, table_version=version).entries if e.is_live]


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.rule("ICEBERG-SEQ-005", "ICEBERG-SEQ-011", "ICEBERG-SEQ-014", "ICEBERG-LINEAGE-015", "ICEBERG-GEN-004")
def test_fast_decoder_matches_read_manifest(tmp_path, version):
    b = Builder(tmp_path / "t", T.Schema(schema_id=0, fields=(F(1, "id", T.LONG, True), F(2, "d", T.DATE), F(3, "f", T.DOUBLE))),
                spec=P.PartitionSpec(spec_id=0, fields=(identity(1000, 2, "d"), identity(1001, 3, "f"))), version=version)
    files = [b.data_file({"id": [i, i + 1], "d": pa.array([19000 + i] * 2, pa.int32()).cast(pa.date32()), "f": [0.5 * i] * 2},
                         partition={1000: 19000 + i, 1001: 0.5 * i})
             for i in range(4)]
    files[1] = dataclasses.replace(files[1], lower_bounds={1: b"\x01" * 8}, upper_bounds={1: b"\x02" * 8}, value_counts={1: 2},
                                   split_offsets=(4, 9), sort_order_id=0)
    b.commit(add=files[:2])
    b.commit(add=files[2:])
    b.commit(remove=[files[0].file_path])
    reader = SC.ManifestReader(version)
    for mf in b.manifests:
        raw = b.st.read(b.st.resolve(mf.manifest_path))
        assert reader.live_entries(raw, mf) == _canonical(raw, mf, version)
    assert reader.fallbacks == 0
    if version >= 3:
        assert sorted(t.data_file.first_row_id for t in b.plan()) == [2, 4, 6]


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.rule("ICEBERG-SEQ-005", "ICEBERG-SEQ-011", "ICEBERG-SEQ-014", "ICEBERG-LINEAGE-015", "ICEBERG-SCAN-001")
def test_columnar_decoder_matches_read_manifest_without_stats(tmp_path, monkeypatch, version):
    """Big manifests of a scan without stats are decoded by Polars: the same entries as the canonical reader's, stats
    left out, for string and long partitions with nulls, optional fields set and unset, ADDED, EXISTING and DELETED."""
    pytest.importorskip("polars")
    monkeypatch.setenv(SC.POLARS_MIN_BYTES_ENV, "0")
    used = []
    real = SC._polars_records
    monkeypatch.setattr(SC, "_polars_records", lambda data, shape: used.append(real(data, shape)) or used[-1])
    schema = T.Schema(schema_id=0, fields=(F(1, "id", T.LONG, True), F(2, "s", T.STRING), F(3, "n", T.LONG)))
    b = Builder(tmp_path / "t", schema, spec=P.PartitionSpec(spec_id=0, fields=(identity(1000, 2, "s"), identity(1001, 3, "n"))),
                version=version)
    files = [b.data_file({"id": [i], "s": [None if i == 2 else f"s{i % 2}"], "n": [None if i == 3 else i]},
                         partition={1000: None if i == 2 else f"s{i % 2}", 1001: None if i == 3 else i}) for i in range(6)]
    files = [dataclasses.replace(f, value_counts={1: 1, 2: 1, 3: 1}, lower_bounds={1: i.to_bytes(8, "little")},
                                 upper_bounds={1: i.to_bytes(8, "little")}) for i, f in enumerate(files)]
    files[1] = dataclasses.replace(files[1], split_offsets=(4, 9), sort_order_id=0, key_metadata=b"\x00k\xff")
    files[4] = dataclasses.replace(files[4], split_offsets=None, sort_order_id=None)
    b.commit(add=files[:3])
    b.commit(add=files[3:])
    b.commit(remove=[files[0].file_path])  # rewrites the first manifest: DELETED and EXISTING entries
    reader = SC.ManifestReader(version)
    for mf in b.manifests:
        raw = b.st.read(b.st.resolve(mf.manifest_path))
        ours = reader.live_entries(raw, mf, stats=False)
        assert ours == [dataclasses.replace(e, data_file=SC.without_stats(e.data_file)) for e in _canonical(raw, mf, version)]
    assert reader.fallbacks == 0
    assert used and all(r is not None for r in used), "every manifest went through Polars"
    # a plan keeps stats only when asked; a filter still sees them
    assert all(t.data_file.value_counts is None for t in b.plan())
    md = b.md
    kept = SC.plan_files(b.st, md, S.current_snapshot(md), include_column_stats=True)
    assert kept and all(t.data_file.value_counts is not None for t in kept)
    seen = []
    SC.plan_files(b.st, md, S.current_snapshot(md), filter=lambda f, spec: seen.append(f.value_counts) or True)
    assert seen and all(v is not None for v in seen)


def test_the_hostile_campaign_sends_every_manifest_through_polars():
    from conformance.formats.iceberg.hostile import SPEC

    assert dict(SPEC.env)[SC.POLARS_MIN_BYTES_ENV] == "0"


def test_columnar_decoder_leaves_other_partition_types_to_fastavro(tmp_path, monkeypatch):
    """A date partition comes out of Polars as a date object, not Avro's day count: that manifest goes to fastavro."""
    pytest.importorskip("polars")
    monkeypatch.setenv(SC.POLARS_MIN_BYTES_ENV, "0")
    b = Builder(tmp_path / "t", T.Schema(schema_id=0, fields=(F(1, "id", T.LONG, True), F(2, "d", T.DATE))),
                spec=P.PartitionSpec(spec_id=0, fields=(identity(1000, 2, "d"),)))
    b.commit(add=[b.data_file({"id": [1], "d": pa.array([19000], pa.int32()).cast(pa.date32())}, partition={1000: 19000})])
    mf = b.manifests[0]
    raw = b.st.read(b.st.resolve(mf.manifest_path))
    reader = SC.ManifestReader(2)
    assert reader.live_entries(raw, mf, stats=False)[0].data_file.partition == {1000: 19000}
    shape = next(iter(reader._shapes.values()))
    assert SC._polars_records(raw, shape) is None


@pytest.mark.rule("ICEBERG-SEQ-006", "ICEBERG-GEN-005")
def test_fast_decoder_falls_back_to_the_canonical_error(tmp_path):
    st = LocalStorage(str(tmp_path))
    ptype = MF.avro_partition_type(PART, SCHEMA)
    avro_schema = A.to_avro_schema(MF.manifest_entry_type(ptype, 2), record_name="manifest_entry")
    rec = {"status": MF.EXISTING, "snapshot_id": 1, "sequence_number": None, "file_sequence_number": None,
           "data_file": {"content": 0, "file_path": st.uri("data/a.parquet"), "file_format": "PARQUET", "partition": {"cat": "x"},
                         "record_count": 1, "file_size_in_bytes": 10}}
    meta = {"schema": T.schema_to_json(SCHEMA), "schema-id": "0", "partition-spec": json.dumps(P.partition_fields_to_list(PART, format_version=2)),
            "partition-spec-id": "0", "format-version": "2", "content": "data"}
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(avro_schema), [rec], metadata=meta)
    mf = MF.ManifestFile(manifest_path=st.uri("metadata/m.avro"), manifest_length=len(buf.getvalue()), partition_spec_id=0,
                         added_snapshot_id=1, sequence_number=3, min_sequence_number=1)
    with pytest.raises(InvalidTable) as exc:
        SC.read_live_entries(buf.getvalue(), mf, table_version=2)
    assert exc.value.rule == "ICEBERG-SEQ-006"
    with pytest.raises(InvalidTable) as exc:
        SC.read_live_entries(b"not avro at all", mf, table_version=2)
    assert exc.value.rule == "ICEBERG-MANIFEST-002"


def test_min_width_guard():
    with pytest.raises(SC._Fallback):
        SC._min_width({"type": "array", "items": "null"}, {})
    assert SC._min_width({"type": "record", "name": "r", "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": ["null", "int"]}]}, {}) == 2


# ---------------------------------------------------------------------------------------------
# PyIceberg peer: same tasks and same deletes per data file


@pytest.mark.rule("ICEBERG-DELETE-010", "ICEBERG-SCAN-001")
def test_plan_agrees_with_pyiceberg(tmp_path):
    pytest.importorskip("pyiceberg")
    from pyiceberg.table import StaticTable

    b = Builder(tmp_path / "t", SCHEMA, spec=PART)
    files = [b.data_file(_rows([i], "x" if i % 2 else "y"), partition={1000: "x" if i % 2 else "y"}) for i in range(6)]
    b.commit(add=files[:3])
    b.commit(add=files[3:], deletes=[b.position_deletes({files[1].file_path: [0]}, partition={1000: "x"}),
                                      b.position_deletes({files[0].file_path: [0]}, partition={1000: "y"})])
    b.commit(remove=[files[2].file_path])
    b.commit(deletes=[b.position_deletes({files[3].file_path: [0], files[5].file_path: [0]}, partition={1000: "x"})])
    ours = {t.data_file.file_path: sorted(d.file_path for d in t.deletes) for t in b.plan()}
    table = StaticTable.from_metadata(b.st.uri(f"metadata/v{b.n_meta}.metadata.json"))
    theirs = {t.file.file_path: sorted(d.file_path for d in t.delete_files) for t in table.scan().plan_files()}
    assert ours == theirs and len(ours) == 5


def test_bench_smoke(tmp_path):
    """The scan-planning benchmark at a tiny size: both engines plan the same thing."""
    pytest.importorskip("pyiceberg")
    from conformance.formats.iceberg import bench as bench_iceberg

    t = time.perf_counter()
    result = bench_iceberg.run_iceberg(manifests=3, entries=20, delete_every=7, repeat=1, workdir=str(tmp_path), profile=False)
    assert result["findings"] == [], result["findings"]
    assert result["reference"]["tasks"] == 60 and result["reference"]["deletes"] == 9
    assert "ratio" in result and time.perf_counter() - t < 60
    assert "reference plan_files vs pyiceberg" in bench_iceberg.summary(result)


def test_bench_scale_smoke(tmp_path):
    """``--scale``: one row per size with both engines' figures, and a fitted growth per engine."""
    pytest.importorskip("pyiceberg")
    from conformance.formats.iceberg import bench as bench_iceberg

    out = bench_iceberg.run_scale([40, 120], entries=20, delete_every=7, repeat=1, workdir=str(tmp_path))
    assert out["findings"] == [] and [row["size"] for row in out["sizes"]] == [40, 120]
    assert [row["deletes"] for row in out["sizes"]] == [6, 18]
    assert set(out["exponents"]) == {"reference", "pyiceberg"}
    assert "120 data files (18 deletes)" in bench_iceberg.scale_summary(out)


def test_nan_key_constant():
    assert SC._norm(float("nan")) == SC._norm(math.copysign(float("nan"), -1.0))

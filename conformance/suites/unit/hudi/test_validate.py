"""Hudi validator (reference_impl.hudi.validate): small tables built from bytes (``_tables.valid_table``, table
versions 6, 8 and 9, copy-on-write and merge-on-read with log files) validate clean, and one small mutation
per check breaks exactly the rule it names."""

from __future__ import annotations

import glob
import io
import json
import os
import shutil
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.suites.unit.hudi import _tables as TB
from reference_impl.hudi import logfile as LF
from reference_impl.hudi import naming as N
from reference_impl.hudi import properties as P
from reference_impl.hudi.validate import CHECKS, validate_table

VARIANTS = {"cow6": (6, "COPY_ON_WRITE"), "mor6": (6, "MERGE_ON_READ"), "cow8": (8, "COPY_ON_WRITE"),
            "mor8": (8, "MERGE_ON_READ"), "cow9": (9, "COPY_ON_WRITE"), "mor9": (9, "MERGE_ON_READ")}
t = TB.t


def _build(tmp_path, variant: str) -> TB.Table:
    version, kind = VARIANTS[variant]
    return TB.valid_table(str(tmp_path / variant), version=version, table_type=kind)


def _rules(tb: TB.Table) -> set[str]:
    return {v.rule for v in validate_table(tb.root)}


@pytest.mark.rule("HUDI-LAYOUT-003")
@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_built_tables_validate_clean(tmp_path, variant):
    assert validate_table(_build(tmp_path, variant).root) == []


# ------------------------------------------------------------------ mutation helpers


def _path(tb: TB.Table, rel: str) -> str:
    return os.path.join(tb.root, rel)


def _props(tb: TB.Table, edit, *, checksum: bool = True) -> None:
    rel = _path(tb, ".hoodie/hoodie.properties")
    props = P.parse_properties(open(rel, "rb").read())
    edit(props)
    data = P.write_properties(props) if checksum else P.format_properties(props)
    open(rel, "wb").write(data)


def _set(key, value):
    return lambda p: p.__setitem__(key, value)


def _drop(key):
    return lambda p: p.pop(key, None)


def _tl(tb: TB.Table, pattern: str) -> str:
    """The one timeline file matching ``pattern``."""
    found = sorted(glob.glob(os.path.join(tb.timeline_dir, pattern)))
    assert len(found) == 1, (pattern, found)
    return found[0]


def _completed(tb: TB.Table, n: int) -> str:
    action = "{commit,deltacommit}"
    for a in ("commit", "deltacommit", "replacecommit"):
        found = glob.glob(os.path.join(tb.timeline_dir, f"{t(n)}_*.{a}" if tb.version >= 8 else f"{t(n)}.{a}"))
        if found:
            return found[0]
    raise AssertionError(f"no completed {action} {t(n)}")


def _meta_edit(tb: TB.Table, n: int, edit) -> None:
    """Edit the commit metadata of instant ``n`` (decoded, edited, re-encoded in the table's encoding)."""
    from reference_impl.hudi import commit_metadata as CM

    path = _completed(tb, n)
    data = open(path, "rb").read()
    if data.startswith(CM.AVRO_MAGIC):
        import fastavro

        r = fastavro.reader(io.BytesIO(data))
        schema, rec = r.writer_schema, next(iter(r))
        edit(rec)
        buf = io.BytesIO()
        fastavro.writer(buf, fastavro.parse_schema(schema), [rec])
        open(path, "wb").write(buf.getvalue())
    else:
        doc = json.loads(data)
        edit(doc)
        open(path, "w").write(json.dumps(doc))


def _base(tb: TB.Table, part: str = "part=p1", n: int = 1) -> str:
    found = sorted(glob.glob(os.path.join(tb.root, part, f"*_{t(n)}.parquet")))
    return found[0]


def _logs(tb: TB.Table) -> list[str]:
    return sorted(glob.glob(os.path.join(tb.root, "part=p1", ".*.log.*")))


def _rewrite_base(path: str, edit) -> None:
    rows = pq.ParquetFile(path).read().to_pylist()  # not read_table: it would take part=p1 for a hive partition
    table = edit(rows)
    if not isinstance(table, pa.Table):
        table = pa.Table.from_pylist(rows, schema=TB.ARROW)
    pq.write_table(table, path)


def _write_base(tb: TB.Table, part: str, name: str, rows) -> None:
    rows = [dict(r, _hoodie_file_name=name) for r in rows]
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=TB.ARROW), buf)
    tb.put(f"{part}/{name}", buf.getvalue())


def _append(path: str, data: bytes) -> None:
    with open(path, "ab") as fh:
        fh.write(data)


def _patch(path: str, offset: int, data: bytes) -> None:
    raw = bytearray(open(path, "rb").read())
    raw[offset:offset + len(data)] = data
    open(path, "wb").write(bytes(raw))


def _instant_file(tb: TB.Table, name: str, data: bytes = b"") -> None:
    tb._tl(name, data)


def _clean_plan() -> bytes:
    return TB.avro_file({"type": "record", "name": "HoodieCleanerPlan", "namespace": "org.apache.hudi.avro.model",
                         "fields": [{"name": "policy", "type": "string"}]}, {"policy": "KEEP_LATEST_COMMITS"})


def _clean_meta(record: str = "HoodieCleanMetadata") -> bytes:
    schema = {"type": "record", "name": record, "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "startCleanTime", "type": "string"}, {"name": "totalFilesDeleted", "type": "int"},
        {"name": "partitionMetadata", "type": {"type": "map", "values": "string"}}]}
    return TB.avro_file(schema, {"startCleanTime": t(40), "totalFilesDeleted": 0, "partitionMetadata": {}})


def _completed_name(tb: TB.Table, n: int, action: str, done: int | None = None) -> str:
    return f"{t(n)}_{t(done or n + 1)}.{action}" if tb.version >= 8 else f"{t(n)}.{action}"


def _clean(tb: TB.Table, record: str) -> None:
    _instant_file(tb, f"{t(40)}.clean.requested", _clean_plan())
    _instant_file(tb, f"{t(40)}.clean.inflight")
    _instant_file(tb, _completed_name(tb, 40, "clean"), _clean_meta(record))


def _savepoint(tb: TB.Table) -> None:
    schema = {"type": "record", "name": "HoodieSavepointMetadata", "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "savepointedBy", "type": "string"},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieSavepointPartitionMetadata", "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}}]}}}]}
    rec = {"savepointedBy": "me", "partitionMetadata": {"part=p1": {"partitionPath": "part=p1",
                                                                    "savepointDataFile": ["gone_0-1-1_x.parquet"]}}}
    _instant_file(tb, f"{t(40)}.savepoint.inflight")
    _instant_file(tb, _completed_name(tb, 40, "savepoint"), TB.avro_file(schema, rec))


def _lsm(tb: TB.Table, columns: dict, version: str = "1", manifest: bool = True) -> None:
    hist = os.path.join(tb.timeline_dir, "history")
    os.makedirs(hist, exist_ok=True)
    name = f"{t(0)}_{t(0)}_0.parquet"
    buf = io.BytesIO()
    pq.write_table(pa.table(columns), buf)
    open(os.path.join(hist, name), "wb").write(buf.getvalue())
    open(os.path.join(hist, "_version_"), "w").write(version)
    if manifest:
        open(os.path.join(hist, f"manifest_{version}"), "w").write(
            json.dumps({"files": [{"fileName": name, "fileLen": len(buf.getvalue())}]}))


def _archive_v1(tb: TB.Table) -> None:
    schema = json.dumps({"type": "record", "name": "HoodieArchivedMetaEntry", "fields": [
        {"name": "actionType", "type": ["null", "string"], "default": None}]})
    block = LF.avro_data_block([{"actionType": "commit"}], schema, instant_time=t(0))
    tb.put(".hoodie/archived/.commits_.archive.1_1-0-1", block)


def _replace(tb: TB.Table) -> None:
    """A replace commit at t(2) retiring fid(1), which the write at t(3) then writes again."""
    TB.full_commit(tb, t(2), t(2) if tb.version >= 8 else None, action="replacecommit", operation="INSERT_OVERWRITE",
                   replaced={"part=p1": [TB.fid(1)]})


def _schema_commits(tb: TB.Table, *extras: list) -> None:
    """Completed writes at t(40), t(42), ... recording the table schema with ``extras`` appended, one list each."""
    for i, extra in enumerate(extras):
        n = 40 + 2 * i
        TB.full_commit(tb, t(n), t(n + 1), action="deltacommit" if "MERGE" in tb._props() else "commit")
        schema = json.dumps({"type": "record", "name": "t_record", "fields": TB.DATA_FIELDS + extra})
        _meta_edit(tb, n, _set("extraMetadata", {"schema": schema}))


def _opt(name: str, t_: object) -> dict:
    return {"name": name, "type": ["null", t_], "default": None}


def _to_avro(path: str) -> None:
    meta = json.loads(open(path, "rb").read())
    open(path, "wb").write(TB.commit_metadata_bytes(meta, avro=True))


def _log_name(tb: TB.Table, file_id: str, n: int) -> str:
    return N.format_log_file_name(file_id, t(n), 1, TB.TOKEN)


# rule -> (variant, mutation); the variant is the table it applies to.
MUTATIONS = {
    # hoodie.properties
    "HUDI-LAYOUT-002": ("cow8", lambda tb: os.rename(_path(tb, ".hoodie/hoodie.properties"),
                                                     _path(tb, ".hoodie/hoodie.properties.backup"))),
    "HUDI-LAYOUT-003": ("mor8", lambda tb: _props(tb, _set(P.INITIAL_VERSION, "9"))),
    "HUDI-LAYOUT-004": ("mor8", lambda tb: _props(tb, _set(P.TIMELINE_LAYOUT_VERSION, "1"))),
    "HUDI-LAYOUT-005": ("cow6", lambda tb: _props(tb, _set(P.CHECKSUM, "12345"), checksum=False)),
    "HUDI-LAYOUT-009": ("mor9", lambda tb: _props(tb, _set(P.RECORD_MERGE_MODE, "NEWEST_WINS"))),
    "HUDI-LAYOUT-010": ("cow8", lambda tb: _props(tb, _set(P.BASE_FILE_FORMAT, "HFILE"))),
    "HUDI-LAYOUT-011": ("cow8", lambda tb: _props(tb, _set(P.METADATA_PARTITIONS, "files"))),
    "HUDI-LAYOUT-012": ("mor8", lambda tb: tb.put(f".hoodie/{t(1)}.deltacommit.requested", b"")),
    "HUDI-LAYOUT-013": ("mor6", lambda tb: _props(tb, _drop(P.TIMELINE_TIMEZONE))),
    "HUDI-LAYOUT-016": ("mor8", lambda tb: tb.put(".hoodie/metadata/.hoodie/hoodie.properties", P.write_properties(
        {P.NAME: "t_metadata", P.TYPE: P.COPY_ON_WRITE, P.VERSION: "8", P.BASE_FILE_FORMAT: "HFILE"}))),
    # partitions and files
    "HUDI-LAYOUT-008": ("cow6", lambda tb: _props(tb, _drop(P.PARTITION_FIELDS))),
    "HUDI-LAYOUT-014": ("cow6", lambda tb: _rewrite_base(_base(tb, n=3), lambda rows: pa.Table.from_pylist(
        rows, schema=TB.ARROW).drop_columns(["part"]))),
    "HUDI-LAYOUT-015": ("mor8", lambda tb: os.remove(_path(tb, "part=p2/.hoodie_partition_metadata"))),
    "HUDI-FILE-001": ("cow8", lambda tb: _write_base(tb, "part=p2", N.format_base_file_name(TB.fid(1), TB.TOKEN, t(1)),
                                                     [TB.Table.row("k9", 1, "z", t(1), part="p2")])),
    "HUDI-FILE-004": ("cow6", lambda tb: tb.put("part=p1/not-a-hudi-name.parquet", b"")),
    "HUDI-FILE-005": ("cow8", lambda tb: (
        _write_base(tb, "part=p2", N.format_base_file_name(TB.fid(2), "0-1-2", t(1)),
                    [TB.Table.row("k3", 1, "c", t(1), part="p2", seq=2)]),
        _meta_edit(tb, 1, lambda m: m["partitionToWriteStats"]["part=p2"].append(dict(
            m["partitionToWriteStats"]["part=p2"][0],
            path="part=p2/" + N.format_base_file_name(TB.fid(2), "0-1-2", t(1))))))),
    "HUDI-FILE-006": ("mor6", lambda tb: tb.put("part=p1/.not-a-log.log.1", b"")),
    "HUDI-FILE-007": ("mor8", lambda tb: tb.put("part=p2/" + _log_name(tb, TB.fid(2), 3), TB.Table.data_block(
        t(1), [TB.Table.row("k3", 2, "c", t(1), part="p2")]))),
    "HUDI-FILE-008": ("mor6", lambda tb: tb.put("part=p1/" + _log_name(tb, TB.fid(1), 1).replace(".log.1_", ".log.0_"),
                                                TB.Table.data_block(t(3), [TB.Table.row("k1", 3, "x", t(3))]))),
    "HUDI-TIMELINE-001": ("cow6", lambda tb: _write_base(tb, "part=p1", N.format_base_file_name(TB.fid(7), TB.TOKEN, t(50)),
                                                         [TB.Table.row("k7", 1, "q", t(1))])),
    # timeline
    "HUDI-TIMELINE-003": ("mor6", lambda tb: os.remove(_tl(tb, f"{t(1)}.deltacommit.inflight"))),
    "HUDI-TIMELINE-005": ("cow8", lambda tb: _instant_file(tb, f"{t(1)}.rollback.requested")),
    "HUDI-TIMELINE-006": ("cow6", lambda tb: _instant_file(tb, "20261399000000000.commit.requested")),
    "HUDI-TIMELINE-007": ("mor8", lambda tb: _instant_file(tb, "00000000000000000.deltacommit.requested")),
    "HUDI-TIMELINE-008": ("cow8", lambda tb: _instant_file(tb, f"{t(40)}.frobnicate.requested")),
    "HUDI-TIMELINE-009": ("cow6", lambda tb: _instant_file(tb, f"{t(40)}.commit.completed")),
    "HUDI-TIMELINE-010": ("cow6", lambda tb: os.rename(_tl(tb, f"{t(1)}.inflight"),
                                                       os.path.join(tb.timeline_dir, f"{t(1)}.commit.inflight"))),
    "HUDI-TIMELINE-011": ("cow8", lambda tb: os.rename(_completed(tb, 1), os.path.join(tb.timeline_dir, f"{t(1)}.commit"))),
    "HUDI-TIMELINE-012": ("mor9", lambda tb: _instant_file(tb, f"{t(40)}_{t(41)}.deltacommit.inflight")),
    "HUDI-TIMELINE-013": ("mor6", lambda tb: _instant_file(tb, f"{t(40)}.compaction")),
    "HUDI-TIMELINE-016": ("cow8", lambda tb: _instant_file(tb, f"{t(40)}.clean.requested")),
    "HUDI-TIMELINE-017": ("mor8", lambda tb: _clean(tb, "HoodieRollbackMetadata")),
    "HUDI-TIMELINE-018": ("cow6", lambda tb: _to_avro(_completed(tb, 3))),
    "HUDI-TIMELINE-021": ("mor6", _archive_v1),
    "HUDI-TIMELINE-022": ("cow8", lambda tb: _lsm(tb, {"instantTime": [t(0)], "action": ["commit"]}, manifest=False)),
    "HUDI-TIMELINE-023": ("cow9", lambda tb: _lsm(tb, {"foo": ["bar"]})),
    "HUDI-TIMELINE-025": ("cow8", _savepoint),
    # commit metadata
    "HUDI-COMMIT-001": ("mor6", lambda tb: _meta_edit(tb, 1, _set("operationType", "FROBNICATE"))),
    "HUDI-COMMIT-002": ("cow8", lambda tb: _meta_edit(tb, 1, lambda m: m["partitionToWriteStats"]["part=p2"][0].__setitem__(
        "path", "part=p2/" + N.format_base_file_name(TB.fid(2), "9-9-9", t(1))))),
    "HUDI-COMMIT-003": ("mor9", lambda tb: _meta_edit(tb, 3, _set("extraMetadata", {"schema": "{not json"}))),
    "HUDI-COMMIT-004": ("cow6", _replace),
    "HUDI-COMMIT-005": ("mor8", lambda tb: _meta_edit(tb, 1, lambda m: m["partitionToWriteStats"].__setitem__("", []))),
    # log files
    "HUDI-LOG-001": ("mor6", lambda tb: _patch(_logs(tb)[0], 0, b"#HOOD#")),
    "HUDI-LOG-002": ("mor8", lambda tb: _patch(_logs(tb)[0], 6, struct.pack(">q", 10))),
    "HUDI-LOG-003": ("mor6", lambda tb: _patch(_logs(tb)[0], 14, struct.pack(">i", 2))),
    "HUDI-LOG-004": ("mor8", lambda tb: _patch(_logs(tb)[0], 18, struct.pack(">i", 9))),
    "HUDI-LOG-005": ("mor9", lambda tb: _patch(_logs(tb)[0], 22, struct.pack(">i", 1 << 30))),
    "HUDI-LOG-006": ("mor6", lambda tb: _patch(_logs(tb)[0], os.path.getsize(_logs(tb)[0]) - 8, struct.pack(">q", 7))),
    "HUDI-LOG-008": ("mor6", lambda tb: _append(_logs(tb)[0], LF.encode_block(
        LF.BlockType.AVRO_DATA, {LF.HeaderKey.INSTANT_TIME: t(3)}, b"\x00\x00\x00\x03\x00\x00\x00\x00"))),
    "HUDI-LOG-009": ("mor8", lambda tb: _append(_logs(tb)[0], LF.encode_block(LF.BlockType.COMMAND, {
        LF.HeaderKey.INSTANT_TIME: t(3), LF.HeaderKey.TARGET_INSTANT_TIME: t(3),
        LF.HeaderKey.COMMAND_BLOCK_TYPE: "1"}, b""))),
    "HUDI-LOG-010": ("mor9", lambda tb: _append(_logs(tb)[0], LF.encode_block(
        LF.BlockType.DELETE, {LF.HeaderKey.INSTANT_TIME: t(3)}, b"\x00\x00\x00\x03\x00\x00\x00\x05\xff\xff"))),
    "HUDI-LOG-011": ("mor6", lambda tb: _append(_logs(tb)[0], TB.Table.data_block(t(60), [TB.Table.row("k1", 9, "x", t(60))]))),
    "HUDI-LOG-012": ("mor6", lambda tb: _append(_logs(tb)[0], LF.avro_data_block(
        [TB.Table.row("k1", 9, "x", t(3))], TB.LOG_SCHEMA, instant_time=t(3),
        header={LF.HeaderKey.INSTANT_TIME: t(3), LF.HeaderKey.SCHEMA: TB.LOG_SCHEMA,
                LF.HeaderKey.COMPACTED_BLOCK_TIMES: "yesterday"}))),
    # meta columns
    "HUDI-META-001": ("cow8", lambda tb: _rewrite_base(_base(tb, "part=p2"), lambda rows: pa.Table.from_pylist(
        rows, schema=TB.ARROW).drop_columns(list(TB.META)))),
    "HUDI-META-002": ("cow6", lambda tb: _rewrite_base(_base(tb, "part=p2"), lambda rows: [
        r.__setitem__("_hoodie_commit_time", t(99)) for r in rows])),
    "HUDI-META-003": ("mor8", lambda tb: _rewrite_base(_base(tb, "part=p1"), lambda rows: [
        r.__setitem__("_hoodie_commit_seqno", "same") for r in rows])),
    "HUDI-META-004": ("mor6", lambda tb: _rewrite_base(_base(tb, "part=p2"), lambda rows: [
        r.__setitem__("_hoodie_record_key", "") for r in rows])),
    "HUDI-META-005": ("cow9", lambda tb: _rewrite_base(_base(tb, "part=p2"), lambda rows: [
        r.__setitem__("_hoodie_partition_path", "part=p1") for r in rows])),
    # schema evolution between commits
    "HUDI-EVOL-009": ("cow8", lambda tb: _schema_commits(tb, [{"name": "x", "type": "string"}])),
    "HUDI-EVOL-010": ("mor6", lambda tb: _schema_commits(
        tb, [_opt("s", {"type": "record", "name": "S", "fields": [_opt("a", "long")]})],
        [_opt("s", {"type": "record", "name": "S", "fields": [_opt("a", "long"), {"name": "b", "type": "int"}]})])),
    "HUDI-EVOL-011": ("mor9", lambda tb: _schema_commits(tb, [_opt("ts2", "long")], [_opt("ts2", "int")])),
    "HUDI-EVOL-012": ("cow6", lambda tb: _schema_commits(
        tb, [_opt("s", {"type": "record", "name": "S", "fields": [_opt("a", "double")]})],
        [_opt("s", {"type": "record", "name": "S", "fields": [_opt("a", "float")]})])),
    "HUDI-EVOL-013": ("cow9", lambda tb: _schema_commits(
        tb, [_opt("arr", {"type": "array", "items": "long"})], [_opt("arr", {"type": "array", "items": "int"})])),
    # table types
    "HUDI-TABLE-001": ("cow6", lambda tb: tb.put("part=p1/" + _log_name(tb, TB.fid(1), 1), TB.Table.data_block(
        t(3), [TB.Table.row("k1", 3, "x", t(3))]))),
    "HUDI-TABLE-002": ("mor8", lambda tb: TB.full_commit(tb, t(40), t(41), action="commit")),
}
# A second mutation for rules with a second way to break them (dedicated check vs the parser's relay).
MORE = {
    "HUDI-LAYOUT-001/no-hoodie": ("HUDI-LAYOUT-001", "mor6", lambda tb: shutil.rmtree(_path(tb, ".hoodie"))),
    "HUDI-LAYOUT-006/version": ("HUDI-LAYOUT-006", "cow8", lambda tb: _props(tb, _set(P.VERSION, "99"))),
    "HUDI-LAYOUT-003/fatal": ("HUDI-LAYOUT-003", "cow6", lambda tb: _props(tb, _drop(P.TYPE))),
    "HUDI-LAYOUT-009/ordering": ("HUDI-LAYOUT-009", "mor8", lambda tb: _props(tb, _set(P.PRECOMBINE_FIELD, "nope"))),
    "HUDI-LAYOUT-014/flag": ("HUDI-LAYOUT-014", "cow9", lambda tb: _props(tb, _set(P.DROP_PARTITION_COLUMNS, "no"))),
    "HUDI-LAYOUT-015/flag": ("HUDI-LAYOUT-015", "mor6", lambda tb: _props(tb, _set(P.HIVE_STYLE_PARTITIONING, "yes"))),
    "HUDI-LAYOUT-010/relay": ("HUDI-LAYOUT-010", "cow8", lambda tb: open(_base(tb, "part=p2"), "wb").write(b"PAR1 nope")),
    "HUDI-LAYOUT-012/key": ("HUDI-LAYOUT-012", "cow6", lambda tb: _props(tb, _set(P.ARCHIVELOG_FOLDER, "a/b"))),
    "HUDI-LAYOUT-015/path": ("HUDI-LAYOUT-015", "cow8", lambda tb: _write_base(
        tb, "p3", N.format_base_file_name(TB.fid(8), TB.TOKEN, t(1)), [dict(TB.Table.row("k8", 1, "y", t(1), part="p3"), _hoodie_partition_path="p3")])
        or tb.partition("p3")),
    "HUDI-LAYOUT-015/metafile": ("HUDI-LAYOUT-015", "mor6", lambda tb: tb.put(
        "part=p1/.hoodie_partition_metadata", b"commitTime=20260101000000000\npartitionDepth=3\n")),
    "HUDI-FILE-001/relay": ("HUDI-FILE-001", "cow6", lambda tb: _write_base(
        tb, "part=p1", N.format_base_file_name("nodash", TB.TOKEN, t(1)), [TB.Table.row("k5", 1, "y", t(1), seq=5)])),
    "HUDI-FILE-005/token": ("HUDI-FILE-005", "cow6", lambda tb: tb.put(
        f"part=p1/{TB.fid(1)}_99999999999-0-1_{t(1)}.parquet", b"")),
    "HUDI-TIMELINE-005/completion": ("HUDI-TIMELINE-005", "mor8", lambda tb: os.rename(
        _completed(tb, 1), os.path.join(tb.timeline_dir, f"{t(1)}_{t(0)}.deltacommit"))),
    "HUDI-TIMELINE-013/group": ("HUDI-TIMELINE-013", "mor8", lambda tb: (
        _instant_file(tb, f"{t(40)}.compaction.requested", TB.avro_file(
            {"type": "record", "name": "HoodieCompactionPlan", "fields": [
                {"name": "operations", "type": {"type": "array", "items": "string"}}]}, {"operations": []})),
        _instant_file(tb, f"{t(40)}.compaction.inflight"),
        _instant_file(tb, f"{t(40)}_{t(41)}.deltacommit", TB.commit_metadata_bytes({}, avro=True)))),
    "HUDI-EVOL-011/decimal": ("HUDI-EVOL-011", "mor8", lambda tb: _schema_commits(
        tb, [_opt("d", {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2})],
        [_opt("d", {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 4})],
        [_opt("d", {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 1})])),
    "HUDI-TIMELINE-023/metadata": ("HUDI-TIMELINE-023", "mor8", lambda tb: _lsm(tb, {
        "instantTime": [t(0)], "completionTime": [t(0)], "action": ["deltacommit"], "metadata": [b"garbage"]})),
    "HUDI-COMMIT-002/prev": ("HUDI-COMMIT-002", "mor6", lambda tb: _meta_edit(
        tb, 3, lambda m: m["partitionToWriteStats"]["part=p1"][0].__setitem__("prevCommit", t(77)))),
    "HUDI-LOG-002/truncated": ("HUDI-LOG-002", "mor6", lambda tb: open(_logs(tb)[0], "r+b").truncate(
        os.path.getsize(_logs(tb)[0]) - 1)),
}
# Schema-on-read history mutations (checks_evolution): built in their own module.
from conformance.suites.unit.hudi._sor_mutations import SOR_MUTATIONS  # noqa: E402

MORE.update(SOR_MUTATIONS)
ALSO = {
    "HUDI-LAYOUT-008": {"HUDI-COMMIT-005"},  # without partition fields, the commits' partition keys are wrong too
}


def _cases():
    for rule, (variant, mutate) in sorted(MUTATIONS.items()):
        yield pytest.param(rule, variant, mutate, id=rule, marks=pytest.mark.rule(rule))
    for case, (rule, variant, mutate) in sorted(MORE.items()):
        yield pytest.param(rule, variant, mutate, id=case, marks=pytest.mark.rule(rule))


@pytest.mark.parametrize("rule,variant,mutate", list(_cases()))
def test_mutation_breaks_its_rule(tmp_path, rule, variant, mutate):
    tb = _build(tmp_path, variant)
    mutate(tb)
    violations = validate_table(tb.root)
    assert {v.rule for v in violations} == {rule} | ALSO.get(rule, set()), [(v.rule, v.message, v.where) for v in violations]
    # where = a root-relative file (never an absolute path or URI), then the spot in it
    assert all(not v.where.startswith(("/", "file:")) and tb.root not in v.message for v in violations), violations


def test_every_check_has_a_mutation():
    assert set(CHECKS) <= set(MUTATIONS) | {r for r, _, _ in MORE.values()}, set(CHECKS) - set(MUTATIONS)


def test_checked_rules_are_catalog_rules():
    import re

    catalog = os.path.join(os.path.dirname(__file__), "..", "..", "..", "rules", "hudi.md")
    ids = set(re.findall(r"^\| (HUDI-[A-Z]+-\d+) ", open(catalog).read(), re.M))
    assert set(CHECKS) <= ids, set(CHECKS) - ids


@pytest.mark.rule("HUDI-META-005")
def test_storage_objects_are_accepted(tmp_path):
    from reference_impl.storage import LocalStorage

    tb = _build(tmp_path, "mor8")
    _rewrite_base(_base(tb, "part=p2"), lambda rows: [r.__setitem__("_hoodie_file_name", "x.parquet") for r in rows])
    found = validate_table(LocalStorage(tb.root))
    assert [(v.rule, v.where) for v in found] == [("HUDI-META-005", os.path.relpath(_base(tb, "part=p2"), tb.root))]

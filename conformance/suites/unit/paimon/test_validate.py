"""Paimon validator (reference_impl.paimon.validate): pypaimon-written tables validate clean (or with the
findings the spec explains), and one small mutation per check breaks exactly the rule it names.

pypaimon 2.1.0 names its index manifests ``index-manifest-<uuid>`` without the ``-<n>`` counter
FileStorePathFactory appends, so every dynamic-bucket table it writes breaks PAIMON-LAYOUT-006.
"""

from __future__ import annotations

import glob
import json
import os
import shutil

import fastavro
import pyarrow as pa
import pytest

from conformance.cli import main
from conformance.suites.unit.paimon import _pypaimon as PP
from reference_impl.errors import InvalidTable
from reference_impl.paimon.validate import CHECKS, validate_table

pytest.importorskip("pypaimon")


_write = PP.write


A = pa.schema([("id", pa.int32()), ("p", pa.string()), ("v", pa.string())])
PK = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string(), nullable=False), ("v", pa.string())])


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    from pypaimon import CatalogFactory, Schema

    root = tmp_path_factory.mktemp("pp-validate")
    cat = CatalogFactory.create({"warehouse": str(root)})
    cat.create_database("db", True)

    def create(name, schema, pk=None, opts=None):
        cat.create_table(f"db.{name}", Schema.from_pyarrow_schema(schema, partition_keys=["p"], primary_keys=pk,
                                                                  options=opts or {}), False)
        return cat.get_table(f"db.{name}")

    t = create("append", A)
    _write(t, pa.table({"id": [1, 2, 3], "p": ["x", None, "a/b"], "v": ["a", "b", "c"]}, schema=A))
    _write(t, pa.table({"id": [4, 5], "p": ["x", "y"], "v": [None, "e"]}, schema=A))
    t.create_tag("t1", 1)
    for name, opts in (("pk_fixed", {"bucket": "2"}), ("pk_dynamic", {})):
        t = create(name, PK, pk=["id", "p"], opts=opts)
        _write(t, pa.table({"id": [1, 2, 3], "p": ["x", "x", "y"], "v": ["a", "b", "c"]}, schema=PK))
        _write(t, pa.table({"id": [2, 4], "p": ["x", "y"], "v": ["b2", "d"]}, schema=PK))
        t.create_tag("t1", 1)
    return root / "db.db"


def _rules(path) -> set[str]:
    return {v.rule for v in validate_table(str(path))}


@pytest.mark.rule("PAIMON-LAYOUT-006")
def test_pypaimon_tables_validate_clean(tables):
    assert validate_table(str(tables / "append")) == []
    assert validate_table(str(tables / "pk_fixed")) == []
    found = validate_table(str(tables / "pk_dynamic"))
    # pypaimon's finding: index-manifest-<uuid> lacks the -<n> counter (spec/manifest.md, FileStorePathFactory).
    assert found and {v.rule for v in found} == {"PAIMON-LAYOUT-006"}
    assert all("is not named index-manifest-<uuid>-<n>" in v.message for v in found)


def test_not_a_table(tmp_path):
    with pytest.raises(InvalidTable):
        validate_table(str(tmp_path))


# ------------------------------------------------------------------ mutation helpers


def _json(path, fn) -> None:
    doc = json.loads(open(path).read())
    fn(doc)
    open(path, "w").write(json.dumps(doc))


def _avro(path, fn) -> None:
    with open(path, "rb") as fh:
        r = fastavro.reader(fh)
        schema, codec, recs = r.writer_schema, r.codec, list(r)
    recs = fn(recs) or recs
    with open(path, "wb") as fh:
        fastavro.writer(fh, fastavro.parse_schema(schema), recs, codec=codec)


def _snap(t, i):
    return json.loads(open(t / f"snapshot/snapshot-{i}").read())


def _delta_list(t, i=2):
    return t / "manifest" / _snap(t, i)["deltaManifestList"]


def _delta_manifest(t, i=2):
    with open(_delta_list(t, i), "rb") as fh:
        return t / "manifest" / next(iter(fastavro.reader(fh)))["_FILE_NAME"]


def _index_manifest(t, i=2):
    return t / "manifest" / _snap(t, i)["indexManifest"]


def _first(fn):
    def edit(recs):
        fn(recs[0])
    return edit


def _file(key, value):
    return _first(lambda r: r["_FILE"].__setitem__(key, value(r["_FILE"]) if callable(value) else value))


def _schema_copy(t, sid, edit):
    doc = json.loads(open(t / "schema/schema-0").read())
    doc["id"] = sid
    edit(doc)
    open(t / f"schema/schema-{sid}", "w").write(json.dumps(doc))


def _hash_index(t):
    with open(_index_manifest(t), "rb") as fh:
        return t / "index" / next(iter(fastavro.reader(fh)))["_FILE_NAME"]


MUTATIONS = {
    "PAIMON-SCHEMA-006": ("append", lambda t: _json(t / "schema/schema-0", lambda d: d["fields"][1].__setitem__("id", 0))),
    "PAIMON-SCHEMA-008": ("append", lambda t: _schema_copy(t, 1, lambda d: d.__setitem__("partitionKeys", []))),
    "PAIMON-SCHEMA-001": ("append", lambda t: _schema_copy(t, 2, lambda d: None)),
    "PAIMON-LAYOUT-003": ("append", lambda t: _schema_copy(t, 1, lambda d: d.__setitem__("id", 5))),
    "PAIMON-SNAP-001": ("append", lambda t: _json(t / "snapshot/snapshot-2", lambda d: d.__setitem__("id", 4))
                        or os.rename(t / "snapshot/snapshot-2", t / "snapshot/snapshot-4")),
    "PAIMON-SNAP-003": ("append", lambda t: open(t / "snapshot/LATEST", "w").write("two")),
    "PAIMON-LAYOUT-002": ("append", lambda t: shutil.copy(t / "snapshot/snapshot-1", t / "snapshot/snapshot-01")),
    "PAIMON-SNAP-007": ("append", lambda t: _json(t / "snapshot/snapshot-2", lambda d: d.__setitem__("id", 7))),
    "PAIMON-SNAP-008": ("append", lambda t: _json(t / "snapshot/snapshot-2", lambda d: d.__setitem__("schemaId", 9))),
    "PAIMON-SNAP-015": ("append", lambda t: _json(t / "snapshot/snapshot-2",
                                                  lambda d: d.__setitem__("totalRecordCount", d["totalRecordCount"] + 1))),
    "PAIMON-LAYOUT-004": ("append", lambda t: os.remove(_delta_list(t))),
    "PAIMON-MLIST-005": ("append", lambda t: os.remove(_delta_manifest(t))),
    "PAIMON-MLIST-006": ("append", lambda t: _avro(_delta_list(t), _first(lambda r: r.__setitem__("_FILE_SIZE", r["_FILE_SIZE"] + 1)))),
    "PAIMON-MLIST-007": ("append", lambda t: _avro(_delta_list(t), _first(lambda r: r.__setitem__("_NUM_ADDED_FILES", 7)))),
    "PAIMON-MANIFEST-012": ("append", lambda t: _avro(_delta_manifest(t), lambda recs: recs + [recs[0]])),
    "PAIMON-MANIFEST-011": ("append", lambda t: _avro(_delta_manifest(t), _first(lambda r: r.__setitem__("_KIND", 1)))),
    "PAIMON-PART-006": ("append", lambda t: _avro(_delta_manifest(t), _first(lambda r: r.__setitem__("_PARTITION", bytes(12))))),
    "PAIMON-BUCKET-006": ("append", lambda t: _avro(_delta_manifest(t), _first(lambda r: r.__setitem__("_BUCKET", 1)))),
    "PAIMON-MANIFEST-022": ("append", lambda t: _avro(_delta_manifest(t), _file("_LEVEL", 1))),
    "PAIMON-MANIFEST-025": ("append", lambda t: _avro(_delta_manifest(t), _file("_DELETE_ROW_COUNT", lambda f: f["_ROW_COUNT"] + 1))),
    "PAIMON-MANIFEST-016": ("append", lambda t: _avro(_delta_manifest(t), _file("_ROW_COUNT", -1))),
    "PAIMON-LAYOUT-010": ("append", lambda t: [os.remove(p) for p in glob.glob(str(t / "p=y/bucket-0/*.parquet"))]),
    "PAIMON-MANIFEST-007": ("pk_fixed", lambda t: _avro(_delta_manifest(t), _first(lambda r: r.__setitem__("_BUCKET", 5)))),
    "PAIMON-MANIFEST-020": ("pk_fixed", lambda t: _avro(_delta_manifest(t), _file("_MIN_SEQUENCE_NUMBER", 1 << 40))),
    "PAIMON-LAYOUT-005": ("pk_fixed", lambda t: os.rename(_delta_manifest(t), t / "manifest/manifest-bad")
                          or _avro(_delta_list(t), _first(lambda r: r.__setitem__("_FILE_NAME", "manifest-bad")))),
    "PAIMON-LAYOUT-006": ("pk_dynamic", lambda t: os.remove(_index_manifest(t))),
    "PAIMON-SNAP-011": ("pk_dynamic", lambda t: _avro(_index_manifest(t), lambda recs: recs + [dict(recs[0], _KIND=1)])),
    "PAIMON-IDXMAN-007": ("pk_dynamic", lambda t: _avro(_index_manifest(t), lambda recs: recs + [recs[0]])),
    "PAIMON-LAYOUT-007": ("pk_dynamic", lambda t: os.remove(_hash_index(t))),
    "PAIMON-INDEX-001": ("pk_dynamic", lambda t: open(_hash_index(t), "ab").write(b"\x00")),
    "PAIMON-IDXMAN-005": ("pk_dynamic", lambda t: _avro(_index_manifest(t), _first(lambda r: r.__setitem__("_ROW_COUNT", r["_ROW_COUNT"] + 1)))),
    "PAIMON-SCHEMA-009": ("pk_fixed", lambda t: _schema_copy(t, 1, lambda d: d.__setitem__("primaryKeys", ["id", "p", "v"]))),
    # an aggregation table with aggregation.remove-record-on-delete and fields.v.ignore-retract (Paimon refuses the pair)
    "PAIMON-SCHEMA-010": ("pk_fixed", lambda t: _json(t / "schema/schema-0", lambda d: d["options"].update({
        "merge-engine": "aggregation", "aggregation.remove-record-on-delete": "true", "fields.v.ignore-retract": "true"}))),
}
# Rules a mutation also breaks, unavoidably (the edit changes what other checks see).
ALSO = {
    "PAIMON-MANIFEST-012": {"PAIMON-MLIST-006", "PAIMON-MLIST-007"},
    "PAIMON-MANIFEST-011": {"PAIMON-MLIST-006", "PAIMON-MLIST-007"},
    "PAIMON-MANIFEST-016": {"PAIMON-MLIST-006", "PAIMON-SNAP-015", "PAIMON-MANIFEST-025"},
    "PAIMON-MANIFEST-007": {"PAIMON-MLIST-006", "PAIMON-LAYOUT-010"},
    "PAIMON-BUCKET-006": {"PAIMON-MLIST-006", "PAIMON-LAYOUT-010"},
    "PAIMON-SNAP-011": {"PAIMON-IDXMAN-007"},
    "PAIMON-SCHEMA-008": {"PAIMON-PART-006"},  # the latest schema is partitioned differently from the files
}
PK_DYNAMIC_BASE = {"PAIMON-LAYOUT-006"}  # pypaimon's index-manifest names


@pytest.mark.parametrize("rule", sorted(MUTATIONS))
def test_mutation_breaks_its_rule(tables, tmp_path, rule, request):
    request.node.add_marker(pytest.mark.rule(rule))
    name, mutate = MUTATIONS[rule]
    t = tmp_path / name
    shutil.copytree(tables / name, t)
    mutate(t)
    found = _rules(t)
    assert rule in found
    allowed = {rule} | ALSO.get(rule, set()) | {"PAIMON-MLIST-006"} | (PK_DYNAMIC_BASE if name == "pk_dynamic" else set())
    assert found <= allowed, found - allowed


def test_every_check_has_a_mutation():
    relayed = {"PAIMON-SCHEMA-002", "PAIMON-SCHEMA-004", "PAIMON-SCHEMA-010", "PAIMON-SCHEMA-020", "PAIMON-SCHEMA-022",
               "PAIMON-BUCKET-001", "PAIMON-BUCKET-003", "PAIMON-BUCKET-004", "PAIMON-LAYOUT-011"}  # schema helpers' own tests
    assert set(CHECKS) - relayed <= set(MUTATIONS)


@pytest.mark.parametrize("what", ["snapshot", "schema", "manifest", "manifest-list", "index-manifest", "tag"])
def test_damaged_files_are_violations_at_that_file(tables, tmp_path, what):
    name = "pk_dynamic" if what == "index-manifest" else "append"
    t = tmp_path / name
    shutil.copytree(tables / name, t)
    path = {"snapshot": lambda: t / "snapshot/snapshot-2", "schema": lambda: t / "schema/schema-0",
            "manifest": lambda: _delta_manifest(t), "manifest-list": lambda: _delta_list(t),
            "index-manifest": lambda: _index_manifest(t), "tag": lambda: t / "tag/tag-t1"}[what]()
    data = open(path, "rb").read()
    open(path, "wb").write(data[: len(data) // 2])
    found = validate_table(str(t))
    rel = os.path.relpath(path, t)
    assert any(v.where.split(": ")[0] == rel for v in found), found


@pytest.mark.rule("PAIMON-SNAP-001")
def test_cli_validate_and_read(tables, tmp_path, capsys):
    path = str(tables / "append")
    assert main(["validate", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "paimon" and doc["violations"] == []
    out = str(tmp_path / "one.parquet")
    assert main(["read", path, "--snapshot-id", "1", "--out", out]) == 0
    import pyarrow.parquet as pq
    assert pq.read_table(out).num_rows == 3
    assert main(["read", path, "--tag", "t1", "--out", out]) == 0
    assert pq.read_table(out).num_rows == 3
    assert main(["read", path, "--at", "2", "--out", out]) == 0
    assert pq.read_table(out).num_rows == 5
    capsys.readouterr()
    assert main(["validate", str(tables / "pk_dynamic"), "--json"]) == 1
    assert {v["rule"] for v in json.loads(capsys.readouterr().out)["violations"]} == {"PAIMON-LAYOUT-006"}

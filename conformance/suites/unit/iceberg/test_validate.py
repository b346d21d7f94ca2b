"""Iceberg validator: real tables validate clean (or with their writers' known findings), broken input is
named by rule and never crashes it, and the check registry is what the harness counts.

The one-rule-per-mutation suite is ``test_validate_mutations.py``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import uuid

import pyarrow as pa
import pytest

from conformance.rules import all_rules
from conformance.formats.iceberg.strategies import build_table
from reference_impl.errors import InvalidTable
from reference_impl.iceberg.validate import CHECKS, RULES_CHECKED, Violation, validate_table


def rules_of(found: list[Violation]) -> set[str]:
    return {v.rule for v in found}


def show(found: list[Violation]) -> str:
    return "\n".join(f"{v.rule}: {v.message} @ {v.where}" for v in found)


# ------------------------------------------------------------------ finding the table and its metadata


def test_not_a_table_raises_invalid_table(tmp_path):
    """A directory without any metadata file is not a table: InvalidTable, not a list of violations."""
    with pytest.raises(InvalidTable) as exc:
        validate_table(str(tmp_path))
    assert exc.value.kind == "invalid_table" and "not an Iceberg table" in str(exc.value)


@pytest.mark.rule("ICEBERG-META-035", "ICEBERG-META-006")
def test_metadata_file_path_and_catalog_pointer(tmp_path):
    """The table can be named by a metadata file's path, or the current file chosen like a catalog would."""
    t = build_table(str(tmp_path / "t"), 2)
    assert validate_table(t.path(t.current)) == []
    older = t.metadata_files[-2]
    assert validate_table(t.root, metadata_location=t.uri(older)) == []
    # The highest-numbered file is current, whatever version-hint.text says (it is only a hint).
    with open(t.path("metadata/version-hint.text"), "w") as fh:
        fh.write("1")
    assert validate_table(t.root) == []


@pytest.mark.rule("ICEBERG-META-035")
def test_expired_metadata_files_are_allowed(tmp_path):
    """Metadata files removed after commit (write.metadata.delete-after-commit) are skipped, not reported."""
    t = build_table(str(tmp_path / "t"), 2)
    for rel in t.metadata_files[:-2]:
        os.remove(t.path(rel))
    assert validate_table(t.root) == []


@pytest.mark.rule("ICEBERG-META-044")
def test_gzip_metadata_is_read(tmp_path):
    """A GZIP'd metadata file (*.gz.metadata.json) is decoded by its magic and validated like any other."""
    import gzip

    t = build_table(str(tmp_path / "t"), 2)
    raw = open(t.path(t.current), "rb").read()
    gz = t.current.replace("metadata.json", "gz.metadata.json").replace("/v6.", "/v7.")
    open(t.path(gz), "wb").write(gzip.compress(raw))
    found = validate_table(t.root)
    # v7 repeats v6 byte for byte: only "the newest earlier file is not in the metadata-log" is left.
    assert rules_of(found) == {"ICEBERG-META-035"}, show(found)


# ------------------------------------------------------------------ tables written by others


def _pyiceberg_table(root: str, version: int) -> str:
    """A partitioned pyiceberg table (SQL catalog on SQLite): appends, a delete, a schema change, a tag."""
    import datetime as dt

    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import BucketTransform, DayTransform, TruncateTransform
    from pyiceberg.types import DoubleType, IntegerType, ListType, LongType, NestedField, StringType, StructType, TimestampType

    os.makedirs(root, exist_ok=True)
    cat = SqlCatalog("c", uri=f"sqlite:///{root}/cat.db", warehouse=f"file://{root}")
    cat.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "s", StringType(), required=False),
        NestedField(3, "ts", TimestampType(), required=False), NestedField(4, "d", DoubleType(), required=False),
        NestedField(5, "st", StructType(NestedField(6, "a", IntegerType(), required=False)), required=False),
        NestedField(7, "l", ListType(8, LongType(), element_required=False), required=False),
    )
    spec = PartitionSpec(PartitionField(1, 1000, BucketTransform(4), "id_b"), PartitionField(3, 1001, DayTransform(), "ts_day"),
                         PartitionField(2, 1002, TruncateTransform(2), "s_t"))
    t = cat.create_table("db.t", schema, partition_spec=spec, properties={"format-version": str(version)})
    rows = pa.table({
        "id": pa.array([1, 2, 3, None], pa.int64()), "s": ["abc", "abd", None, "zz"],
        "ts": pa.array([dt.datetime(2024, 1, 1, 1), dt.datetime(2024, 1, 2), None, dt.datetime(1960, 5, 5)], pa.timestamp("us")),
        "d": [1.5, float("nan"), None, -0.0],
        "st": pa.array([{"a": 1}, None, {"a": None}, {"a": 4}], pa.struct([("a", pa.int32())])),
        "l": pa.array([[1], None, [], [2, 3]], pa.list_(pa.int64())),
    })
    t.append(rows)
    t.append(rows.slice(0, 2))
    t.delete("id = 2")
    with t.update_schema() as u:
        u.add_column("x", StringType())
    t = cat.load_table("db.t")
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "tg").commit()
    return os.path.join(root, "db", "t")


@pytest.mark.rule("ICEBERG-MANIFEST-005", "ICEBERG-GEN-002", "ICEBERG-FMT-009", "ICEBERG-MANIFEST-029", "ICEBERG-MANIFEST-030",
                  "ICEBERG-PART-001", "ICEBERG-MLIST-016", "ICEBERG-SEQ-013")
@pytest.mark.parametrize("version", [1, 2])
def test_pyiceberg_tables_break_only_known_rules(tmp_path, version):
    """pyiceberg tables validate but for what it is known to do: v2 manifests without schema-id
    (MANIFEST-005, as Java: apache/iceberg#8745) and refs written into v1 metadata (GEN-002, a SHOULD)."""
    pytest.importorskip("pyiceberg")
    root = _pyiceberg_table(str(tmp_path / "w"), version)
    found = validate_table(root)
    assert rules_of(found) == ({"ICEBERG-GEN-002"} if version == 1 else {"ICEBERG-MANIFEST-005"}), show(found)


def _writer_table(root: str, version: int, how: str | None) -> str:
    """A table written by the reference writer: partitioned appends, deletes, an update, schema and spec evolution,
    refs and a branch commit (v2+), compaction and snapshot expiry."""
    import datetime as dt

    W = pytest.importorskip("reference_impl.iceberg.writer")

    def rows(n, off=0):
        return pa.table({"id": pa.array(range(off, off + n), pa.int64()), "cat": pa.array([["a", "b", "c"][i % 3] for i in range(n)]),
                         "ts": pa.array([dt.datetime(2024, 1, 1 + i % 3) for i in range(n)], pa.timestamp("us")),
                         "x": pa.array([float(i) if i % 4 else float("nan") for i in range(n)])})

    W.create_table(root, rows(1).schema, partition_by=("cat", "bucket(4, id)", "day(ts)"), format_version=version)
    W.append(root, rows(10))
    W.append(root, rows(5, 100), files=2)
    W.delete(root, "id = 3", how=how)
    W.delete(root, "id = 4", how=how)
    W.update(root, {"x": "1.0"}, "id = 5")
    W.add_column(root, pa.field("note", pa.string()))
    W.set_partitioning(root, ("cat", "truncate(10, id)"))
    W.append(root, rows(3, 200).append_column("note", pa.array(["n"] * 3)))
    if version >= 2:
        W.create_ref(root, "t1", "tag")
        W.create_ref(root, "b1", "branch")
        W.append(root, rows(2, 300).append_column("note", pa.array(["m"] * 2)), branch="b1")
    W.optimize(root)
    W.expire_snapshots(root, retain_last=2)
    return root


@pytest.mark.rule("ICEBERG-META-006", "ICEBERG-META-011", "ICEBERG-SEQ-002", "ICEBERG-SEQ-006", "ICEBERG-SEQ-012", "ICEBERG-SEQ-013",
                  "ICEBERG-MLIST-010", "ICEBERG-MLIST-011", "ICEBERG-MLIST-016", "ICEBERG-DV-006", "ICEBERG-DV-008",
                  "ICEBERG-DV-009", "ICEBERG-DV-011", "ICEBERG-DELETE-006", "ICEBERG-DELETE-009", "ICEBERG-MANIFEST-035",
                  "ICEBERG-LINEAGE-011", "ICEBERG-LINEAGE-013", "ICEBERG-LINEAGE-016", "ICEBERG-PART-001", "ICEBERG-PART-031",
                  "ICEBERG-MANIFEST-029", "ICEBERG-MANIFEST-030", "ICEBERG-GEN-008", "ICEBERG-FMT-009", "ICEBERG-SNAP-008")
@pytest.mark.parametrize("version,how", [(1, None), (2, "copy-on-write"), (2, "position-deletes"), (2, "equality-deletes"),
                                         (3, "copy-on-write"), (3, "deletion-vectors")])
def test_reference_writer_tables_are_clean(tmp_path, version, how):
    """Tables the reference writer builds through every operation and delete mechanism break no rule."""
    root = _writer_table(str(tmp_path / "w"), version, how)
    found = validate_table(root)
    assert found == [], show(found)


# ------------------------------------------------------------------ on S3 (MinIO)


@pytest.mark.rule("ICEBERG-META-031")
def test_table_on_minio(tmp_path_factory):
    """The validator reads a table through S3 like a local one: clean, then a missing data file is named."""
    from conformance.storage.testing import minio_or_skip
    from reference_impl.storage import S3Storage

    server = minio_or_skip(str(tmp_path_factory.mktemp("minio")))
    try:
        st = S3Storage(f"s3://{server.bucket}/t-{uuid.uuid4().hex[:8]}", server.s3_config)
        t = build_table(st, 3)
        assert validate_table(st) == []
        st.delete(t.files["c"])
        found = validate_table(st)
        assert rules_of(found) == {"ICEBERG-META-031"} and found[0].where == t.files["c"], show(found)
    finally:
        server.stop()


# ------------------------------------------------------------------ registry


def test_violation_shape_and_checks_registry():
    """Violations are (rule, message, where); every registered check declares the rules it reports and says what it checks."""
    v = Violation(rule="ICEBERG-META-001", message="m", where="w")
    assert v.to_dict() == {"rule": "ICEBERG-META-001", "message": "m", "where": "w"}
    assert RULES_CHECKED == frozenset(CHECKS)
    for rule, fn in CHECKS.items():
        assert rule.startswith("ICEBERG-") and callable(fn) and rule in fn.rules
        assert fn.__doc__


def test_checked_rules_are_catalogued_and_cover_the_table_side():
    """Every checked id is in the catalog, and most MUST rules a table can show (writer or both side) have a check."""
    iceberg = {rid: r for rid, r in all_rules().items() if rid.startswith("ICEBERG-")}
    assert set(CHECKS) <= set(iceberg)
    table_side = [r for r in iceberg.values() if r.binds in ("writer", "both") and r.strength in ("MUST", "required-field")]
    covered = [r for r in table_side if r.id in CHECKS]
    assert len(covered) >= 0.5 * len(table_side), (len(covered), len(table_side))


# ------------------------------------------------------------------ robustness: never crash

WRONG = [None, "x", 1.5, -1, [], {"a": [1]}, True, 2**70]


def _wrong_metadata_cases():
    keys = ["format-version", "table-uuid", "location", "last-sequence-number", "last-updated-ms", "last-column-id", "schemas",
            "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id", "properties", "current-snapshot-id",
            "snapshots", "snapshot-log", "metadata-log", "sort-orders", "default-sort-order-id", "refs", "statistics",
            "partition-statistics", "next-row-id"]
    for k in keys:
        for j in range(len(WRONG)):
            yield pytest.param(k, j, id=f"{k}-{j}")


@pytest.fixture(scope="module")
def v3_template(tmp_path_factory):
    base = tmp_path_factory.mktemp("robust")
    t = build_table(str(base / "t"), 3)
    shutil.copytree(t.root, str(base / "pristine"))
    return t, str(base / "pristine")


def _restore(t, pristine: str):
    shutil.rmtree(t.root)
    shutil.copytree(pristine, t.root)


@pytest.mark.parametrize("key,j", list(_wrong_metadata_cases()))
def test_wrongly_typed_metadata_never_crashes(v3_template, key, j):
    """Any top-level metadata field set to a wrongly typed value gives violations, never an exception or an internal error."""
    t, pristine = v3_template
    _restore(t, pristine)
    t.edit_doc(lambda d: d.update({key: WRONG[j]}))
    found = validate_table(t.root)
    optional = key in ("properties", "current-snapshot-id", "snapshots", "snapshot-log", "metadata-log", "refs", "statistics",
                       "partition-statistics")
    assert found or (optional and WRONG[j] in (None, [])), "a wrongly typed field went unnoticed"




def test_wrong_values_inside_snapshots_refs_and_specs_never_crash(v3_template):
    """Every field of a snapshot, a ref, a spec field, a schema field and a log entry, set to each wrong value."""
    t, pristine = v3_template
    doc = t.doc()
    paths = []
    for k in doc["snapshots"][1]:
        paths.append(("snapshots", 1, k))
    for k in doc["refs"]["main"]:
        paths.append(("refs", "main", k))
    for k in doc["partition-specs"][1]["fields"][0]:
        paths.append(("partition-specs", 1, "fields", 0, k))
    for k in doc["schemas"][1]["fields"][0]:
        paths.append(("schemas", 1, "fields", 0, k))
    for k in doc["snapshot-log"][0]:
        paths.append(("snapshot-log", 0, k))
    for k in doc["metadata-log"][0]:
        paths.append(("metadata-log", 0, k))
    rng = random.Random(7)
    for path in paths:
        bad = WRONG[rng.randrange(len(WRONG))]
        _restore(t, pristine)

        def f(d, path=path, bad=bad):
            node = d
            for p in path[:-1]:
                node = node[p]
            node[path[-1]] = bad
        t.edit_doc(f)
        validate_table(t.root)  # a crashing check raises Internal


@pytest.mark.parametrize("target", ["manifest", "list", "data", "puffin", "metadata"])
def test_corrupted_files_never_crash(v3_template, target):
    """Truncated or bit-flipped manifests, manifest lists, data files, Puffin files and metadata give violations, never a crash."""
    t, pristine = v3_template
    rng = random.Random(hash(target) & 0xFFFF)
    for trial in range(6):
        _restore(t, pristine)
        rel = {"manifest": t.manifests["m5"], "list": t.manifest_lists[t.snapshot_ids["S5"]], "data": t.files["a"],
               "puffin": t.files["dv"], "metadata": t.current}[target]
        data = bytearray(open(t.path(rel), "rb").read())
        if trial % 2:
            data = data[: rng.randrange(1, len(data))]
        else:
            for _ in range(4):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
        open(t.path(rel), "wb").write(bytes(data))
        validate_table(t.root)  # a crashing check raises Internal


def test_metadata_that_is_not_an_object_is_reported(tmp_path):
    """A metadata file holding a JSON list is META-001, and nothing else can run."""
    t = build_table(str(tmp_path / "t"), 2)
    open(t.path(t.current), "w").write(json.dumps([1, 2]))
    assert rules_of(validate_table(t.root)) == {"ICEBERG-META-001"}

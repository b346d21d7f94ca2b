"""PyIceberg's catalog tables through the command line, addressed the ways its users address them.

PyIceberg commits through a SQL catalog: metadata files are named ``<NNNNN>-<uuid>.metadata.json``
and no version hint is written, so only the catalog knows which file is current. Its users hand
engines that file (a static table, DuckDB's ``iceberg_scan``, Spark's ``load(<file>)``) or the
table's directory. Each form is read through ``lakeconf read`` (by snapshot id, tag and time too)
and compared with PyIceberg's own scan of the same snapshot; ``lakeconf validate`` judges the table,
and every violation must be a writer-side finding of the registry.
"""

from __future__ import annotations

import posixpath
import uuid

import pyarrow as pa
import pytest

from conformance.suites.clirun import same_rows
from conformance.writer_checks import explain_violation

pyiceberg = pytest.importorskip("pyiceberg")
pytest.importorskip("sqlalchemy", reason="pyiceberg's SqlCatalog needs sqlalchemy")

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("s", pa.string())])
PEER_TABLE = "iceberg/peer-table"  # registry entries name cases by glob; this table is no case of the corpus


@pytest.fixture
def catalog_table(store, tmp_path):
    """A v2 table with three snapshots (append, append, delete) and a tag on the first."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.expressions import EqualTo

    from conformance.formats.iceberg.s3 import pyiceberg_properties

    ref = store.table_ref("iceberg", f"pyiceberg-{uuid.uuid4().hex[:8]}")
    warehouse = ref.uri if store.is_s3 else "file://" + ref.uri
    props = pyiceberg_properties(store.s3_config) if store.is_s3 else {}
    cat = SqlCatalog("peer", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=warehouse, **props)
    cat.create_namespace("ns")
    t = cat.create_table("ns.t", schema=SCHEMA, properties={"format-version": "2"})
    t.append(pa.table({"id": [1, 2, 3], "s": ["a", "b", None]}, schema=SCHEMA))
    t.append(pa.table({"id": [4], "s": ["d"]}, schema=SCHEMA))
    t.delete(EqualTo("id", 2))
    t = cat.load_table("ns.t")
    first = t.snapshots()[0]
    t.manage_snapshots().create_tag(first.snapshot_id, "first").commit()
    return cat.load_table("ns.t")


@pytest.mark.rule("ICEBERG-META-001", "ICEBERG-SNAP-015", "ICEBERG-REF-001")
def test_a_catalog_table_by_its_metadata_file(catalog_table, lakeconf):
    t = catalog_table
    location = t.metadata_location
    assert posixpath.basename(location)[:5].isdigit(), location  # a catalog-named file, no version hint

    rows, note = lakeconf.read(location)
    assert same_rows(rows, t.scan().to_arrow()) and rows.num_rows == 3 and note == ""
    for s in t.snapshots():
        rows, _ = lakeconf.read(location, "--snapshot-id", str(s.snapshot_id))
        assert same_rows(rows, t.scan(snapshot_id=s.snapshot_id).to_arrow()), s.snapshot_id
    first = t.snapshots()[0]
    rows, _ = lakeconf.read(location, "--ref", "first")
    assert same_rows(rows, t.scan(snapshot_id=first.snapshot_id).to_arrow())
    rows, _ = lakeconf.read(location, "--as-of", str(first.timestamp_ms))
    assert same_rows(rows, t.scan(snapshot_id=first.snapshot_id).to_arrow())

    # an older metadata file is the table as the catalog once pointed at it
    from pyiceberg.table import StaticTable

    older = t.metadata.metadata_log[-2].metadata_file
    rows, _ = lakeconf.read(older)
    assert same_rows(rows, StaticTable.from_metadata(older, properties=t.io.properties).scan().to_arrow())


def test_a_catalog_table_by_its_directory_says_which_file_it_read(catalog_table, lakeconf):
    t = catalog_table
    root = t.metadata_location.rsplit("/metadata/", 1)[0]
    rows, note = lakeconf.read(root)
    assert same_rows(rows, t.scan().to_arrow())
    # no version hint: the highest-numbered file is read, and the user is told so and how to pick another
    assert posixpath.basename(t.metadata_location) in note and "pass its path" in note
    assert lakeconf("read", root, "--snapshot-id", "1", "--at", "1", "--out", "x.parquet").code == 2


@pytest.mark.rule("ICEBERG-MANIFEST-005")
def test_a_catalog_table_validates_but_for_known_writer_findings(catalog_table, lakeconf, store):
    t = catalog_table
    violations = lakeconf.validate(t.metadata_location)
    assert violations == lakeconf.validate(t.metadata_location.rsplit("/metadata/", 1)[0])
    unexplained = [v for v in violations if explain_violation(
        PEER_TABLE, "pyiceberg", v["rule"], v["message"], store=store.name, writer_version=pyiceberg.__version__) is None]
    assert not unexplained, (
        "PyIceberg's table breaks rules no writer-side finding explains: register them in "
        f"conformance/formats/iceberg/findings.py (status='violation') or fix the validator: {unexplained}")
    assert violations, "a stale finding: PyIceberg's manifests now carry schema-id; update the registry"


def test_a_missing_metadata_file_and_a_version_of_another_format_are_clear_errors(catalog_table, lakeconf):
    missing = catalog_table.metadata_location.rsplit("/", 1)[0] + "/99999-nothing.metadata.json"
    done = lakeconf("read", missing, "--out", "x.parquet")
    assert done.code == 2 and "99999-nothing.metadata.json" in done.err and "Traceback" not in done.err

"""pypaimon's catalog tables through the command line, addressed the ways Paimon's users address them.

pypaimon creates tables through its file-system catalog: the table lives at
``<warehouse>/<db>.db/<table>``, with ``snapshot/``, ``schema/`` and the ``EARLIEST``/``LATEST`` hints.
Its users hand engines that directory (a local path or an ``s3://`` URI) and name a version the
Paimon way: a snapshot id, a tag, a time. Each form is read through ``lakeconf read`` and compared
with pypaimon's own read of the same snapshot; ``lakeconf validate`` judges the table, and every
violation must be a writer-side finding of the registry.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from conformance.suites.clirun import same_rows
from conformance.writer_checks import explain_violation

pypaimon = pytest.importorskip("pypaimon")

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("p", pa.string()),
                    pa.field("s", pa.string())])
PEER_TABLE = "paimon/peer-table"  # registry entries name cases by glob; this table is no case of the corpus


def _catalog_options(store, warehouse: str) -> dict[str, str]:
    """The catalog options a pypaimon user passes for this store (``fs.s3.*`` on MinIO)."""
    opts = {"warehouse": warehouse}
    cfg = store.s3_config
    if cfg is not None:
        opts.update({"fs.s3.endpoint": cfg.endpoint_url, "fs.s3.accessKeyId": cfg.access_key_id,
                     "fs.s3.accessKeySecret": cfg.secret_access_key, "fs.s3.region": cfg.region,
                     "fs.s3.path-style-access": "true"})
    return opts


@pytest.fixture
def catalog_table(store):
    """A partitioned primary-key table with three snapshots (insert, upsert, insert) and a tag on the first."""
    from pypaimon import CatalogFactory, Schema

    warehouse = store.table_ref("paimon", f"pypaimon-{uuid.uuid4().hex[:8]}").uri
    cat = CatalogFactory.create(_catalog_options(store, warehouse))
    cat.create_database("db", False)
    cat.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["p"], primary_keys=["id", "p"],
                                                        options={"bucket": "2"}), False)
    t = cat.get_table("db.t")
    for rows in ({"id": [1, 2, 3], "p": ["a", "b", "a"], "s": ["x", "y", None]},
                 {"id": [2], "p": ["b"], "s": ["y2"]},
                 {"id": [4], "p": ["c/d e"], "s": ["escaped partition"]}):
        wb = t.new_batch_write_builder()
        w, c = wb.new_write(), wb.new_commit()
        w.write_arrow(pa.table(rows, schema=SCHEMA))
        c.commit(w.prepare_commit())
        w.close()
        c.close()
    t.create_tag("first", snapshot_id=1)
    return cat.get_table("db.t"), f"{warehouse.rstrip('/')}/db.db/t"


def _pypaimon_read(t, options=None) -> pa.Table:
    if options:
        t = t.copy(options)
    rb = t.new_read_builder()
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


@pytest.mark.rule("PAIMON-LAYOUT-001", "PAIMON-SNAP-001")
def test_a_catalog_table_by_its_directory_snapshot_id_tag_and_time(catalog_table, lakeconf):
    t, root = catalog_table
    rows, note = lakeconf.read(root)
    assert same_rows(rows, _pypaimon_read(t)) and rows.num_rows == 4 and note == ""
    for sid in (1, 2, 3):
        rows, _ = lakeconf.read(root, "--snapshot-id", str(sid))
        assert same_rows(rows, _pypaimon_read(t, {"scan.snapshot-id": str(sid)})), sid
        assert same_rows(rows, lakeconf.read(root, "--at", str(sid))[0]), sid
    rows, _ = lakeconf.read(root, "--tag", "first")
    assert same_rows(rows, _pypaimon_read(t, {"scan.tag-name": "first"})) and rows.num_rows == 3
    first = t.snapshot_manager().get_snapshot_by_id(1)
    rows, _ = lakeconf.read(root, "--as-of", str(first.time_millis))
    assert same_rows(rows, _pypaimon_read(t, {"scan.snapshot-id": "1"}))


@pytest.mark.rule("PAIMON-SNAP-001")
def test_a_version_the_table_does_not_have_is_a_clear_error(catalog_table, lakeconf):
    _, root = catalog_table
    for option, value in (("--snapshot-id", "99"), ("--tag", "no-such-tag")):
        done = lakeconf("read", root, option, value, "--out", "x.parquet")
        assert done.code != 0 and value in done.err and "Traceback" not in done.err, (option, done.err)
    # Iceberg's way of naming a ref is not Paimon's: a usage error that says which option to use
    done = lakeconf("read", root, "--ref", "first", "--out", "x.parquet")
    assert done.code == 2 and "--tag" in done.err, done.err


def test_a_catalog_table_validates_but_for_known_writer_findings(catalog_table, lakeconf, store):
    _, root = catalog_table
    violations = lakeconf.validate(root)
    unexplained = [v for v in violations if explain_violation(
        PEER_TABLE, "pypaimon", v["rule"], v["message"], store=store.name, writer_version=pypaimon.__version__) is None]
    assert not unexplained, (
        "pypaimon's table breaks rules no writer-side finding explains: register them in "
        f"conformance/formats/paimon/findings.py (status='violation') or fix the validator: {unexplained}")

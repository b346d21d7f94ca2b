"""Committing metadata: the file-system layout (v<N>.metadata.json + version hint) and the SQL catalog on SQLite,
on local disk and MinIO; PyIceberg's SQL catalog reads and writes the same catalog database."""

from __future__ import annotations

import sqlite3

import pyarrow as pa
import pytest

from conformance.storage import open_store
from conformance.storage.testing import skip_without_minio
from reference_impl.errors import CommitConflict, InvalidTable
from reference_impl.iceberg import catalog as C
from reference_impl.iceberg import writer as W
from reference_impl.iceberg.validate import validate_table

SCHEMA = pa.schema([pa.field("id", pa.int64())])


@pytest.fixture(scope="module", params=["local", "minio"])
def store(request, tmp_path_factory):
    """Tables on local disk, and on a MinIO server (skipped with the reason when none can start)."""
    if request.param == "minio":
        skip_without_minio()
    opened = open_store(request.param, str(tmp_path_factory.mktemp(f"catalog-{request.param}")))
    yield opened
    opened.close()


def _names(storage) -> list[str]:
    return sorted(f.path.rsplit("/", 1)[-1] for f in storage.list("metadata") if f.path.endswith(".metadata.json"))


@pytest.mark.rule("ICEBERG-COMMIT-008", "ICEBERG-COMMIT-001")
def test_file_system_layout_commits_by_put_if_absent(store, request):
    storage = store.storage(store.table_uri(f"fs-{request.node.callspec.id}"))
    cat = C.FileSystemCatalog()
    W.create_table(storage, SCHEMA)
    assert _names(storage) == ["v1.metadata.json"] and storage.read(C.VERSION_HINT) == b"1"
    with pytest.raises(C.TableExists):
        W.create_table(storage, SCHEMA)
    base = cat.load(storage)
    assert base.version == 1 and base.uri == storage.uri("metadata/v1.metadata.json")
    r = W.append(storage, pa.table({"id": [1]}))
    assert r.metadata_version == 2 and storage.read(C.VERSION_HINT) == b"2"
    # A writer still on version 1 loses: v2 exists, put-if-absent refuses to replace it.
    with pytest.raises(CommitConflict) as exc:
        cat.commit(storage, base, base.metadata)
    assert exc.value.rule == "ICEBERG-COMMIT-001"
    assert _names(storage) == ["v1.metadata.json", "v2.metadata.json"]
    assert validate_table(storage) == []


def test_version_hint_is_only_a_hint(tmp_path):
    storage = W._storage(str(tmp_path / "t"))
    cat = C.FileSystemCatalog()
    W.create_table(storage, SCHEMA)
    W.append(storage, pa.table({"id": [1]}))
    W.append(storage, pa.table({"id": [2]}))
    storage.write_atomic(C.VERSION_HINT, b"1")  # a hint that lags behind: readers probe upward
    assert cat.load(storage).version == 3
    storage.delete(C.VERSION_HINT)  # no hint: listing finds the highest version
    assert cat.load(storage).version == 3
    storage.write_atomic(C.VERSION_HINT, b"garbage")
    assert cat.load(storage).version == 3
    # A committer whose hint write lands after a newer commit corrects it (concurrent writers).
    cat._write_hint(storage, 1)
    assert storage.read(C.VERSION_HINT) == b"3"


def test_no_table_and_catalog_named_tables(tmp_path):
    storage = W._storage(str(tmp_path / "none"))
    with pytest.raises(InvalidTable, match="no Iceberg table"):
        C.FileSystemCatalog().load(storage)
    sql = C.SqlCatalog(str(tmp_path / "c.db"), table="t")
    W.create_table(storage, SCHEMA, catalog=sql)
    with pytest.raises(InvalidTable, match="tracked by a catalog") as exc:
        W.append(storage, pa.table({"id": [1]}))
    assert exc.value.rule == "ICEBERG-COMMIT-009"
    with pytest.raises(C.TableExists):
        W.create_table(storage, SCHEMA)


@pytest.mark.rule("ICEBERG-COMMIT-009", "ICEBERG-COMMIT-001", "ICEBERG-META-035")
def test_sql_catalog_compare_and_swap(store, request, tmp_path):
    storage = store.storage(store.table_uri(f"sql-{request.node.callspec.id}"))
    db = str(tmp_path / "catalog.db")
    cat = C.SqlCatalog(db, table="events", namespace="ns")
    created = W.create_table(storage, SCHEMA, catalog=cat)
    assert created.metadata_version == 0 and C.catalog_version_of(created.metadata_location) == 0
    base = cat.load(storage)
    r = W.append(storage, pa.table({"id": [1, 2]}), catalog=cat)
    assert C.catalog_version_of(r.metadata_location) == 1 and r.metadata.metadata_log[-1].metadata_file == base.uri
    with sqlite3.connect(db) as con:
        row = con.execute("SELECT catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type "
                          "FROM iceberg_tables").fetchone()
        ns = con.execute("SELECT namespace, property_key, property_value FROM iceberg_namespace_properties").fetchall()
    assert row == ("lakeconf", "ns", "events", r.metadata_location, base.uri, "TABLE")
    assert ns == [("ns", "exists", "true")]
    # A writer still on the old pointer loses the swap; its file is removed so listing readers never see it.
    before = _names(storage)
    with pytest.raises(CommitConflict) as exc:
        cat.commit(storage, base, base.metadata)
    assert exc.value.rule == "ICEBERG-COMMIT-009"
    assert _names(storage) == before and cat.current_location() == r.metadata_location
    with pytest.raises(C.TableExists):
        W.create_table(storage, SCHEMA, catalog=cat)
    assert validate_table(storage, metadata_location=r.metadata_location) == []
    with pytest.raises(InvalidTable, match="no table ns.other"):
        C.SqlCatalog(db, table="other", namespace="ns").load(storage)


def test_pyiceberg_sql_catalog_shares_the_database(tmp_path):
    """PyIceberg's SqlCatalog loads tables our catalog committed, commits on top, and we commit after it."""
    pytest.importorskip("sqlalchemy")
    sql = pytest.importorskip("pyiceberg.catalog.sql")
    db = str(tmp_path / "catalog.db")
    location = str(tmp_path / "wh" / "default" / "t")
    cat = C.SqlCatalog(db, table="t")
    W.create_table(location, SCHEMA, catalog=cat)
    W.append(location, pa.table({"id": [1, 2]}), catalog=cat)
    py = sql.SqlCatalog(C.DEFAULT_CATALOG_NAME, uri=f"sqlite:///{db}", warehouse=f"file://{tmp_path / 'wh'}")
    assert ("default", "t") in py.list_tables("default")
    table = py.load_table(("default", "t"))
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == [1, 2]
    table.append(pa.table({"id": [3]}))  # PyIceberg's commit: the same UPDATE ... WHERE metadata_location = ?
    assert C.catalog_version_of(cat.current_location()) == 2
    r = W.append(location, pa.table({"id": [4]}), catalog=cat)
    assert r.metadata_version == 3 and r.sequence_number == 3
    assert sorted(py.load_table(("default", "t")).scan().to_arrow().column("id").to_pylist()) == [1, 2, 3, 4]

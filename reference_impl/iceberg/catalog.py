"""Table Metadata commits: File System Tables and Metastore Tables (the atomic swap of the current metadata).

The spec leaves the atomic swap to whoever tracks the table (COMMIT-007); two trackers are here:

* ``FileSystemCatalog`` -- the "File System Tables" layout: ``metadata/v<V>.metadata.json``. The
  commit of version V+1 is the creation of ``v<V+1>.metadata.json`` through
  ``Storage.put_if_absent`` (a link on local disk, ``If-None-Match: *`` on S3), which is what the
  spec's "rename to the well-known name, fail if it exists" needs and what plain renames on object
  stores cannot give (the reason the spec calls the scheme unsafe). ``metadata/version-hint.text``
  is written after the commit as a hint only: readers probe upward from it and fall back to listing.
* ``SqlCatalog`` -- a "Metastore Table" on SQLite, in the ``iceberg_tables`` layout of the Java
  JDBC catalog and PyIceberg's SQL catalog (``catalog_name``, ``table_namespace``, ``table_name``,
  ``metadata_location``, ``previous_metadata_location``, ``iceberg_type``). Metadata files are named
  ``<V>-<uuid>.metadata.json`` (V zero-padded to five digits, as Java and PyIceberg write it) and the
  swap is ``UPDATE ... WHERE metadata_location = <the base>``: one row changed or a conflict. The
  metadata lives in the table's storage (local disk or S3); the database is a local file.

Both raise ``CommitConflict`` when the base is no longer current; the writer then re-reads and
re-applies its change (Commit Conflict Resolution and Retry).
"""

from __future__ import annotations

import posixpath
import re
import sqlite3
from dataclasses import dataclass
from reference_impl.common.numbers import ascii_int
from reference_impl.errors import CommitConflict, InvalidTable
from reference_impl.iceberg import metadata as M
from reference_impl.storage import Storage, new_uuid

METADATA_DIR = "metadata"
VERSION_HINT = f"{METADATA_DIR}/version-hint.text"
FS_NAME_RE = re.compile(r"^v(\d{1,40})\.metadata\.json$", re.ASCII)
CATALOG_NAME_RE = re.compile(r"^(\d{1,40})-[0-9a-fA-F-]{36}\.metadata\.json$", re.ASCII)
FIRST_FS_VERSION = 1  # HadoopTableOperations writes v1.metadata.json at create
FIRST_CATALOG_VERSION = 0  # Java's and PyIceberg's catalogs write 00000-<uuid>.metadata.json at create

# JDBC / PyIceberg SQL catalog schema.
TABLES = "iceberg_tables"
NAMESPACE_PROPERTIES = "iceberg_namespace_properties"
ICEBERG_TYPE_TABLE = "TABLE"
DEFAULT_CATALOG_NAME = "lakeconf"
DEFAULT_NAMESPACE = "default"


class TableExists(CommitConflict):
    """``create`` where a table already is."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Loaded:
    """Current metadata as loaded: the model, where its file is (root-relative and URI), its version V."""

    metadata: M.TableMetadata
    path: str
    uri: str
    version: int


def metadata_bytes(md: M.TableMetadata) -> bytes:
    """The bytes of a metadata file (plain JSON, keys in the spec's order)."""
    return M.metadata_to_json(md).encode("utf-8")


def _parse(storage: Storage, rel: str) -> M.TableMetadata:
    try:
        data = storage.read(rel)
    except FileNotFoundError:
        raise InvalidTable(f"metadata file {storage.uri(rel)} does not exist", path=storage.uri(rel), rule="ICEBERG-META-001") from None
    return M.parse_metadata(data, path=storage.uri(rel))


class Catalog:
    """How a table's current metadata is found and swapped."""

    def load(self, storage: Storage) -> Loaded:  # pragma: no cover - interface
        """The current metadata; InvalidTable when there is no table."""
        raise NotImplementedError

    def exists(self, storage: Storage) -> bool:  # pragma: no cover - interface
        """Whether a table is tracked here."""
        raise NotImplementedError

    def create(self, storage: Storage, md: M.TableMetadata) -> Loaded:  # pragma: no cover - interface
        """Commit the first metadata; ``TableExists`` if there already is a table."""
        raise NotImplementedError

    def commit(self, storage: Storage, base: Loaded, md: M.TableMetadata) -> Loaded:  # pragma: no cover - interface
        """Make ``md`` current if ``base`` still is; ``CommitConflict`` otherwise."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# File System Tables


def fs_metadata_path(version: int) -> str:
    """``metadata/v<V>.metadata.json``."""
    return f"{METADATA_DIR}/v{version}.metadata.json"


def _fs_versions(storage: Storage) -> list[int]:
    out = []
    for f in storage.list(METADATA_DIR):
        m = FS_NAME_RE.match(posixpath.basename(f.path))
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


def _catalog_named(storage: Storage) -> list[str]:
    return [f.path for f in storage.list(METADATA_DIR) if CATALOG_NAME_RE.match(posixpath.basename(f.path))]


class FileSystemCatalog(Catalog):
    """The file-system layout: ``v<V>.metadata.json`` created with put-if-absent, then the version hint."""

    def _hint(self, storage: Storage) -> int | None:
        try:
            text = storage.read(VERSION_HINT).decode("utf-8", "replace").strip()
        except FileNotFoundError:
            return None
        return ascii_int(text)

    def current_version(self, storage: Storage) -> int | None:
        """The highest committed V: from the hint, probing upward (hints lag behind commits), else by listing."""
        hint = self._hint(storage)
        if hint is not None and storage.exists(fs_metadata_path(hint)):
            v = hint
            while storage.exists(fs_metadata_path(v + 1)):
                v += 1
            return v
        versions = _fs_versions(storage)
        return versions[-1] if versions else None

    def exists(self, storage: Storage) -> bool:
        return self.current_version(storage) is not None or bool(_catalog_named(storage))

    def load(self, storage: Storage) -> Loaded:
        v = self.current_version(storage)
        if v is None:
            if _catalog_named(storage):
                raise InvalidTable(f"the table at {storage.root} is tracked by a catalog (<V>-<uuid>.metadata.json files), not by the file-system layout",
                                   rule="ICEBERG-COMMIT-009", hint="open it through its catalog (SqlCatalog)")
            raise InvalidTable(f"no Iceberg table at {storage.root} (no metadata/v<N>.metadata.json)", rule="ICEBERG-META-001")
        rel = fs_metadata_path(v)
        return Loaded(metadata=_parse(storage, rel), path=rel, uri=storage.uri(rel), version=v)

    def _write_hint(self, storage: Storage, version: int) -> None:
        # Concurrent committers write their hints in any order: after writing ours, look for a
        # newer version and write that instead, until no newer one shows up. Readers that trust
        # the hint without probing then see the latest version once the writers are done.
        written = None
        try:
            while written != version:
                storage.write_atomic(VERSION_HINT, str(version).encode("ascii"))
                written = version
                while storage.exists(fs_metadata_path(version + 1)):
                    version += 1
        except OSError:
            pass  # a hint only: readers that probe or list still find the current version

    def create(self, storage: Storage, md: M.TableMetadata) -> Loaded:
        if self.exists(storage):
            raise TableExists(f"a table already exists at {storage.root}", path=storage.uri(METADATA_DIR), rule="ICEBERG-COMMIT-008")
        rel = fs_metadata_path(FIRST_FS_VERSION)
        try:
            storage.put_if_absent(rel, metadata_bytes(md))
        except CommitConflict:
            raise TableExists(f"a table already exists at {storage.root} ({rel} is taken)", path=storage.uri(rel), rule="ICEBERG-COMMIT-008") from None
        self._write_hint(storage, FIRST_FS_VERSION)
        return Loaded(metadata=md, path=rel, uri=storage.uri(rel), version=FIRST_FS_VERSION)

    def commit(self, storage: Storage, base: Loaded, md: M.TableMetadata) -> Loaded:
        version = base.version + 1
        rel = fs_metadata_path(version)
        try:
            storage.put_if_absent(rel, metadata_bytes(md))
        except CommitConflict:
            raise CommitConflict(f"metadata version {version} was committed by another writer", path=storage.uri(rel),
                                 version=version, rule="ICEBERG-COMMIT-001") from None
        self._write_hint(storage, version)
        return Loaded(metadata=md, path=rel, uri=storage.uri(rel), version=version)


# ---------------------------------------------------------------------------------------------
# Metastore Tables (SQL catalog on SQLite)


def catalog_metadata_name(version: int) -> str:
    """``metadata/<VVVVV>-<uuid>.metadata.json`` (five digits, as Java and PyIceberg pad it)."""
    return f"{METADATA_DIR}/{version:05d}-{new_uuid()}.metadata.json"


def catalog_version_of(location: str) -> int:
    """V of a ``<V>-<uuid>.metadata.json`` location; InvalidTable for any other name."""
    m = CATALOG_NAME_RE.match(posixpath.basename(location))
    if not m:
        raise InvalidTable(f"metadata location {location} is not named <V>-<uuid>.metadata.json", rule="ICEBERG-COMMIT-009")
    return int(m.group(1))


class SqlCatalog(Catalog):
    """One table of a JDBC/PyIceberg-compatible SQL catalog in a local SQLite database."""

    def __init__(self, db_path: str, *, table: str, namespace: str = DEFAULT_NAMESPACE, name: str = DEFAULT_CATALOG_NAME) -> None:
        self.db_path = db_path
        self.catalog_name = name
        self.namespace = namespace
        self.table = table
        with self._connect() as con:
            self._ensure_schema(con)

    def __repr__(self) -> str:
        return f"SqlCatalog({self.db_path!r}, {self.namespace}.{self.table})"

    def _connect(self) -> sqlite3.Connection:
        # Autocommit: every statement is its own transaction; the compare-and-swap is one UPDATE.
        return sqlite3.connect(self.db_path, timeout=120, isolation_level=None)

    @staticmethod
    def _ensure_schema(con: sqlite3.Connection) -> None:
        con.execute(
            f"CREATE TABLE IF NOT EXISTS {TABLES} ("
            " catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL,"
            " metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5),"
            " PRIMARY KEY (catalog_name, table_namespace, table_name))"
        )
        con.execute(
            f"CREATE TABLE IF NOT EXISTS {NAMESPACE_PROPERTIES} ("
            " catalog_name VARCHAR(255) NOT NULL, namespace VARCHAR(255) NOT NULL, property_key VARCHAR(255) NOT NULL,"
            " property_value VARCHAR(1000), PRIMARY KEY (catalog_name, namespace, property_key))"
        )

    def current_location(self) -> str | None:
        """The pointer: the current metadata file's URI, or None when the table is not in the catalog."""
        with self._connect() as con:
            row = con.execute(
                f"SELECT metadata_location FROM {TABLES} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?",
                (self.catalog_name, self.namespace, self.table),
            ).fetchone()
        return None if row is None else row[0]

    def exists(self, storage: Storage) -> bool:
        return self.current_location() is not None

    def load(self, storage: Storage) -> Loaded:
        loc = self.current_location()
        if loc is None:
            raise InvalidTable(f"no table {self.namespace}.{self.table} in catalog {self.catalog_name!r} ({self.db_path})", rule="ICEBERG-META-001")
        rel = storage.resolve(loc)
        return Loaded(metadata=_parse(storage, rel), path=rel, uri=loc, version=catalog_version_of(loc))

    def _drop_file(self, storage: Storage, rel: str) -> None:
        # The losing writer's metadata file is garbage; listing readers must not take it for a version.
        try:
            storage.delete(rel)
        except OSError:
            pass

    def create(self, storage: Storage, md: M.TableMetadata) -> Loaded:
        if self.exists(storage):
            raise TableExists(f"table {self.namespace}.{self.table} already exists in catalog {self.catalog_name!r}", rule="ICEBERG-COMMIT-009")
        rel = catalog_metadata_name(FIRST_CATALOG_VERSION)
        storage.put_if_absent(rel, metadata_bytes(md))
        uri = storage.uri(rel)
        try:
            with self._connect() as con:
                con.execute(f"INSERT OR IGNORE INTO {NAMESPACE_PROPERTIES} VALUES (?, ?, 'exists', 'true')", (self.catalog_name, self.namespace))
                con.execute(
                    f"INSERT INTO {TABLES} (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)"
                    " VALUES (?, ?, ?, ?, NULL, ?)",
                    (self.catalog_name, self.namespace, self.table, uri, ICEBERG_TYPE_TABLE),
                )
        except sqlite3.IntegrityError:
            self._drop_file(storage, rel)
            raise TableExists(f"table {self.namespace}.{self.table} already exists in catalog {self.catalog_name!r}", rule="ICEBERG-COMMIT-009") from None
        return Loaded(metadata=md, path=rel, uri=uri, version=FIRST_CATALOG_VERSION)

    def commit(self, storage: Storage, base: Loaded, md: M.TableMetadata) -> Loaded:
        version = base.version + 1
        rel = catalog_metadata_name(version)
        storage.put_if_absent(rel, metadata_bytes(md))
        uri = storage.uri(rel)
        with self._connect() as con:
            cur = con.execute(
                f"UPDATE {TABLES} SET metadata_location = ?, previous_metadata_location = ?"
                " WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?",
                (uri, base.uri, self.catalog_name, self.namespace, self.table, base.uri),
            )
            swapped = cur.rowcount == 1
        if not swapped:
            self._drop_file(storage, rel)
            raise CommitConflict(f"the catalog no longer points at {base.uri}: another writer committed first", path=uri,
                                 version=version, rule="ICEBERG-COMMIT-009")
        return Loaded(metadata=md, path=rel, uri=uri, version=version)


def load_table_metadata(storage: Storage, catalog: Catalog | None = None) -> M.TableMetadata:
    """The current metadata through ``catalog`` (default: the file-system layout)."""
    return (catalog or FileSystemCatalog()).load(storage).metadata

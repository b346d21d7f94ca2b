"""Reading a table: the current metadata file, the snapshot to read, and the rows (Point in Time Reads, Scan Planning).

The current metadata file of a file-system table is ``metadata/v<N>.metadata.json`` with N from
``metadata/version-hint.text``; the hint is only a hint (it is written after the commit), so a
newer ``v<N+1>`` that exists wins, and without a usable hint the highest-numbered file does. Tables
committed through a catalog name their files ``<NNNNN>-<uuid>.metadata.json``; listing finds the
highest number, and two files with that number (a lost commit race) can only be told apart by
the catalog, so that is refused rather than guessed.

Which snapshot (contracts, "Iceberg version numbering"): the current one; or version N (0 = before
the first snapshot, no rows; N >= 1 the main-history snapshot with sequence number N, or the N-th
from the root in v1); or the snapshot the ``snapshot-log`` says was current at a time; or a branch
or tag; or a snapshot id. Which schema: the current one for the latest read and for branches; the
snapshot's own ``schema-id`` for versions, times, snapshot ids and tags, as Java and PyIceberg
read them (the spec records the id without saying which schema a time-travel read projects).
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
from typing import Any, Iterable, Sequence

import pyarrow as pa

from reference_impl.common.numbers import ascii_int
from reference_impl.errors import InvalidTable
from reference_impl.formats import Located
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import read as R
from reference_impl.iceberg import scan as SC
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import types as T
from reference_impl.storage import Storage, open_storage

METADATA_DIR = "metadata"
VERSION_HINT = f"{METADATA_DIR}/version-hint.text"
_FS_NAME = re.compile(r"^v(\d+)(?:\.gz)?\.metadata\.json(?:\.gz)?$", re.ASCII)
_CATALOG_NAME = re.compile(r"^(\d+)-[0-9A-Za-z-]+(?:\.gz)?\.metadata\.json(?:\.gz)?$", re.ASCII)


def _storage(location: str | Storage) -> Storage:
    return location if isinstance(location, Storage) else open_storage(location)


def _number(name: str) -> int | None:
    m = _FS_NAME.match(name) or _CATALOG_NAME.match(name)
    return int(m.group(1)) if m else None


def hint_version(text: str) -> int | None:
    """The version a ``version-hint.text`` names: its number, or the number of the ``v<N>.metadata.json``
    some writers put there instead; None for anything else (the caller then lists the directory).

    Either way it is only where to start: newer versions committed after the hint are still found.
    Digits are ASCII only (``str.isdigit`` also accepts superscripts that ``int`` refuses).
    """
    n = ascii_int(text)
    if n is not None:
        return n
    m = _FS_NAME.match(text) if "/" not in text else None
    return ascii_int(m.group(1)) if m else None


def _fs_path(storage: Storage, n: int) -> str | None:
    for name in (f"v{n}.metadata.json", f"v{n}.gz.metadata.json", f"v{n}.metadata.json.gz"):
        path = f"{METADATA_DIR}/{name}"
        if storage.exists(path):
            return path
    return None


def current_metadata_path(storage: Storage) -> str:
    """Root-relative path of the current metadata file (version hint, then listing; see the module docstring)."""
    try:
        hint = storage.read(VERSION_HINT).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        hint = ""
    n = hint_version(hint)
    path = _fs_path(storage, n) if n is not None else None
    if path is not None:
        # The hint trails the commit: a writer may have stopped between the two.
        while (newer := _fs_path(storage, n + 1)) is not None:
            n, path = n + 1, newer
        return path
    numbered: dict[int, list[str]] = {}
    for info in storage.list(METADATA_DIR):
        n = _number(posixpath.basename(info.path))
        if n is not None:
            numbered.setdefault(n, []).append(info.path)
    if not numbered:
        raise InvalidTable(f"no Iceberg metadata file under {storage.uri(METADATA_DIR)} (neither v<N>.metadata.json nor "
                           "<NNNNN>-<uuid>.metadata.json)", rule="ICEBERG-META-001")
    top = max(numbered)
    paths = sorted(numbered[top])
    if len(paths) > 1:
        raise InvalidTable(f"{len(paths)} metadata files are numbered {top} ({', '.join(posixpath.basename(p) for p in paths)}); "
                           "only the catalog can say which one was committed", rule="ICEBERG-META-002")
    return paths[0]


METADATA_FILE_SUFFIXES = (".metadata.json", ".metadata.json.gz")  # .gz.metadata.json ends in .metadata.json


def locate(location: str) -> Located:
    """The table a user's location means: a metadata file (any name a catalog or writer gives it) or a
    table directory; for a directory without a version hint, the note says which file is current and why.

    A metadata file's table root is the parent of its ``metadata/`` directory (the spec's layout;
    a file elsewhere is taken with its own directory as the root: data paths are absolute).
    """
    name = location.rstrip("/")
    if name.endswith(METADATA_FILE_SUFFIXES):
        folder = posixpath.dirname(name)
        root = posixpath.dirname(folder) if posixpath.basename(folder) == METADATA_DIR else folder
        storage = open_storage(root)
        rel = name[len(root):].lstrip("/")
        if not storage.exists(rel):
            raise InvalidTable(f"metadata file {storage.uri(rel)} does not exist", path=storage.uri(rel),
                               rule="ICEBERG-META-001")
        return Located(root, {"metadata_location": storage.uri(rel)})
    return Located(location, note=_choice_note(open_storage(location)))


def _choice_note(storage: Storage) -> str:
    """Which metadata file a directory's reads take when no version hint names it (empty when one does)."""
    try:
        hint = storage.read(VERSION_HINT).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        hint = ""
    if hint_version(hint) is not None and _fs_path(storage, hint_version(hint)) is not None:
        return ""
    numbered: dict[int, list[str]] = {}
    for info in storage.list(METADATA_DIR):
        n = _number(posixpath.basename(info.path))
        if n is not None:
            numbered.setdefault(n, []).append(posixpath.basename(info.path))
    if not numbered:
        return ""
    top = max(numbered)
    names = sorted(numbered[top])
    why = "no usable metadata/version-hint.text" if not hint else f"metadata/version-hint.text ({hint[:40]!r}) names no file"
    if len(names) > 1:
        return (f"{why}, and {len(names)} metadata files are numbered {top} ({', '.join(names)}): only a catalog "
                "knows which one is current, so reads refuse; pass the metadata file your catalog points at "
                "instead of the directory")
    total = sum(len(v) for v in numbered.values())
    if total == 1:
        return ""
    return (f"{why}: using metadata/{names[0]}, the highest-numbered of {total} metadata files; to read "
            "another (the one a catalog points at), pass its path instead of the directory")


def load_table(location: str | Storage, *, metadata_path: str | None = None, catalog: Any = None) -> M.TableMetadata:
    """The table's current metadata (or the file at ``metadata_path``); Unsupported for a format version above 3.

    ``catalog`` (e.g. ``catalog.SqlCatalog``) says which metadata file is current instead of the file layout.
    """
    storage = _storage(location)
    if catalog is not None and metadata_path is None:
        return catalog.load(storage).metadata
    rel = S.resolve_location(storage, metadata_path) if metadata_path is not None else current_metadata_path(storage)
    try:
        data = storage.read(rel)
    except FileNotFoundError:
        raise InvalidTable(f"metadata file {storage.uri(rel)} does not exist", path=storage.uri(rel), rule="ICEBERG-META-001") from None
    return M.parse_metadata(data, path=storage.uri(rel))


def select_snapshot(md: M.TableMetadata, *, version: int | None = None, timestamp: Any = None, ref: str | None = None,
                    snapshot_id: int | None = None) -> M.Snapshot | None:
    """The snapshot a read asks for (None: no rows); at most one selector."""
    given = [name for name, v in (("version", version), ("timestamp", timestamp), ("ref", ref), ("snapshot_id", snapshot_id)) if v is not None]
    if len(given) > 1:
        raise InvalidTable(f"choose the snapshot by at most one of version, timestamp, ref and snapshot_id (got {', '.join(given)})")
    if version is not None:
        return S.snapshot_for_version(md, version)
    if timestamp is not None:
        return S.snapshot_as_of(md, timestamp)
    if ref is not None:
        return S.snapshot_by_ref(md, ref)
    if snapshot_id is not None:
        return S.snapshot_by_id(md, snapshot_id)
    return S.current_snapshot(md)


def _schema_before_first_snapshot(storage: Storage, md: M.TableMetadata) -> T.Schema:
    """The current schema of the newest logged metadata file that had no snapshot yet (else the current schema)."""
    found = None
    for entry in md.metadata_log:
        try:
            old = load_table(storage, metadata_path=entry.metadata_file)
        except (InvalidTable, FileNotFoundError):
            continue
        if old.current_snapshot_id is not None:
            break
        found = old
    if found is None:
        return md.schema()
    return md.schema_by_id(found.current_schema_id) or found.schema()


def read_schema(storage: Storage, md: M.TableMetadata, snapshot: M.Snapshot | None, *, selected: bool, ref: str | None = None) -> T.Schema:
    """The schema a read projects: current for latest reads and branches; the snapshot's for versions, times, ids and tags."""
    if not selected:
        return md.schema()
    if ref is not None:
        r = md.effective_refs().get(ref)
        if r is None or r.is_branch:
            return md.schema()
    if snapshot is None:
        return _schema_before_first_snapshot(storage, md) if md.snapshots else md.schema()
    if snapshot.schema_id is not None:
        found = md.schema_by_id(snapshot.schema_id)
        if found is not None:
            return found
    return md.schema()


def _fields(schema: T.Schema, columns: Sequence[str] | None) -> list[T.NestedField]:
    if columns is None:
        return list(schema.fields)
    unknown = [c for c in columns if schema.field_by_name(c) is None and R.metadata_field(c) is None]
    if unknown:
        raise InvalidTable(f"unknown column(s) {', '.join(map(repr, unknown))}; the schema has {', '.join(f.name for f in schema.fields)}")
    wanted = set(columns)
    # Schema order, as the Delta reference does; metadata columns after, in the order asked.
    out = [f for f in schema.fields if f.name in wanted]
    out += [R.metadata_field(c) for c in columns if schema.field_by_name(c) is None]
    return out


def read_table(location: str | Storage, *, version: int | None = None, timestamp: int | str | dt.datetime | None = None,
               ref: str | None = None, snapshot_id: int | None = None, columns: Sequence[str] | None = None,
               with_positions: bool = False, catalog: Any = None, metadata_location: str | None = None) -> pa.Table:
    """The rows of a table at a version / time / ref / snapshot id (latest by default), ``columns`` in schema order.

    ``metadata_location``: read the table as this metadata file describes it (what a catalog points at)
    instead of the current one the file layout names.
    """
    storage = _storage(location)
    md = load_table(storage, catalog=catalog, metadata_path=metadata_location)
    snapshot = select_snapshot(md, version=version, timestamp=timestamp, ref=ref, snapshot_id=snapshot_id)
    selected = any(v is not None for v in (version, timestamp, ref, snapshot_id))
    schema = read_schema(storage, md, snapshot, selected=selected, ref=ref)
    # Checked here too, not only per data file: a table with no files must be refused alike.
    R.check_unique_ids(schema.fields)
    fields = _fields(schema, columns)
    out_schema = pa.schema([T.to_arrow_field(f) for f in fields])
    if with_positions:
        out_schema = out_schema.append(pa.field("_file", pa.string(), nullable=False)).append(pa.field("_pos", pa.int64(), nullable=False))
    cache = R.ReadCache()
    pieces = [R.read_task(storage, md, task, fields, with_positions=with_positions, cache=cache)
              for task in SC.plan_files(storage, md, snapshot)]
    pieces = [p for p in pieces if p.num_rows]
    if not pieces:
        return out_schema.empty_table()
    return pa.concat_tables(pieces)


_PARAM = re.compile(r"^(bucket|truncate)\[(\d{1,40})\]$", re.ASCII)


def partition_expression(transform: str, columns: Iterable[str]) -> str:
    """A spec field as the kit writes it: identity -> ``col``, ``bucket[16]`` -> ``bucket(16, col)``, ``day`` -> ``day(col)``."""
    cols = ", ".join(columns)
    t = transform.strip().lower()
    if t == "identity":
        return cols
    m = _PARAM.match(t)
    if m:
        return f"{m.group(1)}({m.group(2)}, {cols})"
    return f"{t}({cols})"


def _column_names(md: M.TableMetadata) -> dict[int, str]:
    """Field id -> dotted name over every schema, the current schema's names winning."""
    out: dict[int, str] = {}
    current = md.schema()
    for schema in [s for s in md.schemas if s.schema_id != current.schema_id] + [current]:
        for f, path, _anc in T.walk_with_context(schema):
            out[f.id] = ".".join(path)
    return out


def describe(location: str | Storage, *, version: int | None = None, timestamp: Any = None, ref: str | None = None,
             snapshot_id: int | None = None, catalog: Any = None) -> dict[str, Any]:
    """The Iceberg facts of a table (contract keys): format_version, partition_spec, schema_id, properties, refs, operation.

    Only the snapshot-bound facts (schema_id, operation) follow the selection: the table keeps no history of its
    properties, specs or refs.
    """
    storage = _storage(location)
    md = load_table(storage, catalog=catalog)
    snapshot = select_snapshot(md, version=version, timestamp=timestamp, ref=ref, snapshot_id=snapshot_id)
    selected = any(v is not None for v in (version, timestamp, ref, snapshot_id))
    names = _column_names(md)
    spec = [partition_expression(str(f.transform), [names.get(i, str(i)) for i in f.source_ids]) for f in md.spec().fields]
    schema_id = md.current_schema_id
    if selected and snapshot is not None and snapshot.schema_id is not None:
        schema_id = snapshot.schema_id
    return {
        "format_version": md.format_version,
        "partition_spec": spec,
        "schema_id": schema_id,
        "properties": dict(md.properties),
        "refs": {name: r.type for name, r in md.effective_refs().items()},
        "operation": snapshot.operation if snapshot is not None else None,
    }

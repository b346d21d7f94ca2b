"""Validation context: the raw table (metadata JSON files, manifest lists, manifests, data and delete files) read tolerantly.

Nothing here raises for a table that breaks the spec. Every file is read as far as it can be and
what blocked it is kept (``error``, ``parse_error``) for the checks to report. Each file is read
once: the reference's own readers (``metadata.parse_metadata``, ``manifests.read_manifest_list``,
``manifests.read_manifest``, ``snapshots.validate_snapshot``) run over a caching view of the
storage, next to a raw view of the same bytes (the JSON document, the Avro header schema with its
ids, the key-value metadata and the records), so that a file the strict readers refuse can still
be checked field by field.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterator, Mapping

from reference_impl.common import bounded
from reference_impl.errors import InvalidTable, LakeconfError, Unsupported
from reference_impl.iceberg import manifests as MF
from reference_impl.iceberg import metadata as M
from reference_impl.iceberg import snapshots as S
from reference_impl.iceberg import types as T
from reference_impl.parquet_io import open_parquet, read_parquet
from reference_impl.storage import FileInfo, LocalStorage, Storage, open_storage

METADATA_DIR = "metadata"
VERSION_HINT = "metadata/version-hint.text"
# v<N>.metadata.json (file-system tables) or <N>-<uuid>.metadata.json (metastore tables), maybe GZIP'd.
_META_NAME = re.compile(r"^(?:v(\d{1,40})|(\d{1,40})-[^/]*?)(?:\.gz)?\.metadata\.json(?:\.gz)?$", re.ASCII)

MAGIC_PARQUET = b"PAR1"
MAGIC_AVRO = b"Obj\x01"
MAGIC_ORC = b"ORC"
MAGIC_PUFFIN = b"PFA1"


def metadata_number(path: str) -> int | None:
    """The version number in a metadata file name, or None when the name is not a metadata file's."""
    m = _META_NAME.match(posixpath.basename(path))
    if not m:
        return None
    return int(m.group(1) or m.group(2))


class CachedStorage(Storage):
    """A read-through cache over a Storage: every file of the table is fetched once per validation."""

    def __init__(self, inner: Storage) -> None:
        self.inner = inner
        self.root = inner.root
        self._cache: dict[str, bytes | None] = {}

    def read(self, path: str) -> bytes:
        if path not in self._cache:
            try:
                self._cache[path] = self.inner.read(path)
            except FileNotFoundError:
                self._cache[path] = None
        data = self._cache[path]
        if data is None:
            raise FileNotFoundError(path)
        return data

    def list(self, prefix: str) -> list[FileInfo]:
        return self.inner.list(prefix)

    def walk(self, prefix: str = "") -> list[FileInfo]:
        return self.inner.walk(prefix)

    def exists(self, path: str) -> bool:
        if self._cache.get(path) is not None:
            return True
        return self.inner.exists(path)

    def put_if_absent(self, path: str, data: bytes) -> None:  # pragma: no cover - the validator never writes
        raise Unsupported("the validator never writes")

    def write_atomic(self, path: str, data: bytes) -> None:  # pragma: no cover
        raise Unsupported("the validator never writes")

    def delete(self, path: str) -> None:  # pragma: no cover
        raise Unsupported("the validator never writes")

    @property
    def storage_options(self) -> Mapping[str, str]:
        return self.inner.storage_options


# ------------------------------------------------------------------------------------------------ files


@dataclass(slots=True)
class Blob:
    """One referenced file: where it is, whether it could be fetched, and its bytes (lazily)."""

    uri: str                    # as written in the table
    rel: str | None             # root-relative path, None when it lies outside the table
    where: str                  # what findings name: rel, else the uri
    data: bytes | None = None
    error: str | None = None    # why the bytes are not there (missing, outside the root, too big)
    missing: bool = False


@dataclass(slots=True)
class MetaFile:
    """One metadata JSON file: its bytes, the decoded document, the parsed model (or why not)."""

    blob: Blob
    doc: Any = None
    json_error: str | None = None
    md: M.TableMetadata | None = None
    parse_error: LakeconfError | None = None

    @property
    def where(self) -> str:
        return self.blob.where

    @property
    def version(self) -> int | None:
        """format-version as written (None when it is not an int)."""
        v = self.doc.get(M.FORMAT_VERSION) if isinstance(self.doc, dict) else None
        return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(slots=True)
class AvroFile:
    """A manifest list or manifest: raw header schema, key-value metadata and records, then the parsed form."""

    blob: Blob
    kind: str                                   # "manifest list" | "manifest"
    schema: dict | None = None                  # Avro schema JSON from the header, ids intact
    meta: dict[str, str] = field(default_factory=dict)
    records: list[dict] | None = None
    avro_error: LakeconfError | None = None     # not an Avro file at all
    parsed: Any = None                          # tuple[ManifestFile, ...] | Manifest
    parse_error: LakeconfError | None = None    # the strict reader refused it

    @property
    def where(self) -> str:
        return self.blob.where


@dataclass(slots=True)
class ListedManifest:
    """A manifest as one snapshot lists it: its list entry, the file, and the entries with inheritance applied."""

    snapshot: M.Snapshot
    mf: MF.ManifestFile
    file: AvroFile
    entries: tuple[MF.ManifestEntry, ...]       # inherited (or raw when inheritance failed)

    @property
    def manifest(self) -> MF.Manifest | None:
        return self.file.parsed if isinstance(self.file.parsed, MF.Manifest) else None


def _decode_json(data: bytes) -> tuple[Any, str | None]:
    if data[:2] == b"\x1f\x8b":
        try:
            data = bounded.inflate_json_text(data, what="GZIP metadata")
        except InvalidTable as exc:
            return None, f"not valid GZIP: {exc.message}"
    try:
        return json.loads(data), None
    except (ValueError, RecursionError) as exc:
        return None, f"not valid JSON: {exc}"


class Context:
    """Everything the checks look at, read once and lazily."""

    def __init__(self, storage: Storage, metadata_location: str | None = None) -> None:
        self.raw_storage = storage
        self.storage = CachedStorage(storage)
        self._blobs: dict[str, Blob] = {}
        self._avro: dict[tuple[str, str], AvroFile] = {}
        self._parquet: dict[str, Any] = {}
        self._tables: dict[str, Any] = {}
        path = S.resolve_location(self.storage, metadata_location) if metadata_location else self._locate()
        self.current = self.meta_file(self.storage.uri(path))

    # ------------------------------------------------------------------------------ locating metadata
    def _locate(self) -> str:
        """The current metadata file: the highest-numbered one (the put-if-absent of v<N> is the commit;
        version-hint.text is only a hint and may lag), else what the hint names."""
        found = [(n, f.path) for f in self.storage.list(METADATA_DIR) if (n := metadata_number(f.path)) is not None]
        if found:
            return max(found)[1]
        raise InvalidTable(f"no metadata file under {self.storage.uri(METADATA_DIR)}: not an Iceberg table",
                           path=self.storage.root, rule="ICEBERG-META-001")

    def metadata_files(self) -> list[tuple[int, str]]:
        """Every metadata file found under metadata/ as (number, relative path), ascending."""
        return sorted((n, f.path) for f in self.storage.list(METADATA_DIR) if (n := metadata_number(f.path)) is not None)

    # ------------------------------------------------------------------------------ raw files
    def blob(self, uri: str, *, read: bool = True) -> Blob:
        """A referenced file (cached); ``read=False`` only checks that it exists."""
        b = self._blobs.get(uri)
        if b is None:
            try:
                rel = S.resolve_location(self.storage, uri)
                b = Blob(uri=uri, rel=rel, where=rel)
            except InvalidTable as exc:
                b = Blob(uri=uri, rel=None, where=uri, error=f"cannot be read: {exc.message}")
            self._blobs[uri] = b
        if b.rel is not None and b.data is None and b.error is None and not b.missing:
            if read:
                try:
                    b.data = self.storage.read(b.rel)
                except FileNotFoundError:
                    b.missing, b.error = True, "does not exist"
                except OSError as exc:
                    b.error = f"cannot be read: {exc}"
            elif not self.storage.exists(b.rel):
                b.missing, b.error = True, "does not exist"
        return b

    def rel(self, uri: str) -> str:
        """A location as findings name it: root-relative when inside the table, else as written (no IO)."""
        b = self._blobs.get(uri)
        if b is not None:
            return b.where
        try:
            return S.resolve_location(self.storage, uri)
        except InvalidTable:
            return uri

    def size_of(self, b: Blob) -> int | None:
        """The object's length, without reading it when it is big."""
        if b.data is not None:
            return len(b.data)
        if b.rel is None or b.missing:
            return None
        parent = posixpath.dirname(b.rel)
        for f in self.storage.list(parent):
            if f.path == b.rel:
                return f.size
        return None

    def meta_file(self, uri: str) -> MetaFile:
        """A metadata JSON file: document and parsed model, each with what blocked it."""
        b = self.blob(uri)
        mf = MetaFile(blob=b)
        if b.data is None:
            return mf
        mf.doc, mf.json_error = _decode_json(b.data)
        if mf.json_error is None:
            try:
                mf.md = M.parse_metadata(mf.doc, path=b.where)
            except LakeconfError as exc:
                mf.parse_error = exc
        return mf

    def avro(self, uri: str, kind: str) -> AvroFile:
        """A manifest list or manifest, raw and parsed (cached per kind)."""
        key = (uri, kind)
        if key in self._avro:
            return self._avro[key]
        b = self.blob(uri)
        af = AvroFile(blob=b, kind=kind)
        self._avro[key] = af
        if b.data is None:
            return af
        try:
            af.schema, af.meta, af.records = MF._open_avro(b.data, kind, b.where)
        except LakeconfError as exc:
            af.avro_error = exc
            return af
        opened = (af.schema, af.meta, af.records)
        try:
            if kind == "manifest list":
                af.parsed = MF.read_manifest_list(b.data, path=b.where, opened=opened)
            else:
                # Read without the table's version: a manifest newer than its table is a finding, not a crash.
                af.parsed = MF.read_manifest(b.data, path=b.where, inherit=False, opened=opened)
        except LakeconfError as exc:
            af.parse_error = exc
        except Exception as exc:  # noqa: BLE001 - a reader crash on bad input is reported, never raised
            af.parse_error = InvalidTable(f"{kind} could not be read: {type(exc).__name__}: {exc}", path=b.where)
        return af

    def parquet(self, b: Blob) -> Any:
        """The ParquetFile of a data or delete file (None when unreadable); errors in ``self.parquet_errors``."""
        if b.uri in self._parquet:
            return self._parquet[b.uri]
        pf = None
        if b.data is not None:
            try:
                pf = open_parquet(b.data)
                pf.schema_arrow  # noqa: B018 - force the footer to be decoded here
            except Exception as exc:  # noqa: BLE001 - pyarrow raises many kinds on a damaged footer
                pf = None
                self.parquet_errors[b.uri] = f"{type(exc).__name__}: {exc}"
        self._parquet[b.uri] = pf
        return pf

    @cached_property
    def parquet_errors(self) -> dict[str, str]:
        return {}

    def table_of(self, b: Blob) -> Any:
        """The whole Parquet file as an Arrow table (None when unreadable)."""
        if b.uri in self._tables:
            return self._tables[b.uri]
        t = None
        pf = self.parquet(b)
        if pf is not None:
            try:
                t = read_parquet(pf)
            except Exception as exc:  # noqa: BLE001
                self.parquet_errors[b.uri] = f"{type(exc).__name__}: {exc}"
        self._tables[b.uri] = t
        return t

    # ------------------------------------------------------------------------------ the metadata chain
    @property
    def md(self) -> M.TableMetadata | None:
        """The current metadata, parsed (None when it cannot be)."""
        return self.current.md

    @cached_property
    def chain(self) -> list[MetaFile]:
        """The metadata files of the table's history that still exist, oldest first, ending with the current one."""
        out: list[MetaFile] = []
        seen = {self.current.blob.uri}
        doc = self.current.doc
        log = doc.get(M.METADATA_LOG) if isinstance(doc, dict) else None
        for e in log if isinstance(log, list) else []:
            loc = e.get(M.METADATA_FILE) if isinstance(e, dict) else None
            if not isinstance(loc, str) or loc in seen:
                continue
            seen.add(loc)
            b = self.blob(loc, read=False)
            if b.rel is None or b.missing:
                continue  # trimmed or deleted after commit: allowed (write.metadata.delete-after-commit)
            out.append(self.meta_file(loc))
        out.append(self.current)
        return out

    # ------------------------------------------------------------------------------ snapshots
    def snapshots(self) -> tuple[M.Snapshot, ...]:
        """The current metadata's snapshots (empty when it does not parse)."""
        return self.md.snapshots if self.md is not None else ()

    def manifest_list(self, snapshot: M.Snapshot) -> AvroFile | None:
        """The snapshot's manifest list (None for a v1 snapshot that lists manifests inline)."""
        if snapshot.manifest_list is None:
            return None
        return self.avro(snapshot.manifest_list, "manifest list")

    def listed_manifests(self, snapshot: M.Snapshot) -> list[ListedManifest]:
        """The readable manifests of a snapshot with their list entries, entries inherited."""
        key = snapshot.snapshot_id
        cache = self.__dict__.setdefault("_listed", {})
        if key in cache:
            return cache[key]
        out: list[ListedManifest] = []
        mfs: tuple[MF.ManifestFile, ...] = ()
        if snapshot.manifest_list is not None:
            ml = self.manifest_list(snapshot)
            if isinstance(ml.parsed, tuple):
                mfs = ml.parsed
        else:
            # v1 inline manifests: synthesize list entries the way the reference reader does.
            for loc in snapshot.manifests or ():
                f = self.avro(loc, "manifest")
                man = f.parsed if isinstance(f.parsed, MF.Manifest) else None
                if man is None:
                    continue
                mfs += (MF.ManifestFile(manifest_path=loc, manifest_length=len(f.blob.data or b""),
                                        partition_spec_id=man.metadata.spec.spec_id, added_snapshot_id=snapshot.snapshot_id,
                                        content=man.metadata.content),)
        for mf in mfs:
            f = self.avro(mf.manifest_path, "manifest")
            man = f.parsed if isinstance(f.parsed, MF.Manifest) else None
            if man is None:
                continue
            try:
                entries = MF.inherit_entries(man.entries, mf, v1_manifest=man.metadata.format_version == 1, path=f.where)
            except LakeconfError:
                entries = man.entries
            out.append(ListedManifest(snapshot=snapshot, mf=mf, file=f, entries=entries))
        cache[key] = out
        return out

    def all_listed(self) -> Iterator[ListedManifest]:
        """Every (snapshot, manifest) pair of the current metadata."""
        for s in self.snapshots():
            yield from self.listed_manifests(s)

    def distinct_manifests(self) -> list[ListedManifest]:
        """Each manifest once, with the list entry of the snapshot that added it when that snapshot lists it."""
        best: dict[str, ListedManifest] = {}
        for lm in self.all_listed():
            cur = best.get(lm.mf.manifest_path)
            if cur is None or (lm.mf.added_snapshot_id == lm.snapshot.snapshot_id and cur.mf.added_snapshot_id != cur.snapshot.snapshot_id):
                best[lm.mf.manifest_path] = lm
        return list(best.values())

    def live(self, snapshot: M.Snapshot) -> tuple[list[tuple[ListedManifest, MF.ManifestEntry]], list[tuple[ListedManifest, MF.ManifestEntry]]]:
        """(live data entries, live delete entries) of a snapshot, each with its manifest."""
        data, deletes = [], []
        for lm in self.listed_manifests(snapshot):
            for e in lm.entries:
                if not e.is_live:
                    continue
                (data if e.data_file.content == MF.DATA else deletes).append((lm, e))
        return data, deletes

    @cached_property
    def referenced_files(self) -> dict[str, list[tuple[ListedManifest, MF.ManifestEntry]]]:
        """Every data or delete file live in some snapshot, with the entries that list it."""
        out: dict[str, list[tuple[ListedManifest, MF.ManifestEntry]]] = {}
        for lm in self.all_listed():
            for e in lm.entries:
                if e.is_live:
                    out.setdefault(e.data_file.file_path, []).append((lm, e))
        return out

    @cached_property
    def known_data_paths(self) -> set[str]:
        """Every data file path any readable manifest of the table mentions (live, existing or deleted)."""
        return {e.data_file.file_path for lm in self.all_listed() for e in lm.entries if e.data_file.content == MF.DATA}


def open_table(location: Any, metadata_location: str | None = None) -> Context:
    """A Context for a path, URI, Storage, or a metadata JSON file's path (its table is two levels up)."""
    if isinstance(location, Storage):
        return Context(location, metadata_location)
    loc = str(location)
    if metadata_number(loc.rstrip("/")) is not None and metadata_location is None:
        # A metadata file itself: the table root is the parent of its metadata/ directory.
        parent = posixpath.dirname(posixpath.dirname(loc.rstrip("/")))
        storage = open_storage(parent)
        return Context(storage, storage.uri(loc[len(parent):].lstrip("/")))
    return Context(open_storage(loc), metadata_location)


__all__ = ["Context", "manifest_refs", "Blob", "MetaFile", "AvroFile", "ListedManifest", "open_table", "CachedStorage", "LocalStorage",
           "MAGIC_PARQUET", "MAGIC_AVRO", "MAGIC_ORC", "MAGIC_PUFFIN", "T"]


def manifest_refs(ctx: Context) -> list[tuple[M.Snapshot, MF.ManifestFile, AvroFile]]:
    """Every manifest the current snapshots list, once, with the list entry of the snapshot that added it when possible."""
    best: dict[str, tuple[M.Snapshot, MF.ManifestFile, AvroFile]] = {}
    for s in ctx.snapshots():
        ml = ctx.manifest_list(s)
        mfs = ml.parsed if ml is not None and isinstance(ml.parsed, tuple) else ()
        if ml is None:
            for loc in s.manifests or ():
                best.setdefault(loc, (s, MF.ManifestFile(manifest_path=loc, manifest_length=0, partition_spec_id=0,
                                                          added_snapshot_id=s.snapshot_id), ctx.avro(loc, "manifest")))
        for mf in mfs:
            cur = best.get(mf.manifest_path)
            if cur is None or (mf.added_snapshot_id == s.snapshot_id and cur[1].added_snapshot_id != cur[0].snapshot_id):
                best[mf.manifest_path] = (s, mf, ctx.avro(mf.manifest_path, "manifest"))
    return list(best.values())

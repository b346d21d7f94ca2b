"""Raw metadata surgery for the Iceberg case corpus (Table Metadata, Snapshots, Appendix C).

The Iceberg cases need tables no writer API produces: a ``current-schema-id`` that names no
schema, two fields sharing an id, a snapshot whose sequence number goes backwards, a dangling
parent, a spec with a transform from the future, ``format-version`` 4, a missing manifest list,
a snapshot log with known timestamps. Each public function here returns a *raw step function*
``fn(storage)`` that changes a freshly built table through its ``Storage``; the case corpus wraps
it in ``conformance.model.Raw``.

This module works on the metadata JSON directly (plain dicts, the spec's key spelling) instead of
going through the reference implementation's parser: a raw step must be able to produce metadata
the reference would refuse, and it must not change when the reference does. Manifests and
manifest lists (Avro) are never rewritten here; only whole files are deleted.

A change is committed the way a file-system table commits (Table Metadata, "File System
Tables"): a new ``metadata/v<N+1>.metadata.json`` (or the next ``<NNNNN>-<uuid>.metadata.json``
when the table uses catalog naming) written put-if-absent, with a ``metadata-log`` entry for the
file it replaces, then ``metadata/version-hint.text`` updated as a hint. Earlier metadata files
stay untouched (they are immutable).

Each function carries ``new_snapshots``: how many snapshots it adds (all zero today: surgery
edits metadata, it never commits data), so the corpus can check the versions it declares.
"""

from __future__ import annotations

import datetime as _dt
import json
import posixpath
import re
import time
import uuid
from typing import Any, Callable, Iterable, Mapping

METADATA_DIR = "metadata"
DATA_DIR = "data"
VERSION_HINT = f"{METADATA_DIR}/version-hint.text"
# The two metadata file namings of the spec: file-system tables and metastore (catalog) tables.
_FS_NAME = re.compile(r"^v(\d+)(\.gz)?\.metadata\.json$")
_CATALOG_NAME = re.compile(r"^(\d+)-[0-9a-fA-F-]{36}(\.gz)?\.metadata\.json$")

RawFn = Callable[[Any], None]


def _raw(new_snapshots: int = 0) -> Callable[[RawFn], RawFn]:
    """Tag a raw step function with the number of snapshots it adds."""

    def deco(fn: RawFn) -> RawFn:
        fn.new_snapshots = new_snapshots  # type: ignore[attr-defined]
        return fn

    return deco


class RawStepError(RuntimeError):
    """The table does not have what the surgery needs (a bug in the case, not in a reader)."""


# --------------------------------------------------------------------------------------------
# Metadata file access (wire level)
# --------------------------------------------------------------------------------------------


def metadata_files(storage) -> list[tuple[int, str, str]]:
    """``(number, kind, path)`` of every metadata JSON file, ascending; kind is ``fs`` or ``catalog``."""
    out = []
    for info in storage.list(METADATA_DIR):
        name = posixpath.basename(info.path)
        m = _FS_NAME.match(name)
        if m:
            out.append((int(m.group(1)), "fs", f"{METADATA_DIR}/{name}"))
            continue
        m = _CATALOG_NAME.match(name)
        if m:
            out.append((int(m.group(1)), "catalog", f"{METADATA_DIR}/{name}"))
    return sorted(out)


def current_metadata_path(storage) -> str:
    """The current metadata file: the version hint when it names an existing file (then, for a
    numbered hint, the newest of v<N+1>, v<N+2>... that exist: the hint may lag the commit), else
    the highest-numbered one (the hint is only a hint)."""
    files = metadata_files(storage)
    if not files:
        raise RawStepError("raw step: the table has no metadata file yet")
    if storage.exists(VERSION_HINT):
        hint = storage.read(VERSION_HINT).decode("utf-8").strip()
        if hint.isdigit():
            n = int(hint)
            path = f"{METADATA_DIR}/v{n}.metadata.json"
            if storage.exists(path):
                while storage.exists(f"{METADATA_DIR}/v{n + 1}.metadata.json"):
                    n += 1
                return f"{METADATA_DIR}/v{n}.metadata.json"
        elif hint.endswith(".metadata.json"):
            path = f"{METADATA_DIR}/{posixpath.basename(hint)}"
            if storage.exists(path):
                return path
    return files[-1][2]


def read_metadata(storage) -> dict:
    """The current table metadata as a wire dict."""
    return json.loads(storage.read(current_metadata_path(storage)).decode("utf-8"))


def now_ms() -> int:
    """Wall clock in milliseconds (only for last-updated-ms-like fields, never for golden)."""
    return int(time.time() * 1000)


def commit_metadata(storage, doc: Mapping[str, Any], *, log_previous: bool = True) -> str:
    """Write ``doc`` as the next metadata file (put-if-absent) and move the version hint; returns its path.

    ``metadata-log`` gains an entry for the file being replaced, as a writer's commit adds one.
    """
    previous = current_metadata_path(storage)
    files = metadata_files(storage)
    number, kind = files[-1][0], files[-1][1]
    doc = dict(doc)
    if log_previous:
        prev_doc = json.loads(storage.read(previous).decode("utf-8"))
        entry = {"metadata-file": storage.uri(previous), "timestamp-ms": prev_doc.get("last-updated-ms", now_ms())}
        doc["metadata-log"] = list(doc.get("metadata-log") or []) + [entry]
    doc["last-updated-ms"] = max(int(doc.get("last-updated-ms") or 0) + 1, now_ms())
    if kind == "fs":
        path = f"{METADATA_DIR}/v{number + 1}.metadata.json"
    else:
        path = f"{METADATA_DIR}/{number + 1:05d}-{uuid.uuid4()}.metadata.json"
    storage.put_if_absent(path, json.dumps(doc, indent=2, ensure_ascii=False).encode("utf-8"))
    if kind == "fs":
        storage.write_atomic(VERSION_HINT, str(number + 1).encode("ascii"))
    else:
        storage.write_atomic(VERSION_HINT, posixpath.basename(path).encode("ascii"))
    return path


def edit(change: Callable[[dict, Any], None]) -> RawFn:
    """A raw step that applies ``change(doc, storage)`` to the current metadata and commits it."""

    def fn(storage) -> None:
        doc = read_metadata(storage)
        change(doc, storage)
        commit_metadata(storage, doc)

    return fn


# --------------------------------------------------------------------------------------------
# Navigation (the kit's version numbering, as in the contract)
# --------------------------------------------------------------------------------------------


def snapshots_by_id(doc: Mapping[str, Any]) -> dict[int, dict]:
    """Snapshots of the metadata keyed by id."""
    return {int(s["snapshot-id"]): s for s in doc.get("snapshots") or []}


def current_snapshot_id(doc: Mapping[str, Any]) -> int | None:
    """``current-snapshot-id`` (-1 and null mean none), else the main branch ref."""
    cur = doc.get("current-snapshot-id")
    if cur is None or int(cur) == -1:
        main = (doc.get("refs") or {}).get("main")
        return int(main["snapshot-id"]) if main else None
    return int(cur)


def main_ancestry(doc: Mapping[str, Any]) -> list[dict]:
    """The current snapshot and its ancestors that are still listed, newest first."""
    by_id = snapshots_by_id(doc)
    out = []
    sid = current_snapshot_id(doc)
    while sid is not None and sid in by_id:
        snap = by_id[sid]
        out.append(snap)
        parent = snap.get("parent-snapshot-id")
        sid = int(parent) if parent is not None else None
    return out


def snapshot_for_version(doc: Mapping[str, Any], version: int) -> dict:
    """Version N: the main-ancestry snapshot with sequence number N (v2+), or the N-th from the root (v1)."""
    chain = main_ancestry(doc)
    if int(doc["format-version"]) == 1:
        oldest_first = list(reversed(chain))
        if 1 <= version <= len(oldest_first):
            return oldest_first[version - 1]
    else:
        for snap in chain:
            if int(snap.get("sequence-number", 0)) == version:
                return snap
    raise RawStepError(f"raw step: no snapshot for version {version} on the main history")


def current_schema(doc: Mapping[str, Any]) -> dict:
    """The current schema object (``schemas`` + ``current-schema-id``, else the v1 ``schema``)."""
    if doc.get("schemas") and doc.get("current-schema-id") is not None:
        for s in doc["schemas"]:
            if s.get("schema-id") == doc["current-schema-id"]:
                return s
    if doc.get("schema"):
        return doc["schema"]
    raise RawStepError("raw step: no current schema")


def field_id(doc: Mapping[str, Any], name: str) -> int:
    """The id of a top-level field of the current schema."""
    for f in current_schema(doc)["fields"]:
        if f["name"] == name:
            return int(f["id"])
    raise RawStepError(f"raw step: no field {name!r} in the current schema")


def _max_id(obj: Any) -> int:
    """The highest field id in a schema or type object (elements, keys and values included)."""
    best = 0
    if isinstance(obj, dict):
        for key in ("id", "element-id", "key-id", "value-id"):
            if isinstance(obj.get(key), int):
                best = max(best, obj[key])
        for value in obj.values():
            best = max(best, _max_id(value))
    elif isinstance(obj, list):
        for value in obj:
            best = max(best, _max_id(value))
    return best


def iso_ms(text: str) -> int:
    """Milliseconds since the epoch of an ISO-8601 instant (``Z`` or an offset; naive = UTC)."""
    value = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    return int(value.timestamp() * 1000)


# --------------------------------------------------------------------------------------------
# Schema surgery
# --------------------------------------------------------------------------------------------


def set_current_schema_id(schema_id: int) -> RawFn:
    """``current-schema-id`` names ``schema_id`` (which no schema carries)."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            if any(s.get("schema-id") == schema_id for s in doc.get("schemas") or []):
                raise RawStepError(f"raw step: schema {schema_id} exists; pick an unused id")
            doc["current-schema-id"] = schema_id

        edit(change)(storage)

    return fn


def set_last_column_id(value: int) -> RawFn:
    """``last-column-id`` set to ``value`` (below the highest field id when the case wants that)."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            if value >= _max_id(doc.get("schemas") or doc.get("schema")):
                raise RawStepError("raw step: last-column-id would not be below a field id")
            doc["last-column-id"] = value

        edit(change)(storage)

    return fn


def duplicate_field_id(first: str, second: str) -> RawFn:
    """The current schema's field ``second`` takes the id of field ``first`` (two fields, one id)."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            targets = [current_schema(doc)]
            if isinstance(doc.get("schema"), dict) and doc["schema"] is not targets[0]:
                targets.append(doc["schema"])  # v1: the deprecated copy says the same
            for schema in targets:
                ids = {f["name"]: f["id"] for f in schema["fields"]}
                if first not in ids or second not in ids:
                    raise RawStepError(f"raw step: no fields {first!r} and {second!r} to collide")
                for f in schema["fields"]:
                    if f["name"] == second:
                        f["id"] = ids[first]

        edit(change)(storage)

    return fn


def add_fields_with_defaults(fields: Iterable[Mapping[str, Any]]) -> RawFn:
    """A new current schema: the current one plus ``fields`` (schema JSON, ``id`` left out: assigned
    from ``last-column-id`` + 1 in order, nested ids after). Models a v3 ADD COLUMN with
    ``initial-default``: no data file holds these ids, so readers must fill the defaults in."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            schema = json.loads(json.dumps(current_schema(doc)))
            next_id = [int(doc["last-column-id"])]

            def assign(obj):
                # Struct fields first, then their children (Java's order; any fresh ids are valid).
                if isinstance(obj, dict) and obj.get("type") == "struct":
                    for child in obj["fields"]:
                        next_id[0] += 1
                        child["id"] = next_id[0]
                    for child in obj["fields"]:
                        assign(child["type"])

            new_fields = [json.loads(json.dumps(dict(f))) for f in fields]
            for f in new_fields:
                next_id[0] += 1
                f["id"] = next_id[0]
            for f in new_fields:
                assign(f["type"])
            schema["fields"] = list(schema["fields"]) + new_fields
            new_id = max(int(s.get("schema-id", 0)) for s in doc.get("schemas") or [schema]) + 1
            schema["schema-id"] = new_id
            doc["schemas"] = list(doc.get("schemas") or []) + [schema]
            doc["current-schema-id"] = new_id
            doc["last-column-id"] = next_id[0]
            if int(doc["format-version"]) == 1:
                doc["schema"] = schema

        edit(change)(storage)

    return fn


# --------------------------------------------------------------------------------------------
# Snapshot surgery
# --------------------------------------------------------------------------------------------


def set_sequence_number(version: int, new_sequence_number: int) -> RawFn:
    """The snapshot of ``version`` gets ``new_sequence_number`` (e.g. below its parent's): the
    manifests keep theirs, only the metadata JSON lies. ``last-sequence-number`` is kept."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            snapshot_for_version(doc, version)["sequence-number"] = new_sequence_number

        edit(change)(storage)

    return fn


def remove_snapshots(versions: Iterable[int], *, delete_manifest_lists: bool = False) -> RawFn:
    """Drop the snapshots of ``versions`` from ``snapshots``, as an expiry does: a child's
    ``parent-snapshot-id`` then names a snapshot that is not listed. Snapshot-log entries up to
    the last removed one go too (the spec's expiry rule), refs to them too; with
    ``delete_manifest_lists`` their manifest list files are deleted (manifests and data files,
    which later snapshots may share, are kept)."""

    wanted = tuple(versions)

    @_raw()
    def fn(storage) -> None:
        doc = read_metadata(storage)
        victims = [snapshot_for_version(doc, v) for v in wanted]
        ids = {int(s["snapshot-id"]) for s in victims}
        doc["snapshots"] = [s for s in doc["snapshots"] if int(s["snapshot-id"]) not in ids]
        log = list(doc.get("snapshot-log") or [])
        last = max((i for i, e in enumerate(log) if int(e["snapshot-id"]) in ids), default=-1)
        doc["snapshot-log"] = log[last + 1 :]
        if doc.get("refs"):
            doc["refs"] = {k: r for k, r in doc["refs"].items() if int(r["snapshot-id"]) not in ids}
        commit_metadata(storage, doc)
        if delete_manifest_lists:
            for snap in victims:
                if snap.get("manifest-list"):
                    storage.delete(storage.resolve(snap["manifest-list"]))

    return fn


def set_current_snapshot(snapshot_id: int | None, *, main_ref: bool = True) -> RawFn:
    """``current-snapshot-id`` (and the main ref, unless ``main_ref`` is False: then it is removed)
    set to ``snapshot_id``, which need not exist; None writes the legacy ``-1``."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            doc["current-snapshot-id"] = -1 if snapshot_id is None else snapshot_id
            refs = dict(doc.get("refs") or {})
            if main_ref and snapshot_id is not None:
                refs["main"] = {"snapshot-id": snapshot_id, "type": "branch"}
            else:
                refs.pop("main", None)
            doc["refs"] = refs

        edit(change)(storage)

    return fn


def drop_refs() -> RawFn:
    """Remove the optional ``refs`` map: the main branch still exists logically (current-snapshot-id)."""

    @_raw()
    def fn(storage) -> None:
        edit(lambda doc, _s: doc.pop("refs", None))(storage)

    return fn


def drop_snapshot_log() -> RawFn:
    """Remove the optional ``snapshot-log``: reads as of a timestamp have nothing to look up."""

    @_raw()
    def fn(storage) -> None:
        edit(lambda doc, _s: doc.pop("snapshot-log", None))(storage)

    return fn


def pin_history(timestamps: Mapping[int, str], *, log: Iterable[tuple[int, str]] | None = None, current: int | None = None) -> RawFn:
    """Give the snapshots known times and the table a known ``snapshot-log``.

    ``timestamps``: version -> ISO instant for each snapshot's ``timestamp-ms``. ``log``: the
    whole snapshot log as (version, ISO instant) pairs, in order (default: one entry per pinned
    version at its time). ``current``: make that version's snapshot current (a rollback when it is
    older than the current one); the main ref follows.
    """

    pins = dict(timestamps)
    entries = list(log) if log is not None else sorted(pins.items(), key=lambda kv: iso_ms(kv[1]))

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            for version, text in pins.items():
                snapshot_for_version(doc, version)["timestamp-ms"] = iso_ms(text)
            resolved = [(int(snapshot_for_version(doc, v)["snapshot-id"]), iso_ms(t)) for v, t in entries]
            if current is not None:
                target = int(snapshot_for_version(doc, current)["snapshot-id"])
                doc["current-snapshot-id"] = target
                refs = dict(doc.get("refs") or {})
                if refs or int(doc["format-version"]) >= 2:
                    refs["main"] = {"snapshot-id": target, "type": "branch"}
                    doc["refs"] = refs
            if any(ms > now_ms() for _, ms in resolved):
                raise RawStepError("raw step: pinned times must lie in the past (last-updated-ms follows them)")
            doc["snapshot-log"] = [{"snapshot-id": sid, "timestamp-ms": ms} for sid, ms in resolved]

        edit(change)(storage)

    return fn


# --------------------------------------------------------------------------------------------
# Specs, versions, files
# --------------------------------------------------------------------------------------------


def add_unknown_transform_spec(column: str, transform: str) -> RawFn:
    """A new default partition spec whose only field uses ``transform`` (unknown to every reader
    today) on ``column``. No data is written under it, as the spec requires of writers that do
    not know a transform; the data stays under the earlier spec(s)."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            if int(doc["format-version"]) < 2:
                raise RawStepError("raw step: v1 tables keep the deprecated partition-spec; use a v2/v3 table")
            specs = list(doc["partition-specs"])
            spec_id = max(int(s["spec-id"]) for s in specs) + 1
            pid = max(int(doc.get("last-partition-id", 999)), 999) + 1
            field = {"source-id": field_id(doc, column), "field-id": pid, "name": f"{column}_future", "transform": transform}
            specs.append({"spec-id": spec_id, "fields": [field]})
            doc["partition-specs"] = specs
            doc["default-spec-id"] = spec_id
            doc["last-partition-id"] = pid

        edit(change)(storage)

    return fn


def set_format_version(version: int) -> RawFn:
    """``format-version`` rewritten (e.g. 99, which no version of the spec defines)."""

    @_raw()
    def fn(storage) -> None:
        edit(lambda doc, _s: doc.__setitem__("format-version", version))(storage)

    return fn


def delete_manifest_list(version: int | None = None) -> RawFn:
    """Delete the manifest list file of ``version``'s snapshot (None: the current snapshot)."""

    @_raw()
    def fn(storage) -> None:
        doc = read_metadata(storage)
        if version is None:
            snap = snapshots_by_id(doc).get(current_snapshot_id(doc) or -1)
        else:
            snap = snapshot_for_version(doc, version)
        if not snap or not snap.get("manifest-list"):
            raise RawStepError("raw step: no manifest list to delete")
        path = storage.resolve(snap["manifest-list"])
        if not storage.exists(path):
            raise RawStepError(f"raw step: manifest list {path} does not exist")
        storage.delete(path)

    return fn


def delete_data_files() -> RawFn:
    """Delete every object under ``data/`` (the snapshots still list them)."""

    @_raw()
    def fn(storage) -> None:
        victims = [i.path for i in storage.walk(DATA_DIR) if i.path.endswith(".parquet")]
        if not victims:
            raise RawStepError("raw step: no data file under data/")
        for path in victims:
            storage.delete(path)

    return fn


def delete_previous_metadata_files() -> RawFn:
    """Delete every metadata JSON file but the current one (the ``metadata-log`` still names them)."""

    @_raw()
    def fn(storage) -> None:
        current = current_metadata_path(storage)
        doc = read_metadata(storage)
        if not doc.get("metadata-log"):
            raise RawStepError("raw step: the current metadata has no metadata-log to orphan")
        for _n, _kind, path in metadata_files(storage):
            if path != current:
                storage.delete(path)

    return fn


def set_version_hint(text: str | None = None, *, back: int = 1) -> RawFn:
    """Rewrite ``metadata/version-hint.text``: to ``text``, or to the number ``back`` commits before the
    current one (a writer that crashed between its commit and the hint update leaves this)."""

    @_raw()
    def fn(storage) -> None:
        if text is not None:
            value = text
        else:
            numbers = [n for n, kind, _p in metadata_files(storage) if kind == "fs"]
            if len(numbers) <= back:
                raise RawStepError("raw step: not enough metadata files to point the hint back")
            value = str(numbers[-1 - back])
        storage.write_atomic(VERSION_HINT, value.encode("utf-8"))

    return fn


def add_missing_statistics() -> RawFn:
    """Register a table statistics file (Puffin) for the current snapshot that does not exist.

    Table Statistics: statistics are informational; readers may ignore them and a correct read
    must not depend on them."""

    @_raw()
    def fn(storage) -> None:
        def change(doc, _storage):
            sid = current_snapshot_id(doc)
            if sid is None:
                raise RawStepError("raw step: no current snapshot to describe")
            seq = int(snapshots_by_id(doc)[sid].get("sequence-number", 0))
            first = int(current_schema(doc)["fields"][0]["id"])
            doc["statistics"] = list(doc.get("statistics") or []) + [{
                "snapshot-id": sid,
                "statistics-path": storage.uri(f"{METADATA_DIR}/missing-{uuid.uuid4()}.stats"),
                "file-size-in-bytes": 413,
                "file-footer-size-in-bytes": 42,
                "blob-metadata": [{"type": "apache-datasketches-theta-v1", "snapshot-id": sid, "sequence-number": seq,
                                   "fields": [first], "properties": {"ndv": "3"}}],
            }]

        edit(change)(storage)

    return fn

"""Raw file surgery for the Paimon case corpus: tables no writer API produces.

Stale, missing and garbage ``LATEST``/``EARLIEST`` hints, snapshots with known commit times or keys
from a future release, schema files in the layout of older releases (no ``version``, no ``bucket``),
manifests written with an older release's Avro schema (fewer trailing ``_FILE`` fields), and broken
tables (a snapshot naming a missing schema, duplicate field ids, a deleted data file or manifest, a
corrupt deletion vector, ...). Each public function returns a *raw step function* ``fn(storage)``
that changes a freshly built table through its ``Storage``; the corpus wraps it in
``conformance.model.Raw``.

The surgery works on the files directly (JSON as plain dicts in the spec's spelling, Avro through
fastavro with each file's own writer schema) and never through the reference's parsers: a raw step
must be able to produce what the reference refuses, and must not change when the reference does.
Immutable files are rewritten in place only here, where a case asks for exactly that.
"""

from __future__ import annotations

import io
import json
from typing import Any, Callable, Iterable, Mapping

import fastavro

SNAPSHOT_DIR = "snapshot"
SCHEMA_DIR = "schema"
MANIFEST_DIR = "manifest"
INDEX_DIR = "index"
HINTS = ("LATEST", "EARLIEST")

RawFn = Callable[[Any], None]


def _json(storage: Any, path: str) -> dict:
    return json.loads(storage.read(path))


def _put_json(storage: Any, path: str, node: Mapping[str, Any]) -> None:
    # Java's JsonSerdeUtil writes pretty-printed JSON; the layout of whitespace carries no meaning.
    storage.write_atomic(path, json.dumps(node, indent=2).encode())


def _ids(storage: Any, directory: str, prefix: str) -> list[int]:
    out = []
    for info in storage.list(directory):
        name = info.path.rsplit("/", 1)[-1]
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            out.append(int(name[len(prefix):]))
    return sorted(out)


def snapshot_path(snapshot_id: int) -> str:
    """Where snapshot ``snapshot_id`` lives (main branch)."""
    return f"{SNAPSHOT_DIR}/snapshot-{snapshot_id}"


def schema_path(schema_id: int) -> str:
    """Where schema ``schema_id`` lives (main branch)."""
    return f"{SCHEMA_DIR}/schema-{schema_id}"


# --------------------------------------------------------------------------------------------
# Hints


def set_hint(hint: str, text: str) -> RawFn:
    """Overwrite ``snapshot/<hint>`` with ``text`` (a stale id, a garbage string, ...)."""
    assert hint in HINTS

    def fn(storage: Any) -> None:
        storage.write_atomic(f"{SNAPSHOT_DIR}/{hint}", text.encode())

    return fn


def delete_hints() -> RawFn:
    """Remove both hint files (readers must list the snapshot directory)."""

    def fn(storage: Any) -> None:
        for hint in HINTS:
            path = f"{SNAPSHOT_DIR}/{hint}"
            if storage.exists(path):
                storage.delete(path)

    return fn


# --------------------------------------------------------------------------------------------
# Snapshots


def pin_commit_times(start_ms: int, step_ms: int) -> RawFn:
    """Set every main-branch snapshot's ``timeMillis`` to ``start_ms + (id - 1) * step_ms`` (known instants)."""

    def fn(storage: Any) -> None:
        for sid in _ids(storage, SNAPSHOT_DIR, "snapshot-"):
            node = _json(storage, snapshot_path(sid))
            node["timeMillis"] = start_ms + (sid - 1) * step_ms
            _put_json(storage, snapshot_path(sid), node)

    return fn


def edit_snapshot(snapshot_id: int, changes: Mapping[str, Any], *, remove: Iterable[str] = ()) -> RawFn:
    """Set (or add) keys of snapshot ``snapshot_id``'s JSON and remove others."""

    def fn(storage: Any) -> None:
        node = _json(storage, snapshot_path(snapshot_id))
        node.update(changes)
        for key in remove:
            node.pop(key, None)
        _put_json(storage, snapshot_path(snapshot_id), node)

    return fn


def write_file(path: str, data: bytes) -> RawFn:
    """Overwrite (or create) ``path`` with ``data``."""

    def fn(storage: Any) -> None:
        storage.write_atomic(path, data)

    return fn


def delete_file(path: str) -> RawFn:
    """Delete one file of the table."""

    def fn(storage: Any) -> None:
        storage.delete(path)

    return fn


# --------------------------------------------------------------------------------------------
# Schemas


def edit_schema(schema_id: int, edit: Callable[[dict], None]) -> RawFn:
    """Rewrite schema ``schema_id``'s JSON through ``edit(node)`` (in place)."""

    def fn(storage: Any) -> None:
        node = _json(storage, schema_path(schema_id))
        edit(node)
        _put_json(storage, schema_path(schema_id), node)

    return fn


def legacy_schema(schema_id: int = 0, *, version: int | None = None, drop_options: Iterable[str] = ()) -> RawFn:
    """Make schema ``schema_id`` look written by an older release: ``version`` set (``None``: key
    removed, which readers take as version 1) and the given options removed."""
    drop = tuple(drop_options)

    def edit(node: dict) -> None:
        if version is None:
            node.pop("version", None)
        else:
            node["version"] = version
        for key in drop:
            node.get("options", {}).pop(key, None)

    return edit_schema(schema_id, edit)


# --------------------------------------------------------------------------------------------
# Manifests and data files


def _manifest_names(storage: Any, prefix: str) -> list[str]:
    return sorted(i.path.rsplit("/", 1)[-1] for i in storage.list(MANIFEST_DIR)
                  if i.path.rsplit("/", 1)[-1].startswith(prefix))


def _referenced(storage: Any, list_name: str | None) -> list[dict]:
    if not list_name:
        return []
    return list(fastavro.reader(io.BytesIO(storage.read(f"{MANIFEST_DIR}/{list_name}"))))


def data_files(storage: Any, snapshot_id: int) -> list[tuple[str, dict]]:
    """(path under the table, manifest record) of the ADD entries of snapshot ``snapshot_id``'s delta."""
    snap = _json(storage, snapshot_path(snapshot_id))
    out = []
    for meta in _referenced(storage, snap.get("deltaManifestList")):
        for entry in fastavro.reader(io.BytesIO(storage.read(f"{MANIFEST_DIR}/{meta['_FILE_NAME']}"))):
            if entry["_KIND"] == 0:
                out.append((entry["_BUCKET"], entry))
    paths = []
    for bucket, entry in out:
        files = [i.path for i in storage.walk("") if i.path.endswith("/" + entry["_FILE"]["_FILE_NAME"])
                 and f"bucket-{bucket}/" in i.path]
        paths.append((files[0] if files else entry["_FILE"]["_FILE_NAME"], entry))
    return paths


def delete_data_file(snapshot_id: int) -> RawFn:
    """Delete the first data file snapshot ``snapshot_id`` added (its manifest still names it)."""

    def fn(storage: Any) -> None:
        path, _ = data_files(storage, snapshot_id)[0]
        storage.delete(path)

    return fn


def orphan_copy(snapshot_id: int) -> RawFn:
    """Copy the first data file snapshot ``snapshot_id`` added to a new name beside it (an orphan:
    what a failed commit leaves behind)."""

    def fn(storage: Any) -> None:
        path, _ = data_files(storage, snapshot_id)[0]
        directory, name = path.rsplit("/", 1) if "/" in path else ("", path)
        storage.put_if_absent(f"{directory}/data-00000000-0000-0000-0000-000000000000-0.{name.rsplit('.', 1)[-1]}",
                              storage.read(path))

    return fn


def delete_delta_manifest(snapshot_id: int) -> RawFn:
    """Delete the data manifest(s) snapshot ``snapshot_id``'s delta manifest list names."""

    def fn(storage: Any) -> None:
        snap = _json(storage, snapshot_path(snapshot_id))
        for meta in _referenced(storage, snap.get("deltaManifestList")):
            storage.delete(f"{MANIFEST_DIR}/{meta['_FILE_NAME']}")

    return fn


def _rewrite_avro(storage: Any, path: str, edit_schema_: Callable[[dict], dict],
                  edit_record: Callable[[dict], dict]) -> int:
    """Re-encode one Avro file with an edited writer schema and records; returns its new size."""
    reader = fastavro.reader(io.BytesIO(storage.read(path)))
    schema = edit_schema_(json.loads(json.dumps(reader.writer_schema)))
    records = [edit_record(r) for r in reader]
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec=reader.codec)
    storage.write_atomic(path, buf.getvalue())
    return len(buf.getvalue())


# The _FILE fields each release line added (PAIMON_HUDI.md, "Data manifest entry"): a manifest of an
# older release ends its _FILE record before them.
FILE_FIELDS_SINCE = {
    "0.8": ("_DELETE_ROW_COUNT", "_EMBEDDED_FILE_INDEX"),
    "0.9": ("_FILE_SOURCE",),
    "1.0": ("_VALUE_STATS_COLS", "_EXTERNAL_PATH"),
    "1.3": ("_FIRST_ROW_ID", "_WRITE_COLS"),
    "2.1": ("_WRITE_COLS_SEQUENCES",),
}
_RELEASES = tuple(FILE_FIELDS_SINCE)


def _newer_file_fields(release: str) -> set[str]:
    later = _RELEASES[_RELEASES.index(release) + 1:]
    return {f for r in later for f in FILE_FIELDS_SINCE[r]}


def manifests_as_of_release(release: str) -> RawFn:
    """Rewrite every data manifest with the ``_FILE`` record of Paimon ``release`` (the fields added
    later dropped from the writer schema and the records), and the manifest lists' ``_FILE_SIZE``
    and the newer manifest-list fields to match. Readers must decode each file by its own schema."""
    drop = _newer_file_fields(release)
    # Manifest-list fields added after the release (1.1: buckets and levels; 1.4: row ids; 2.1: the rest).
    list_drop = {"_TOTAL_BUCKETS", "_EXTRA_FILES", "_MIN_ROW_ID", "_MAX_ROW_ID"}
    if release < "1.1":
        list_drop |= {"_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL", "_MAX_LEVEL"}

    def file_schema(schema: dict) -> dict:
        for field in schema["fields"]:
            if field["name"] == "_FILE":
                field["type"]["fields"] = [f for f in field["type"]["fields"] if f["name"] not in drop]
        return schema

    def file_record(record: dict) -> dict:
        record["_FILE"] = {k: v for k, v in record["_FILE"].items() if k not in drop}
        return record

    def list_schema(schema: dict) -> dict:
        schema["fields"] = [f for f in schema["fields"] if f["name"] not in list_drop]
        return schema

    def fn(storage: Any) -> None:
        sizes = {}
        for name in _manifest_names(storage, "manifest-"):
            if name.startswith("manifest-list-"):
                continue
            sizes[name] = _rewrite_avro(storage, f"{MANIFEST_DIR}/{name}", file_schema, file_record)

        def list_record(record: dict) -> dict:
            record = {k: v for k, v in record.items() if k not in list_drop}
            record["_FILE_SIZE"] = sizes.get(record["_FILE_NAME"], record["_FILE_SIZE"])
            return record

        for name in _manifest_names(storage, "manifest-list-"):
            _rewrite_avro(storage, f"{MANIFEST_DIR}/{name}", list_schema, list_record)
        # Snapshots record their manifest lists' sizes only since 0.9 era writers; keep them true.
        for sid in _ids(storage, SNAPSHOT_DIR, "snapshot-"):
            node = _json(storage, snapshot_path(sid))
            for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
                if node.get(key) and f"{key}Size" in node:
                    node[f"{key}Size"] = len(storage.read(f"{MANIFEST_DIR}/{node[key]}"))
            _put_json(storage, snapshot_path(sid), node)

    return fn


def corrupt_index_files(offset: int = 6) -> RawFn:
    """Flip one byte of every deletion-vector index file (inside the first bitmap: its CRC no longer matches)."""

    def fn(storage: Any) -> None:
        for info in storage.list(INDEX_DIR):
            data = bytearray(storage.read(info.path))
            if len(data) > offset and data[0] == 1:
                data[offset] ^= 0xFF
                storage.write_atomic(info.path, bytes(data))

    return fn


def set_manifest_bucket(snapshot_id: int, bucket: int) -> RawFn:
    """Rewrite snapshot ``snapshot_id``'s delta manifests so their entries claim bucket ``bucket``
    (and move the data files to ``bucket-<bucket>/``), manifest-list sizes and bucket ranges kept true.
    Only for the table's last snapshot: later base lists would keep the old manifest sizes."""

    def fn(storage: Any) -> None:
        snap = _json(storage, snapshot_path(snapshot_id))
        list_name = snap["deltaManifestList"]
        sizes = {}
        for meta in _referenced(storage, list_name):
            path = f"{MANIFEST_DIR}/{meta['_FILE_NAME']}"
            for entry in fastavro.reader(io.BytesIO(storage.read(path))):
                name = entry["_FILE"]["_FILE_NAME"]
                for info in storage.walk(""):
                    if info.path.endswith(f"bucket-{entry['_BUCKET']}/{name}"):
                        target = info.path[: -len(f"bucket-{entry['_BUCKET']}/{name}")] + f"bucket-{bucket}/{name}"
                        storage.write_atomic(target, storage.read(info.path))
                        storage.delete(info.path)
            sizes[meta["_FILE_NAME"]] = _rewrite_avro(storage, path, lambda s: s, lambda r: {**r, "_BUCKET": bucket})

        def list_record(record: dict) -> dict:
            if record["_FILE_NAME"] in sizes:
                record = {**record, "_FILE_SIZE": sizes[record["_FILE_NAME"]]}
                for key in ("_MIN_BUCKET", "_MAX_BUCKET"):
                    if key in record:
                        record[key] = bucket
            return record

        size = _rewrite_avro(storage, f"{MANIFEST_DIR}/{list_name}", lambda s: s, list_record)
        if "deltaManifestListSize" in snap:
            _put_json(storage, snapshot_path(snapshot_id), {**snap, "deltaManifestListSize": size})

    return fn

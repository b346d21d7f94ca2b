"""What every Iceberg engine adapter shares: where the current metadata is, what a version means,
and the facts ``describe`` reports.

The kit numbers Iceberg versions itself (the spec has snapshot ids, not version numbers), so
every adapter must resolve ``read(at=N)`` the same way; this module does it from the metadata
JSON alone, through ``reference_impl.storage`` for IO and nothing of ``reference_impl.iceberg``,
so an engine's answer never borrows the reference's interpretation of the spec:

* version 0: the table before its first snapshot (no rows);
* version N >= 1: the snapshot of the main branch's ancestry whose ``sequence-number`` is N
  (format v2/v3); for v1 (no sequence numbers), the N-th snapshot of the main ancestry counting
  its root as 1;
* a timestamp: the snapshot ``snapshot-log`` says was current then ("Point in Time Reads");
* a version that was never written, or was expired, raises ``InvalidTable``.

Which metadata file is current: ``metadata/version-hint.text`` naming ``v<N>.metadata.json``
(the file-system layout; then ``v<N+1>``, ``v<N+2>``... are probed, since the hint is written
after the commit and may lag), else the highest-numbered ``v<N>.metadata.json`` or
``<NNNNN>-<uuid>.metadata.json`` (catalog naming, e.g. pyiceberg's SQL catalog). The hint is a
hint: a hint naming a missing file falls back to listing.
"""

from __future__ import annotations

import os

import datetime as _dt
import gzip
import json
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping
from urllib.parse import urlparse

from conformance.model import TableRef
from reference_impl.errors import InvalidTable

METADATA_DIR = "metadata"
VERSION_HINT = "metadata/version-hint.text"
MAIN = "main"

# Iceberg read-feature names for ``Case.features`` and the adapters' ``unsupported_reasons``
# (the delete mechanisms use the spellings of ``Delete.how``).
POSITION_DELETES = "position-deletes"
EQUALITY_DELETES = "equality-deletes"
DELETION_VECTORS = "deletion-vectors"
FORMAT_V3 = "format-version-3"
# v3 types, one feature each (a reader may support some and not others).
TIMESTAMP_NS = "timestamp-ns"  # timestamp_ns and timestamptz_ns
UNKNOWN_TYPE = "unknown-type"
VARIANT_TYPE = "variant-type"
GEO_TYPES = "geo-types"  # geometry and geography
V3_TYPE_FEATURES = {
    "timestamp_ns": TIMESTAMP_NS, "timestamptz_ns": TIMESTAMP_NS, "unknown": UNKNOWN_TYPE,
    "variant": VARIANT_TYPE, "geometry": GEO_TYPES, "geography": GEO_TYPES,
}

# v<N>.metadata.json (file-system tables) and <NNNNN>-<uuid>.metadata.json (metastore tables),
# each optionally gzip-compressed under either spelling the spec mentions.
_FS_NAME = re.compile(r"^v(\d+)(?:\.gz)?\.metadata\.json(?:\.gz)?$")
_CATALOG_NAME = re.compile(r"^(\d+)-[0-9A-Za-z-]+(?:\.gz)?\.metadata\.json(?:\.gz)?$")


def storage_for(table: TableRef):
    """The reference ``Storage`` at the table's location (IO only), with its S3 options."""
    from conformance.engines._common import is_s3, s3_config
    from reference_impl.storage import open_storage

    return open_storage(table.uri, s3=s3_config(table)) if is_s3(table) else open_storage(table.uri)


def _metadata_number(name: str) -> int | None:
    m = _FS_NAME.match(name) or _CATALOG_NAME.match(name)
    return int(m.group(1)) if m else None


def _fs_metadata(storage, n: int) -> str | None:
    """Root-relative path of ``v<n>.metadata.json`` (or its gzip spellings), if it exists."""
    for name in (f"v{n}.metadata.json", f"v{n}.gz.metadata.json", f"v{n}.metadata.json.gz"):
        path = f"{METADATA_DIR}/{name}"
        if storage.exists(path):
            return path
    return None


def _current_path(storage) -> str:
    """Root-relative path of the current metadata file (see the module docstring)."""
    try:
        hint = storage.read(VERSION_HINT).decode("utf-8", "replace").strip()
    except FileNotFoundError:
        hint = ""
    if hint:
        # Java writes the version number; some writers write the file name itself.
        if hint.isdigit():
            found = _fs_metadata(storage, int(hint))
            if found is not None:
                # The commit is the creation of v<N+1>; the hint is written after it and may lag
                # (a writer that died in between, or a reader racing one). So probe upward from the
                # hinted version, as Java's HadoopTableOperations does after reading the hint.
                n = int(hint)
                while (newer := _fs_metadata(storage, n + 1)) is not None:
                    found, n = newer, n + 1
                return found
        else:
            path = f"{METADATA_DIR}/{hint}"
            if "/" not in hint and storage.exists(path):
                return path
    numbered: dict[int, list[str]] = {}
    for info in storage.list(METADATA_DIR):
        name = info.path.rsplit("/", 1)[-1]
        n = _metadata_number(name)
        if n is not None:
            numbered.setdefault(n, []).append(info.path)
    if not numbered:
        raise InvalidTable(
            f"no Iceberg metadata file under {storage.uri(METADATA_DIR)} (neither v<N>.metadata.json nor "
            "<NNNNN>-<uuid>.metadata.json)", rule="ICEBERG-COMMIT-008",
        )
    top = max(numbered)
    paths = sorted(numbered[top])
    if len(paths) > 1:
        # Two catalog-named files with one number: a lost commit race left one behind, and only
        # the catalog knows which won. Guessing could return uncommitted data.
        raise InvalidTable(
            f"{len(paths)} metadata files are numbered {top} ({', '.join(p.rsplit('/', 1)[-1] for p in paths)}); "
            "only the catalog can say which is current", rule="ICEBERG-COMMIT-009",
        )
    return paths[0]


def metadata_location(table: TableRef) -> str:
    """Absolute URI (``file:///...`` or ``s3://...``) of the table's current metadata file."""
    storage = storage_for(table)
    return storage.uri(_current_path(storage))


def _decode(data: bytes, where: str) -> dict:
    if data[:2] == b"\x1f\x8b":  # gzip, whatever the file is called
        data = gzip.decompress(data)
    try:
        obj = json.loads(data)
    except ValueError as exc:
        raise InvalidTable(f"metadata file {where} is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise InvalidTable(f"metadata file {where} is not a JSON object")
    return obj


def _relative(storage, location: str) -> str:
    """Root-relative path of a location stored in metadata (Java writes ``file:/abs`` for local)."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        return storage.resolve(parsed.path)
    return storage.resolve(location)


def load_metadata(table: TableRef, location: str | None = None) -> dict:
    """The metadata JSON at ``location`` (an absolute URI inside the table), else the current one."""
    storage = storage_for(table)
    path = _relative(storage, location) if location else _current_path(storage)
    try:
        return _decode(storage.read(path), storage.uri(path))
    except FileNotFoundError:
        raise InvalidTable(f"metadata file {storage.uri(path)} does not exist") from None


# ----------------------------------------------------------------------------------------------
# Snapshots and versions (plain JSON)
# ----------------------------------------------------------------------------------------------


def _format_version(md: Mapping) -> int:
    return int(md.get("format-version", 1))


def _snapshots(md: Mapping) -> dict[int, Mapping]:
    return {int(s["snapshot-id"]): s for s in md.get("snapshots") or [] if isinstance(s, Mapping)}


def _current_id(md: Mapping) -> int | None:
    sid = md.get("current-snapshot-id")
    # Java wrote -1 for "no current snapshot" in v1/v2 (Appendix F).
    return None if sid is None or int(sid) == -1 else int(sid)


def refs(md: Mapping) -> dict[str, Mapping]:
    """Every ref, with the implicit ``main`` branch (it exists even when ``refs`` is absent)."""
    out = {str(k): v for k, v in (md.get("refs") or {}).items() if isinstance(v, Mapping)}
    current = _current_id(md)
    if MAIN not in out and current is not None:
        out[MAIN] = {"snapshot-id": current, "type": "branch"}
    return out


def main_ancestry(md: Mapping) -> list[Mapping]:
    """The main branch's snapshots, newest first, as far back as parents are still listed."""
    snaps = _snapshots(md)
    head = refs(md).get(MAIN, {}).get("snapshot-id")
    out: list[Mapping] = []
    seen: set[int] = set()
    sid = int(head) if head is not None else None
    while sid is not None and sid in snaps and sid not in seen:
        seen.add(sid)
        snap = snaps[sid]
        out.append(snap)
        parent = snap.get("parent-snapshot-id")
        sid = int(parent) if parent is not None else None
    return out


def version_of(md: Mapping, snapshot: Mapping) -> int | None:
    """The kit's version number of a main-history snapshot (None if it cannot be numbered)."""
    if _format_version(md) >= 2:
        seq = snapshot.get("sequence-number")
        return int(seq) if seq is not None else None
    chain = main_ancestry(md)
    if not chain or chain[-1].get("parent-snapshot-id") is not None:
        return None  # the root was expired: v1 positions can no longer be counted
    ids = [int(s["snapshot-id"]) for s in reversed(chain)]
    sid = int(snapshot["snapshot-id"])
    return ids.index(sid) + 1 if sid in ids else None


def snapshot_for_version(md: Mapping, at: int) -> Mapping | None:
    """The main-history snapshot numbered ``at`` (None for version 0); ``InvalidTable`` if none."""
    if at < 0:
        raise InvalidTable(f"version {at} does not exist (versions count from 0)")
    if at == 0:
        return None
    chain = main_ancestry(md)
    if _format_version(md) >= 2:
        for snap in chain:
            if snap.get("sequence-number") is not None and int(snap["sequence-number"]) == at:
                return snap
        raise InvalidTable(
            f"version {at} does not exist: no snapshot of the main history has sequence number {at} "
            "(never written, on another branch, or expired)", version=at,
        )
    if chain and chain[-1].get("parent-snapshot-id") is not None:
        raise InvalidTable(
            f"version {at} of this v1 table cannot be located: its oldest snapshots were expired, so "
            "snapshots can no longer be counted from the root", version=at,
        )
    ordered = list(reversed(chain))
    if at > len(ordered):
        raise InvalidTable(f"version {at} does not exist: the main history has {len(ordered)} snapshot(s)", version=at)
    return ordered[at - 1]


def _timestamp_ms(timestamp: str | int | float | _dt.datetime) -> int:
    if isinstance(timestamp, (int, float)) and not isinstance(timestamp, bool):
        return int(timestamp)
    if isinstance(timestamp, str):
        from conformance.engines._common import parse_timestamp

        timestamp = parse_timestamp(timestamp)
    if isinstance(timestamp, _dt.datetime):
        if timestamp.tzinfo is None:
            timestamp = timestamp.replace(tzinfo=_dt.timezone.utc)
        return int(timestamp.timestamp() * 1000)
    raise InvalidTable(f"not a timestamp: {timestamp!r}")


def timestamp_ms(timestamp: str | int | float | _dt.datetime) -> int:
    """Milliseconds since the epoch of an ISO timestamp (naive = UTC), datetime or number."""
    return _timestamp_ms(timestamp)


def snapshot_as_of(md: Mapping, timestamp: str | int | float | _dt.datetime) -> Mapping:
    """The snapshot ``snapshot-log`` says was current at ``timestamp``; ``InvalidTable`` if none."""
    ms = _timestamp_ms(timestamp)
    log = [e for e in md.get("snapshot-log") or [] if isinstance(e, Mapping)]
    if not log:
        raise InvalidTable("the table has no snapshot-log, so no snapshot can be found by time", rule="ICEBERG-SNAP-015")
    earlier = [e for e in log if int(e["timestamp-ms"]) <= ms]
    if not earlier:
        raise InvalidTable(
            f"timestamp {timestamp} is before the table's first snapshot-log entry", rule="ICEBERG-SNAP-015"
        )
    entry = max(earlier, key=lambda e: int(e["timestamp-ms"]))  # the log is ordered; max is robust
    snap = _snapshots(md).get(int(entry["snapshot-id"]))
    if snap is None:
        raise InvalidTable(
            f"snapshot {entry['snapshot-id']} current at {timestamp} was expired", rule="ICEBERG-SNAP-015"
        )
    return snap


def snapshot_for_ref(md: Mapping, ref: str) -> Mapping | None:
    """The snapshot a branch or tag points at (None for ``main`` of a table without snapshots)."""
    found = refs(md).get(ref)
    if found is None:
        if ref == MAIN:
            return None
        raise InvalidTable(f"no branch or tag named {ref!r} (known: {sorted(refs(md))})", rule="ICEBERG-META-039")
    snap = _snapshots(md).get(int(found["snapshot-id"]))
    if snap is None:
        raise InvalidTable(f"ref {ref!r} points at snapshot {found['snapshot-id']}, which is not listed", rule="ICEBERG-REF-006")
    return snap


def _one_selector(at, timestamp, ref) -> None:
    given = [n for n, v in (("at", at), ("timestamp", timestamp), ("ref", ref)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"give at most one of version, timestamp and ref (got {', '.join(given)})")


def select_snapshot(md: Mapping, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None) -> Mapping | None:
    """The snapshot to read (None = no rows: version 0 or a table without snapshots)."""
    _one_selector(at, timestamp, ref)
    if at is not None:
        return snapshot_for_version(md, int(at))
    if timestamp is not None:
        return snapshot_as_of(md, timestamp)
    if ref is not None:
        return snapshot_for_ref(md, ref)
    current = _current_id(md)
    if current is None:
        return None
    snap = _snapshots(md).get(current)
    if snap is None:
        raise InvalidTable(f"current-snapshot-id {current} is not in the table's snapshots", rule="ICEBERG-META-029")
    return snap


def snapshot_id_for(
    table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
) -> int | None:
    """The snapshot id to read at a version / timestamp / ref (None = an empty table)."""
    snap = select_snapshot(load_metadata(table), at=at, timestamp=timestamp, ref=ref)
    return int(snap["snapshot-id"]) if snap is not None else None


@dataclass(frozen=True, slots=True)
class Selection:
    """What an adapter reads: the metadata file to open and the snapshot in it (None = no rows).

    ``metadata_location`` is the current metadata file, except for an empty selection (version 0
    or no snapshot), where it is the last metadata file written before the first snapshot, so that
    each engine derives the empty table's schema itself.
    """

    metadata_location: str
    snapshot_id: int | None
    format_version: int


def selection(table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None) -> Selection:
    """Resolve a read request once: current metadata location and the snapshot id to scan."""
    storage = storage_for(table)
    path = _current_path(storage)
    try:
        md = _decode(storage.read(path), storage.uri(path))
    except FileNotFoundError:
        raise InvalidTable(f"metadata file {storage.uri(path)} vanished while reading") from None
    snap = select_snapshot(md, at=at, timestamp=timestamp, ref=ref)
    location = storage.uri(path)
    if snap is None and _current_id(md) is not None:
        location = _empty_metadata_location(storage, md) or location
    return Selection(location, int(snap["snapshot-id"]) if snap is not None else None, _format_version(md))


def _empty_metadata_location(storage, md: Mapping) -> str | None:
    """The newest logged metadata file without a current snapshot (the table before its first
    snapshot), or None when the log does not reach back that far."""
    found = None
    for entry in md.get("metadata-log") or []:
        location = entry.get("metadata-file") if isinstance(entry, Mapping) else None
        if not location:
            continue
        try:
            old = _decode(storage.read(_relative(storage, location)), location)
        except (FileNotFoundError, InvalidTable):
            continue
        if _current_id(old) is not None:
            break
        found = storage.uri(_relative(storage, location))
    return found


# ----------------------------------------------------------------------------------------------
# describe() facts
# ----------------------------------------------------------------------------------------------

_PARAM_TRANSFORM = re.compile(r"^(bucket|truncate)\[(\d+)\]$")


def partition_expression(transform: str, columns: str | Iterable[str]) -> str:
    """A spec field in the kit's spelling: ``bucket[16]`` of ``id`` -> ``"bucket(16, id)"``,
    identity -> the column name, ``day`` -> ``"day(ts)"``."""
    cols = columns if isinstance(columns, str) else ", ".join(columns)
    t = transform.strip().lower()
    if t == "identity":
        return cols
    m = _PARAM_TRANSFORM.match(t)
    if m:
        return f"{m.group(1)}({m.group(2)}, {cols})"
    return f"{t}({cols})"


# The keys ``describe`` reports and how the harness compares each with a case's expectation (table
# properties list what must be present: an engine may add its own).
FACTS = {
    "format_version": "exact", "partition_spec": "exact", "schema_id": "exact", "properties": "subset",
    "refs": "exact", "operation": "exact",
}


def facts(
    *,
    format_version: int,
    partition_spec: Iterable[str],
    schema_id: int | None,
    properties: Mapping[str, str],
    refs: Mapping[str, str],
    operation: str | None,
) -> dict[str, Any]:
    """One engine's Iceberg facts in the case corpus' keys (see the contract)."""
    return {
        "format_version": int(format_version),
        "partition_spec": list(partition_spec),
        "schema_id": schema_id,
        "properties": dict(properties),
        "refs": dict(refs),
        "operation": operation,
    }


def _column_names(md: Mapping) -> dict[int, str]:
    """Field id -> name over every schema (current schema last, so its names win)."""
    schemas = [s for s in md.get("schemas") or [] if isinstance(s, Mapping)]
    if not schemas and isinstance(md.get("schema"), Mapping):
        schemas = [md["schema"]]
    current = md.get("current-schema-id")
    schemas.sort(key=lambda s: s.get("schema-id") == current)
    out: dict[int, str] = {}

    def walk(fields, prefix=""):
        for f in fields or []:
            out[int(f["id"])] = prefix + f["name"]
            t = f.get("type")
            if isinstance(t, Mapping) and t.get("type") == "struct":
                walk(t.get("fields"), prefix + f["name"] + ".")

    for s in schemas:
        walk(s.get("fields"))
    return out


def default_spec_fields(md: Mapping) -> list[Mapping]:
    """Fields of the default partition spec (v1's ``partition-spec`` when there is no list)."""
    specs = [s for s in md.get("partition-specs") or [] if isinstance(s, Mapping)]
    if specs:
        default = md.get("default-spec-id", 0)
        for s in specs:
            if s.get("spec-id") == default:
                return list(s.get("fields") or [])
        return []
    return list(md.get("partition-spec") or [])


_CURRENT: Any = object()


def facts_from_metadata(md: Mapping, snapshot: Mapping | None = _CURRENT) -> dict[str, Any]:
    """Facts from plain metadata JSON (for engines without a metadata model of their own).

    Without ``snapshot``: the latest version, whose ``schema_id`` is ``current-schema-id`` (the
    schema a latest read uses) and ``operation`` the current snapshot's. With one (an explicit
    version, timestamp or ref): ``schema_id`` and ``operation`` are that snapshot's. Everything
    else is the current metadata's: the spec keeps no history of properties, specs or refs.
    """
    names = _column_names(md)
    spec = []
    for f in default_spec_fields(md):
        ids = f.get("source-ids") or [f.get("source-id")]
        spec.append(partition_expression(str(f.get("transform")), [names.get(int(i), str(i)) for i in ids if i is not None]))
    latest = snapshot is _CURRENT
    if latest:
        current = _current_id(md)
        snapshot = _snapshots(md).get(current) if current is not None else None
    schema_id = snapshot.get("schema-id") if snapshot is not None and not latest else None
    if schema_id is None:
        schema_id = md.get("current-schema-id", (md.get("schema") or {}).get("schema-id"))
    return facts(
        format_version=_format_version(md),
        partition_spec=spec,
        schema_id=schema_id,
        properties=md.get("properties") or {},
        refs={name: str(r.get("type", "branch")) for name, r in refs(md).items()},
        operation=((snapshot or {}).get("summary") or {}).get("operation"),
    )


def reproduction_target(table: TableRef, at: int | None) -> tuple[str, int | None]:
    """(the metadata file relative to the table root, the snapshot id or None for the current one)
    that version ``at`` reads: what an exported reproduction script names."""
    import os

    from conformance.engines._common import local_path

    sel = selection(table, at=at)
    root = local_path(table.uri) or table.uri
    meta = local_path(sel.metadata_location) or sel.metadata_location
    return os.path.relpath(meta, root), (sel.snapshot_id if at is not None else None)


def reproduction_prelude(table: TableRef, at: int | None) -> str:
    """``META`` and ``SNAPSHOT`` lines of a reproduction's ``read()``."""
    rel, snapshot = reproduction_target(table, at)
    parts = ", ".join(repr(p) for p in rel.split(os.sep))
    return f"    import os\n    META = os.path.join(TABLE, {parts})\n    SNAPSHOT = {snapshot!r}\n"

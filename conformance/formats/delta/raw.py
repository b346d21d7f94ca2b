"""Raw log surgery for the Delta case corpus (Delta Log Entries, Checkpoints, Deletion Vectors).

The Delta cases need tables that no writer API produces: a gap in the versions, a commit with a
duplicated action, a corrupt ``_last_checkpoint``, an inline deletion vector, a path that
disagrees with its partition directory. Each public function here returns a *raw step function*
``fn(storage)`` that changes a freshly built table through its ``Storage``; the case corpus wraps
it in ``conformance.model.Raw``.

This module works on the wire JSON directly (plain dicts, the spec's key spelling) instead of
going through the reference implementation's parser: a raw step must be able to produce logs the
reference would refuse, and it must not change when the reference does.

Each function carries ``new_commits``: how many versions it appends, so the corpus can check the
versions it declares.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
import struct
import time
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import quote, unquote

import pyarrow as pa
import pyarrow.parquet as pq
from reference_impl.parquet_io import read_parquet_metadata

LOG_DIR = "_delta_log"
LAST_CHECKPOINT = f"{LOG_DIR}/_last_checkpoint"
# Wire keys of the actions, spelled once.
ADD, REMOVE, METADATA, PROTOCOL, COMMIT_INFO, TXN, DOMAIN = (
    "add",
    "remove",
    "metaData",
    "protocol",
    "commitInfo",
    "txn",
    "domainMetadata",
)
DV_MAGIC = 1681511377  # portable RoaringBitmapArray format (Deletion Vector Format)
Z85_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_COMMIT_RE = re.compile(r"^(\d{20})\.json$")

RawFn = Callable[[Any], None]


def _raw(new_commits: int) -> Callable[[RawFn], RawFn]:
    """Tag a raw step function with the number of versions it appends."""

    def deco(fn: RawFn) -> RawFn:
        fn.new_commits = new_commits  # type: ignore[attr-defined]
        return fn

    return deco


# --------------------------------------------------------------------------------------------
# Log file access (wire level)
# --------------------------------------------------------------------------------------------


def commit_path(version: int) -> str:
    """``_delta_log/<20-digit version>.json``."""
    return f"{LOG_DIR}/{version:020d}.json"


def crc_path(version: int) -> str:
    """``_delta_log/<20-digit version>.crc``."""
    return f"{LOG_DIR}/{version:020d}.crc"


def commit_versions(storage) -> list[int]:
    """Versions of the published commit files, ascending."""
    out = []
    for info in storage.list(LOG_DIR):
        m = _COMMIT_RE.match(posixpath.basename(info.path))
        if m:
            out.append(int(m.group(1)))
    return sorted(out)


def latest_version(storage) -> int:
    """The newest published commit version."""
    versions = commit_versions(storage)
    if not versions:
        raise RuntimeError("raw step: the table has no commits yet")
    return versions[-1]


def read_actions(storage, version: int) -> list[dict]:
    """The actions of one commit as wire dicts, in file order."""
    text = storage.read(commit_path(version)).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _encode(actions: Iterable[Mapping]) -> bytes:
    return "".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions).encode("utf-8")


def write_actions(storage, version: int, actions: Iterable[Mapping]) -> None:
    """Replace commit ``version`` (raw surgery only: real writers never rewrite a commit).

    The version's checksum file is dropped too: it described the old content.
    """
    storage.write_atomic(commit_path(version), _encode(actions))
    storage.delete(crc_path(version))


def append_commit(storage, actions: Iterable[Mapping]) -> int:
    """Commit ``actions`` as the next version (put-if-absent) and return that version."""
    version = latest_version(storage) + 1
    storage.put_if_absent(commit_path(version), _encode(actions))
    return version


def now_ms() -> int:
    """Wall clock in milliseconds (only for modificationTime-like fields, never for golden)."""
    return int(time.time() * 1000)


def live_adds(storage, upto: int | None = None) -> dict[str, dict]:
    """Live ``add`` actions by path, replaying the JSON commits only (cases that need this have
    every commit from version 0 present). Keyed by path; DV ids are ignored on purpose: the
    helpers pick a file to tamper with, they do not reconcile DVs."""
    files: dict[str, dict] = {}
    for v in commit_versions(storage):
        if upto is not None and v > upto:
            break
        for action in read_actions(storage, v):
            if ADD in action:
                files[action[ADD]["path"]] = action[ADD]
            elif REMOVE in action:
                files.pop(action[REMOVE]["path"], None)
    return files


def _pick_add(storage, index: int = 0) -> dict:
    adds = live_adds(storage)
    if not adds:
        raise RuntimeError("raw step: the table has no live data file")
    return dict(adds[sorted(adds)[index]])


def _remove_for(add: Mapping, *, data_change: bool) -> dict:
    remove = {
        "path": add["path"],
        "deletionTimestamp": now_ms(),
        "dataChange": data_change,
        "extendedFileMetadata": True,
        "partitionValues": add.get("partitionValues", {}),
        "size": add["size"],
    }
    if add.get("deletionVector") is not None:
        remove["deletionVector"] = add["deletionVector"]
    return remove


def _copy_object(storage, src_wire_path: str, dst_rel_path: str) -> int:
    data = storage.read(unquote(src_wire_path))
    storage.put_if_absent(dst_rel_path, data)
    return len(data)


def write_parquet(storage, rel_path: str, table: pa.Table) -> int:
    """Write ``table`` as a parquet object at ``rel_path``; returns its size."""
    sink = io.BytesIO()
    pq.write_table(table, sink)
    data = sink.getvalue()
    storage.put_if_absent(rel_path, data)
    return len(data)


# --------------------------------------------------------------------------------------------
# Deletion vector bytes (Deletion Vector Format, Z85)
# --------------------------------------------------------------------------------------------


def z85_encode(data: bytes) -> str:
    """Z85 text of ``data`` zero-padded to a multiple of 4 (sizeInBytes keeps the true length)."""
    padded = data + b"\x00" * (-len(data) % 4)
    out = []
    for i in range(0, len(padded), 4):
        n = int.from_bytes(padded[i : i + 4], "big")
        chunk = []
        for _ in range(5):
            n, r = divmod(n, 85)
            chunk.append(Z85_ALPHABET[r])
        out.extend(reversed(chunk))
    return "".join(out)


def serialize_dv(rows: Iterable[int]) -> bytes:
    """Magic + portable 64-bit RoaringBitmap of the row indexes (all little-endian)."""
    from pyroaring import BitMap

    buckets: dict[int, list[int]] = {}
    for r in sorted(set(int(x) for x in rows)):
        buckets.setdefault(r >> 32, []).append(r & 0xFFFFFFFF)
    out = struct.pack("<I", DV_MAGIC) + struct.pack("<Q", len(buckets))
    for key in sorted(buckets):
        out += struct.pack("<I", key) + BitMap(buckets[key]).serialize()
    return out


def inline_dv(rows: Iterable[int]) -> dict:
    """An inline (``i``) deletion vector descriptor deleting ``rows``."""
    rows = sorted(set(rows))
    data = serialize_dv(rows)
    return {"storageType": "i", "pathOrInlineDv": z85_encode(data), "sizeInBytes": len(data), "cardinality": len(rows)}


# --------------------------------------------------------------------------------------------
# Raw step functions. Each returns fn(storage) -> None, tagged with new_commits.
# --------------------------------------------------------------------------------------------


def delete_commits(versions: Iterable[int]) -> RawFn:
    """Delete the commit files (and checksums) of ``versions``."""
    versions = tuple(versions)

    @_raw(0)
    def fn(storage) -> None:
        for v in versions:
            storage.delete(commit_path(v))
            storage.delete(crc_path(v))

    return fn


def rename_commit_unpadded(version: int) -> RawFn:
    """Move commit ``version`` to an unpadded name (``_delta_log/<v>.json``), which is no commit."""

    @_raw(0)
    def fn(storage) -> None:
        data = storage.read(commit_path(version))
        storage.put_if_absent(f"{LOG_DIR}/{version}.json", data)
        storage.delete(commit_path(version))
        storage.delete(crc_path(version))

    return fn


def drop_action_kind(version: int, kind: str) -> RawFn:
    """Remove every action of wire kind ``kind`` (e.g. ``protocol``) from commit ``version``."""

    @_raw(0)
    def fn(storage) -> None:
        write_actions(storage, version, [a for a in read_actions(storage, version) if kind not in a])

    return fn


def duplicate_first_add(version: int) -> RawFn:
    """Repeat the first ``add`` line of commit ``version`` (an identical duplicate action)."""

    @_raw(0)
    def fn(storage) -> None:
        actions = read_actions(storage, version)
        first = next(i for i, a in enumerate(actions) if ADD in a)
        actions.insert(first + 1, json.loads(json.dumps(actions[first])))
        write_actions(storage, version, actions)

    return fn


def set_protocol(version: int, protocol: Mapping[str, Any]) -> RawFn:
    """Replace the protocol action of commit ``version`` by ``protocol`` (added if absent)."""

    @_raw(0)
    def fn(storage) -> None:
        actions = [a for a in read_actions(storage, version) if PROTOCOL not in a]
        at = 1 if actions and COMMIT_INFO in actions[0] else 0
        actions.insert(at, {PROTOCOL: dict(protocol)})
        write_actions(storage, version, actions)

    return fn


def set_configuration(version: int, updates: Mapping[str, str | None]) -> RawFn:
    """Change configuration keys of the metaData action of commit ``version`` (None removes)."""

    @_raw(0)
    def fn(storage) -> None:
        actions = read_actions(storage, version)
        for a in actions:
            if METADATA in a:
                conf = dict(a[METADATA].get("configuration") or {})
                for k, v in updates.items():
                    if v is None:
                        conf.pop(k, None)
                    else:
                        conf[k] = v
                a[METADATA]["configuration"] = conf
        write_actions(storage, version, actions)

    return fn


def truncate_line(version: int, line: int = -1) -> RawFn:
    """Cut one line of commit ``version`` in half (a malformed JSON line)."""

    @_raw(0)
    def fn(storage) -> None:
        lines = storage.read(commit_path(version)).decode("utf-8").splitlines()
        lines[line] = lines[line][: len(lines[line]) // 2]
        storage.write_atomic(commit_path(version), ("\n".join(lines) + "\n").encode("utf-8"))
        storage.delete(crc_path(version))

    return fn


def strip_stats() -> RawFn:
    """Remove ``stats`` from every add and remove in every commit (a table written without stats)."""

    @_raw(0)
    def fn(storage) -> None:
        for v in commit_versions(storage):
            actions = read_actions(storage, v)
            for a in actions:
                for kind in (ADD, REMOVE):
                    if kind in a:
                        a[kind].pop("stats", None)
            write_actions(storage, v, actions)

    return fn


def inject_unknown_fields() -> RawFn:
    """Add fields no spec version defines to every action (and to nested structs) of every commit."""

    @_raw(0)
    def fn(storage) -> None:
        for v in commit_versions(storage):
            actions = read_actions(storage, v)
            for a in actions:
                for body in a.values():
                    if isinstance(body, dict):
                        body["futureField"] = {"nested": [1, 2, 3], "flag": True}
                        body["futureScalar"] = "x"
                        if isinstance(body.get("format"), dict):
                            body["format"]["futureFormatField"] = 1
            write_actions(storage, v, actions)

    return fn


def append_unknown_actions() -> RawFn:
    """Commit a version holding only actions of kinds no spec version defines, plus commitInfo."""

    @_raw(1)
    def fn(storage) -> None:
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "FUTURE OPERATION", "timestamp": now_ms()}},
                {"futureAction": {"path": "does-not-exist.parquet", "payload": {"a": 1}}},
                {"anotherFutureAction": [1, 2, 3]},
            ],
        )

    return fn


def write_crc_files() -> RawFn:
    """Write a version checksum file for every commit that lacks one (state from JSON replay)."""

    @_raw(0)
    def fn(storage) -> None:
        protocol = metadata = None
        files: dict[str, dict] = {}
        txns: dict[str, dict] = {}
        for v in commit_versions(storage):
            for a in read_actions(storage, v):
                if PROTOCOL in a:
                    protocol = a[PROTOCOL]
                elif METADATA in a:
                    metadata = a[METADATA]
                elif ADD in a:
                    files[a[ADD]["path"]] = a[ADD]
                elif REMOVE in a:
                    files.pop(a[REMOVE]["path"], None)
                elif TXN in a:
                    txns[a[TXN]["appId"]] = a[TXN]
            if storage.exists(crc_path(v)):
                continue
            crc = {
                "tableSizeBytes": sum(int(f["size"]) for f in files.values()),
                "numFiles": len(files),
                "numMetadata": 1,
                "numProtocol": 1,
                "metadata": metadata,
                "protocol": protocol,
                "setTransactions": list(txns.values()),
                "allFiles": list(files.values()),
            }
            storage.put_if_absent(crc_path(v), json.dumps(crc, separators=(",", ":")).encode("utf-8"))

    return fn


def write_last_checkpoint(content: bytes) -> RawFn:
    """Overwrite ``_delta_log/_last_checkpoint`` with ``content`` (any bytes)."""

    @_raw(0)
    def fn(storage) -> None:
        storage.write_atomic(LAST_CHECKPOINT, content)

    return fn


def delete_last_checkpoint() -> RawFn:
    """Remove ``_delta_log/_last_checkpoint``."""

    @_raw(0)
    def fn(storage) -> None:
        storage.delete(LAST_CHECKPOINT)

    return fn


def delete_checkpoint_part(version: int, part: int) -> RawFn:
    """Delete part ``part`` of the multi-part checkpoint at ``version`` (an incomplete checkpoint)."""

    @_raw(0)
    def fn(storage) -> None:
        prefix = f"{version:020d}.checkpoint.{part:010d}."
        victims = [f.path for f in storage.list(LOG_DIR) if posixpath.basename(f.path).startswith(prefix)]
        if not victims:
            raise RuntimeError(f"raw step: no part {part} of a multi-part checkpoint at version {version}")
        for p in victims:
            storage.delete(p)

    return fn


def delete_first_data_file() -> RawFn:
    """Delete the data file of the first live add (the log now points at nothing)."""

    @_raw(0)
    def fn(storage) -> None:
        storage.delete(unquote(_pick_add(storage)["path"]))

    return fn


def pin_in_commit_timestamps(start_ms: int, step_ms: int) -> RawFn:
    """Set commitInfo.inCommitTimestamp of version v to ``start_ms + v * step_ms`` in every commit.

    Real writers take the clock; the corpus pins the values so timestamp time travel has a
    deterministic answer. The result still satisfies the ICT rules (strictly increasing).
    """

    @_raw(0)
    def fn(storage) -> None:
        for v in commit_versions(storage):
            actions = read_actions(storage, v)
            for a in actions:
                if COMMIT_INFO in a:
                    a[COMMIT_INFO]["inCommitTimestamp"] = start_ms + v * step_ms
                    if "timestamp" in a[COMMIT_INFO]:
                        a[COMMIT_INFO]["timestamp"] = start_ms + v * step_ms
            write_actions(storage, v, actions)

    return fn


def add_txn(app_id: str, app_version: int) -> RawFn:
    """Commit a version holding one txn action (application transaction identifier)."""

    @_raw(1)
    def fn(storage) -> None:
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "SET TRANSACTION", "timestamp": now_ms()}},
                {TXN: {"appId": app_id, "version": app_version, "lastUpdated": now_ms()}},
            ],
        )

    return fn


def add_domain(domain: str, configuration: str, removed: bool = False) -> RawFn:
    """Commit a version holding one domainMetadata action."""

    @_raw(1)
    def fn(storage) -> None:
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "DOMAIN METADATA", "timestamp": now_ms()}},
                {DOMAIN: {"domain": domain, "configuration": configuration, "removed": removed}},
            ],
        )

    return fn


def readd_removed_file(added_in: int) -> RawFn:
    """Commit a version re-adding the (removed) first file that version ``added_in`` added."""

    @_raw(1)
    def fn(storage) -> None:
        add = next(a[ADD] for a in read_actions(storage, added_in) if ADD in a)
        add = dict(add, modificationTime=now_ms(), dataChange=True)
        append_commit(storage, [{COMMIT_INFO: {"operation": "RESTORE FILE", "timestamp": now_ms()}}, {ADD: add}])

    return fn


def remove_first_file() -> RawFn:
    """Commit a version removing the first live file (dataChange=true)."""

    @_raw(1)
    def fn(storage) -> None:
        add = _pick_add(storage)
        append_commit(
            storage,
            [{COMMIT_INFO: {"operation": "DELETE", "timestamp": now_ms()}}, {REMOVE: _remove_for(add, data_change=True)}],
        )

    return fn


def _with_num_records(add: dict, storage) -> str:
    stats = json.loads(add["stats"]) if add.get("stats") else {}
    if "numRecords" not in stats:
        meta = read_parquet_metadata(storage.read(unquote(add["path"])))
        stats = {"numRecords": meta.num_rows}
    stats["tightBounds"] = False  # the stats describe the physical file, not the surviving rows
    return json.dumps(stats, separators=(",", ":"))


def inline_dv_on_first_file(rows: Iterable[int]) -> RawFn:
    """Commit a version replacing the first live file by itself with an inline DV deleting ``rows``."""
    rows = tuple(rows)

    @_raw(1)
    def fn(storage) -> None:
        add = _pick_add(storage)
        new_add = dict(add, deletionVector=inline_dv(rows), dataChange=True, modificationTime=now_ms())
        new_add["stats"] = _with_num_records(add, storage)
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "DELETE", "timestamp": now_ms()}},
                {REMOVE: _remove_for(add, data_change=True)},
                {ADD: new_add},
            ],
        )

    return fn


def drop_dv_on_first_file() -> RawFn:
    """Commit a version replacing the first live (path, dv) by (path, NULL): the rows come back.

    Legal: the same path appears in an add and a remove, with different dvIds.
    """

    @_raw(1)
    def fn(storage) -> None:
        add = _pick_add(storage)
        if add.get("deletionVector") is None:
            raise RuntimeError("raw step: the first live file has no deletion vector")
        new_add = {k: v for k, v in add.items() if k != "deletionVector"}
        new_add.update(dataChange=True, modificationTime=now_ms())
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "RESTORE", "timestamp": now_ms()}},
                {REMOVE: _remove_for(add, data_change=True)},
                {ADD: new_add},
            ],
        )

    return fn


def corrupt_first_dv_file() -> RawFn:
    """Flip one byte inside the bitmap of the first on-disk DV file (its CRC no longer matches)."""

    @_raw(0)
    def fn(storage) -> None:
        victims = [f.path for f in storage.walk("") if posixpath.basename(f.path).startswith("deletion_vector_")]
        if not victims:
            raise RuntimeError("raw step: the table has no deletion vector file")
        data = bytearray(storage.read(victims[0]))
        # byte 0 is the format version, 1..4 the big-endian size; 9 is inside the bitmap (after its magic)
        data[9] ^= 0xFF
        storage.write_atomic(victims[0], bytes(data))

    return fn


def move_first_file(new_rel_path: str, *, encode: bool = True) -> RawFn:
    """Commit a version moving the first live file to ``new_rel_path`` (dataChange=false).

    The partition values stay as they were, whatever the new directory says. With ``encode`` the
    add.path is the percent-encoded URI of the new path, as the spec requires.
    """

    @_raw(1)
    def fn(storage) -> None:
        add = _pick_add(storage)
        size = _copy_object(storage, add["path"], new_rel_path)
        wire = quote(new_rel_path, safe="/") if encode else new_rel_path
        new_add = dict(add, path=wire, size=size, dataChange=False, modificationTime=now_ms())
        new_add.pop("deletionVector", None)
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "MOVE FILE", "timestamp": now_ms()}},
                {REMOVE: _remove_for(add, data_change=False)},
                {ADD: new_add},
            ],
        )

    return fn


def absolute_path_for_first_file() -> RawFn:
    """Commit a version re-adding the first live file under its absolute URI (dataChange=false).

    The relative and the absolute spelling are two logical files for replay, so the relative one
    is removed in the same commit.
    """

    @_raw(1)
    def fn(storage) -> None:
        add = _pick_add(storage)
        absolute = storage.uri(unquote(add["path"]))
        # The URI in the log is percent-encoded like any other path.
        scheme, rest = absolute.split("://", 1)
        new_add = dict(add, path=f"{scheme}://{quote(rest, safe='/')}", dataChange=False, modificationTime=now_ms())
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "ABSOLUTE PATH", "timestamp": now_ms()}},
                {REMOVE: _remove_for(add, data_change=False)},
                {ADD: new_add},
            ],
        )

    return fn


def add_escaping_path() -> RawFn:
    """Commit a version adding a file whose relative path climbs out of the table root."""

    @_raw(1)
    def fn(storage) -> None:
        add = _pick_add(storage)
        new_add = dict(add, path="../outside-the-table.parquet", dataChange=True, modificationTime=now_ms())
        new_add.pop("deletionVector", None)
        append_commit(storage, [{COMMIT_INFO: {"operation": "WRITE", "timestamp": now_ms()}}, {ADD: new_add}])

    return fn


def set_partition_value_in_log(version: int, column_physical_or_logical: str, value: str | None) -> RawFn:
    """Rewrite partitionValues[column] of every add in commit ``version`` to ``value``.

    Under column mapping the key is the physical name; the caller passes the key as the log
    spells it.
    """

    @_raw(0)
    def fn(storage) -> None:
        actions = read_actions(storage, version)
        for a in actions:
            if ADD in a and column_physical_or_logical in a[ADD].get("partitionValues", {}):
                a[ADD]["partitionValues"][column_physical_or_logical] = value
        write_actions(storage, version, actions)

    return fn


def rewrite_partition_values(version: int, column: str, mapping: Mapping[str | None, str | None]) -> RawFn:
    """Rewrite partitionValues[column] of the adds in commit ``version`` through ``mapping``.

    Values missing from ``mapping`` stay. Used to switch between the serialised forms the spec
    allows for one value (e.g. timestamp forms, ``""`` vs JSON null).
    """

    @_raw(0)
    def fn(storage) -> None:
        actions = read_actions(storage, version)
        for a in actions:
            pv = a.get(ADD, {}).get("partitionValues")
            if pv is not None and column in pv and pv[column] in mapping:
                pv[column] = mapping[pv[column]]
        write_actions(storage, version, actions)

    return fn


def chain(*fns: RawFn) -> RawFn:
    """Run several raw step functions in order as one."""

    @_raw(sum(getattr(f, "new_commits", 0) for f in fns))
    def fn(storage) -> None:
        for f in fns:
            f(storage)

    return fn


_TS_FORMS = {
    "space": "%Y-%m-%d %H:%M:%S",
    "space_micros": "%Y-%m-%d %H:%M:%S.%f",
    "iso_utc": "%Y-%m-%dT%H:%M:%S.%fZ",
}


def _parse_partition_timestamp(text: str):
    from datetime import datetime, timezone

    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is None:  # non-ISO forms: the corpus writer runs in UTC
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc)


def reformat_timestamp_partitions(version: int, column: str, forms: tuple[str, ...]) -> RawFn:
    """Rewrite the timestamp partition values of commit ``version`` into the spec's other forms.

    The adds, ordered by value, get ``forms[i % len(forms)]`` (``space``, ``space_micros``,
    ``iso_utc``): one table then holds every serialisation a reader must accept.
    """

    @_raw(0)
    def fn(storage) -> None:
        actions = read_actions(storage, version)
        adds = [a[ADD] for a in actions if ADD in a and a[ADD].get("partitionValues", {}).get(column) not in (None, "")]
        adds.sort(key=lambda add: _parse_partition_timestamp(add["partitionValues"][column]))
        for i, add in enumerate(adds):
            value = _parse_partition_timestamp(add["partitionValues"][column])
            add["partitionValues"][column] = value.strftime(_TS_FORMS[forms[i % len(forms)]])
        write_actions(storage, version, actions)

    return fn


_STASH = "_lakeconf_stash/_last_checkpoint"


def stash_last_checkpoint() -> RawFn:
    """Keep a copy of the current ``_last_checkpoint`` (outside the log) for a later restore."""

    @_raw(0)
    def fn(storage) -> None:
        storage.write_atomic(_STASH, storage.read(LAST_CHECKPOINT))

    return fn


def restore_last_checkpoint() -> RawFn:
    """Put the stashed ``_last_checkpoint`` back (it now points at an older checkpoint)."""

    @_raw(0)
    def fn(storage) -> None:
        storage.write_atomic(LAST_CHECKPOINT, storage.read(_STASH))
        storage.delete(_STASH)

    return fn


def append_data_file(
    table: pa.Table,
    rel_path: str,
    *,
    partition_values: Mapping[str, str | None] | None = None,
    parquet_options: Mapping[str, Any] | None = None,
    add_fields: Mapping[str, Any] | None = None,
) -> RawFn:
    """Commit a version adding one hand-written parquet file (``parquet_options`` go to pyarrow).

    For files no writer API produces: an INT96 timestamp, integer-backed decimals, a codec or a
    page version chosen on purpose, a column the schema lacks or misses, zero rows. ``add_fields``
    go into the add action as they are (e.g. baseRowId).
    """
    options = dict(parquet_options or {})

    @_raw(1)
    def fn(storage) -> None:
        sink = io.BytesIO()
        pq.write_table(table, sink, **options)
        data = sink.getvalue()
        storage.put_if_absent(rel_path, data)
        add = {
            "path": quote(rel_path, safe="/"),
            "partitionValues": dict(partition_values or {}),
            "size": len(data),
            "modificationTime": now_ms(),
            "dataChange": True,
            "stats": json.dumps({"numRecords": table.num_rows}, separators=(",", ":")),
            **dict(add_fields or {}),
        }
        append_commit(storage, [{COMMIT_INFO: {"operation": "WRITE", "timestamp": now_ms()}}, {ADD: add}])

    return fn


def write_log_compaction(start: int, end: int) -> RawFn:
    """Write ``<start>.<end>.compacted.json``: the reconciled actions of commits start..end.

    Reconciliation as the spec's example shows: newest protocol, metaData, txn per appId, domain
    per name, and the newest file action per (path, dvId); no commitInfo.
    """

    @_raw(0)
    def fn(storage) -> None:
        singles: dict[str, dict] = {}
        txns: dict[str, dict] = {}
        domains: dict[str, dict] = {}
        files: dict[tuple[str, str | None], dict] = {}
        for v in range(start, end + 1):
            for a in read_actions(storage, v):
                if PROTOCOL in a or METADATA in a:
                    singles[next(iter(a))] = a
                elif TXN in a:
                    txns[a[TXN]["appId"]] = a
                elif DOMAIN in a:
                    domains[a[DOMAIN]["domain"]] = a
                elif ADD in a or REMOVE in a:
                    body = a.get(ADD) or a.get(REMOVE)
                    dv = body.get("deletionVector")
                    dv_id = None
                    if dv:
                        dv_id = dv["storageType"] + dv["pathOrInlineDv"] + (f"@{dv['offset']}" if dv.get("offset") is not None else "")
                    files[(body["path"], dv_id)] = a
        actions = [*singles.values(), *txns.values(), *domains.values(), *files.values()]
        storage.put_if_absent(f"{LOG_DIR}/{start:020d}.{end:020d}.compacted.json", _encode(actions))

    return fn


def _z85_decode(text: str) -> bytes:
    out = b""
    for i in range(0, len(text), 5):
        n = 0
        for ch in text[i : i + 5]:
            n = n * 85 + Z85_ALPHABET.index(ch)
        out += n.to_bytes(4, "big")
    return out


def dv_to_absolute_path() -> RawFn:
    """Commit a version swapping the first live file's 'u' DV for the same DV as a 'p' (absolute URI).

    Legal: remove(p, u-dv) + add(p, p-dv) have different dvIds.
    """
    import uuid as _uuid

    @_raw(1)
    def fn(storage) -> None:
        add = _pick_add(storage)
        dv = add.get("deletionVector")
        if not dv or dv["storageType"] != "u":
            raise RuntimeError("raw step: the first live file has no 'u' deletion vector")
        encoded = dv["pathOrInlineDv"]
        prefix, z85_uuid = encoded[:-20], encoded[-20:]
        name = f"deletion_vector_{_uuid.UUID(bytes=_z85_decode(z85_uuid))}.bin"
        rel = f"{prefix}/{name}" if prefix else name
        absolute = storage.uri(rel)
        scheme, rest = absolute.split("://", 1)
        new_dv = dict(dv, storageType="p", pathOrInlineDv=f"{scheme}://{quote(rest, safe='/')}")
        # The same rows, only the DV's address changes: a reorganisation (dataChange=false).
        new_add = dict(add, deletionVector=new_dv, dataChange=False, modificationTime=now_ms())
        append_commit(
            storage,
            [
                {COMMIT_INFO: {"operation": "DV TO ABSOLUTE PATH", "timestamp": now_ms()}},
                {REMOVE: _remove_for(add, data_change=False)},
                {ADD: new_add},
            ],
        )

    return fn


def add_second_metadata(version: int, *, schema_string: str) -> RawFn:
    """Add a second metaData action (same id, another schema) to commit ``version``."""

    @_raw(0)
    def fn(storage) -> None:
        actions = read_actions(storage, version)
        first = next(a[METADATA] for a in actions if METADATA in a)
        actions.append({METADATA: dict(first, schemaString=schema_string)})
        write_actions(storage, version, actions)

    return fn


def delete_dv_files() -> RawFn:
    """Delete every on-disk deletion vector file of the table."""

    @_raw(0)
    def fn(storage) -> None:
        victims = [f.path for f in storage.walk("") if posixpath.basename(f.path).startswith("deletion_vector_")]
        if not victims:
            raise RuntimeError("raw step: the table has no deletion vector file")
        for p in victims:
            storage.delete(p)

    return fn


def set_dv_storage_type(version: int, storage_type: str) -> RawFn:
    """Rewrite storageType of every DV on an add of commit ``version`` (e.g. to an undefined letter)."""

    @_raw(0)
    def fn(storage) -> None:
        actions = read_actions(storage, version)
        touched = 0
        for a in actions:
            dv = a.get(ADD, {}).get("deletionVector")
            if dv:
                dv["storageType"] = storage_type
                touched += 1
        if not touched:
            raise RuntimeError(f"raw step: commit {version} adds no file with a deletion vector")
        write_actions(storage, version, actions)

    return fn

"""Delta Log Entries, Checkpoints (naming) and the Last Checkpoint File: listing the log.

This module knows the names of every file the spec puts in ``_delta_log`` and how to choose the
files that make up one snapshot (a *log segment*: the newest usable checkpoint at or below the
target version plus the consecutive commits after it). It reads no action content; replay.py and
checkpoint.py do.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from reference_impl.errors import InvalidTable
from reference_impl.storage import FileInfo, Storage

LOG_DIR = "_delta_log"
SIDECAR_DIR = f"{LOG_DIR}/_sidecars"
LAST_CHECKPOINT = "_last_checkpoint"
LAST_CHECKPOINT_PATH = f"{LOG_DIR}/{LAST_CHECKPOINT}"

# _last_checkpoint keys (Last Checkpoint File Schema)
LC_VERSION = "version"
LC_SIZE = "size"
LC_PARTS = "parts"
LC_SIZE_IN_BYTES = "sizeInBytes"
LC_NUM_OF_ADD_FILES = "numOfAddFiles"
LC_CHECKPOINT_SCHEMA = "checkpointSchema"
LC_TAGS = "tags"
LC_CHECKSUM = "checksum"

KIND_COMMIT = "commit"
KIND_CLASSIC = "checkpoint-classic"
KIND_MULTIPART = "checkpoint-multipart"
KIND_V2 = "checkpoint-v2"
KIND_CRC = "crc"
KIND_COMPACTION = "compaction"
KIND_LAST_CHECKPOINT = "last_checkpoint"

# CheckpointInstance.kind values
CKPT_CLASSIC = "classic"
CKPT_MULTIPART = "multipart"
CKPT_V2 = "v2"

_V = r"(\d{20})"
_UUID = r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"
_RE_COMMIT = re.compile(rf"^{_V}\.json$", re.ASCII)
_RE_CLASSIC = re.compile(rf"^{_V}\.checkpoint\.parquet$", re.ASCII)
_RE_MULTIPART = re.compile(rf"^{_V}\.checkpoint\.(\d{{10}})\.(\d{{10}})\.parquet$", re.ASCII)
_RE_V2 = re.compile(rf"^{_V}\.checkpoint\.{_UUID}\.(json|parquet)$", re.ASCII)
_RE_CRC = re.compile(rf"^{_V}\.crc$", re.ASCII)
_RE_COMPACTION = re.compile(rf"^{_V}\.{_V}\.compacted\.json$", re.ASCII)


def _pad(version: int) -> str:
    if version < 0:
        raise InvalidTable(f"negative table version {version}")
    return f"{version:020d}"


def commit_path(version: int) -> str:
    """``_delta_log/<20-digit version>.json``."""
    return f"{LOG_DIR}/{_pad(version)}.json"


def classic_checkpoint_path(version: int) -> str:
    """``_delta_log/<v>.checkpoint.parquet``."""
    return f"{LOG_DIR}/{_pad(version)}.checkpoint.parquet"


def multipart_checkpoint_path(version: int, part: int, num_parts: int) -> str:
    """``_delta_log/<v>.checkpoint.<o>.<p>.parquet`` (o, p 10-digit)."""
    return f"{LOG_DIR}/{_pad(version)}.checkpoint.{part:010d}.{num_parts:010d}.parquet"


def v2_checkpoint_path(version: int, uuid: str, ext: str = "parquet") -> str:
    """``_delta_log/<v>.checkpoint.<uuid>.<json|parquet>``."""
    return f"{LOG_DIR}/{_pad(version)}.checkpoint.{uuid}.{ext}"


def crc_path(version: int) -> str:
    """``_delta_log/<v>.crc``."""
    return f"{LOG_DIR}/{_pad(version)}.crc"


def compaction_path(start: int, end: int) -> str:
    """``_delta_log/<x>.<y>.compacted.json``."""
    return f"{LOG_DIR}/{_pad(start)}.{_pad(end)}.compacted.json"


def sidecar_path(name: str) -> str:
    """``_delta_log/_sidecars/<name>``."""
    return f"{SIDECAR_DIR}/{name}"


@dataclass(frozen=True, slots=True, kw_only=True)
class LogFile:
    """What a file name in ``_delta_log`` says about the file."""

    name: str
    kind: str
    version: int | None = None
    part: int | None = None
    num_parts: int | None = None
    uuid: str | None = None
    end_version: int | None = None  # compaction files
    ext: str | None = None  # v2 checkpoints: "json" | "parquet"


def parse_log_file_name(name: str) -> LogFile | None:
    """Classify a ``_delta_log`` file name; None for names the spec does not define."""
    name = name.rsplit("/", 1)[-1]
    if name.endswith(".json"):
        m = _RE_COMMIT.match(name)
        if m:
            return LogFile(name=name, kind=KIND_COMMIT, version=int(m.group(1)))
        m = _RE_COMPACTION.match(name)
        if m:
            start, end = int(m.group(1)), int(m.group(2))
            if end <= start:  # DELTA-LOG-012: y must be strictly greater than x
                return None
            return LogFile(name=name, kind=KIND_COMPACTION, version=start, end_version=end)
    if name == LAST_CHECKPOINT:
        return LogFile(name=name, kind=KIND_LAST_CHECKPOINT)
    m = _RE_CLASSIC.match(name)
    if m:
        return LogFile(name=name, kind=KIND_CLASSIC, version=int(m.group(1)))
    m = _RE_MULTIPART.match(name)
    if m:
        part, parts = int(m.group(2)), int(m.group(3))
        if not (1 <= part <= parts) or parts < 2:  # DELTA-CKPT-012
            return None
        return LogFile(name=name, kind=KIND_MULTIPART, version=int(m.group(1)), part=part, num_parts=parts)
    m = _RE_V2.match(name)
    if m:
        return LogFile(name=name, kind=KIND_V2, version=int(m.group(1)), uuid=m.group(2).lower(), ext=m.group(3))
    m = _RE_CRC.match(name)
    if m:
        return LogFile(name=name, kind=KIND_CRC, version=int(m.group(1)))
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointInstance:
    """One checkpoint: its files (one, or p parts) and whether all of them are present."""

    version: int
    kind: str  # "classic" | "multipart" | "v2"
    files: tuple[FileInfo, ...]
    complete: bool = True
    num_parts: int | None = None
    uuid: str | None = None


@dataclass(slots=True, kw_only=True)
class LogListing:
    """Everything recognised in ``_delta_log`` (unknown names are ignored)."""

    commits: dict[int, FileInfo] = field(default_factory=dict)
    checkpoints: list[CheckpointInstance] = field(default_factory=list)
    crcs: dict[int, FileInfo] = field(default_factory=dict)
    compactions: list[tuple[int, int, FileInfo]] = field(default_factory=list)
    last_checkpoint: FileInfo | None = None


def list_log(storage: Storage) -> LogListing:
    """List ``_delta_log`` once and group its files by kind."""
    out = LogListing()
    multipart: dict[tuple[int, int], dict[int, FileInfo]] = {}
    for info in storage.list(LOG_DIR):
        lf = parse_log_file_name(info.path)
        if lf is None:
            continue
        kind = lf.kind
        if kind == KIND_COMMIT:
            out.commits[lf.version] = info
        elif kind == KIND_CLASSIC:
            out.checkpoints.append(CheckpointInstance(version=lf.version, kind=CKPT_CLASSIC, files=(info,)))
        elif kind == KIND_V2:
            out.checkpoints.append(CheckpointInstance(version=lf.version, kind=CKPT_V2, files=(info,), uuid=lf.uuid))
        elif kind == KIND_MULTIPART:
            multipart.setdefault((lf.version, lf.num_parts), {})[lf.part] = info
        elif kind == KIND_CRC:
            out.crcs[lf.version] = info
        elif kind == KIND_COMPACTION:
            out.compactions.append((lf.version, lf.end_version, info))
        elif kind == KIND_LAST_CHECKPOINT:
            out.last_checkpoint = info
    for (version, parts), found in multipart.items():
        files = tuple(found[p] for p in sorted(found))
        out.checkpoints.append(CheckpointInstance(
            version=version, kind=CKPT_MULTIPART, files=files, num_parts=parts,
            complete=len(found) == parts))  # DELTA-CKPT-014: all p parts or nothing
    out.checkpoints.sort(key=lambda c: (c.version, c.kind, c.num_parts or 0, c.uuid or ""))
    out.compactions.sort()
    return out


# --- _last_checkpoint --------------------------------------------------------------------


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


class _RawNumber(str):
    """A JSON number kept as its source text, so the checksum sees what the writer wrote."""


def _canon_string(s: str) -> str:
    return '"' + quote(s, safe="") + '"'


def _canon_value(v: Any) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, _RawNumber):
        return str.__str__(v)
    if isinstance(v, (int, float)):
        return json.dumps(v)
    return _canon_string(v)


def _canon_pairs(value: Any, prefix: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            seg = _canon_string(k)
            _canon_pairs(v, f"{prefix}+{seg}" if prefix else seg, out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _canon_pairs(v, f"{prefix}+{i}" if prefix else str(i), out)
    else:
        out.append((prefix, _canon_value(value)))


def canonical_json(obj: dict) -> str:
    """The spec's canonical form of a ``_last_checkpoint`` object (top-level ``checksum`` left out)."""
    pairs: list[tuple[str, str]] = []
    for k, v in obj.items():
        if k == LC_CHECKSUM:
            continue
        _canon_pairs(v, _canon_string(k), pairs)
    pairs.sort(key=lambda p: p[0].encode("utf-8"))
    return ",".join(f"{p}={v}" for p, v in pairs)


def last_checkpoint_checksum(obj: dict) -> str:
    """MD5 (hex) of the canonical JSON (DELTA-CKPT-029)."""
    return hashlib.md5(canonical_json(obj).encode("utf-8")).hexdigest()


def parse_last_checkpoint(data: bytes) -> dict:
    """Parse and check a ``_last_checkpoint`` body; InvalidTable when it must not be trusted."""
    rule = "DELTA-CKPT-027"
    try:
        text = data.decode("utf-8")
        raw = json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_RawNumber)
        obj = json.loads(text)
    except _DuplicateKey as exc:
        raise InvalidTable(f"_last_checkpoint has duplicate key {exc.args[0]!r}", path=LAST_CHECKPOINT_PATH,
                           rule="DELTA-CKPT-030") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidTable(f"_last_checkpoint is not valid JSON: {exc}", path=LAST_CHECKPOINT_PATH,
                           rule=rule) from None
    except RecursionError:
        raise InvalidTable("_last_checkpoint nests JSON deeper than its schema can", path=LAST_CHECKPOINT_PATH,
                           rule=rule) from None
    if not isinstance(obj, dict):
        raise InvalidTable("_last_checkpoint is not a JSON object", path=LAST_CHECKPOINT_PATH, rule=rule)
    for key, required in ((LC_VERSION, True), (LC_SIZE, True), (LC_PARTS, False), (LC_SIZE_IN_BYTES, False),
                          (LC_NUM_OF_ADD_FILES, False)):
        v = obj.get(key)
        if v is None and not required:
            continue
        if not isinstance(v, int) or isinstance(v, bool) or v < 0 or v > 2**63 - 1:
            raise InvalidTable(f"_last_checkpoint field {key!r} must be a non-negative integer, got {v!r}",
                               path=LAST_CHECKPOINT_PATH, rule=rule)
    checksum = obj.get(LC_CHECKSUM)
    if checksum is not None:
        if not isinstance(checksum, str) or checksum.lower() != last_checkpoint_checksum(raw):
            raise InvalidTable("_last_checkpoint checksum does not match its content",
                               path=LAST_CHECKPOINT_PATH, rule="DELTA-CKPT-029")
    return obj


def read_last_checkpoint(storage: Storage) -> dict | None:
    """The ``_last_checkpoint`` hint, or None when missing or corrupt (a bad hint is ignored)."""
    try:
        data = storage.read(LAST_CHECKPOINT_PATH)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None
    try:
        return parse_last_checkpoint(data)
    except InvalidTable:
        return None


def write_last_checkpoint(storage: Storage, info: dict) -> None:
    """Write ``_last_checkpoint`` atomically, with its checksum."""
    body = {k: v for k, v in info.items() if k != LC_CHECKSUM and v is not None}
    body[LC_CHECKSUM] = last_checkpoint_checksum(body)
    storage.write_atomic(LAST_CHECKPOINT_PATH, json.dumps(body, separators=(",", ":")).encode("utf-8"))


# --- log segments ------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True)
class LogSegment:
    """The files that make one snapshot: a checkpoint (or none) plus the commits after it.

    ``version_commit`` is the JSON commit at ``version`` when it exists, even if the checkpoint
    covers that version, because commitInfo lives only there (DELTA-REPLAY-005).
    """

    version: int
    checkpoint: CheckpointInstance | None
    commits: list[tuple[int, FileInfo]]
    version_commit: FileInfo | None = None
    listing: LogListing | None = None


def _hint_matches(hint: dict | None, ckpt: CheckpointInstance) -> bool:
    if not hint or hint.get(LC_VERSION) != ckpt.version:
        return False
    parts = hint.get(LC_PARTS)
    if ckpt.kind == CKPT_MULTIPART:
        return parts == ckpt.num_parts
    return parts is None


# Among several complete checkpoints of one version any may be used (DELTA-CKPT-020); prefer
# single-file ones, which are written atomically.
_KIND_PREFERENCE = {CKPT_CLASSIC: 0, CKPT_V2: 1, CKPT_MULTIPART: 2}


def choose_checkpoint(listing: LogListing, version: int, hint: dict | None = None) -> CheckpointInstance | None:
    """The newest complete checkpoint at or below ``version`` (DELTA-CKPT-002/003/014)."""
    best: CheckpointInstance | None = None
    for ckpt in listing.checkpoints:
        if not ckpt.complete or ckpt.version > version:
            continue
        if best is None or ckpt.version > best.version:
            best = ckpt
        elif ckpt.version == best.version:
            rank_new = (not _hint_matches(hint, ckpt), _KIND_PREFERENCE[ckpt.kind])
            rank_old = (not _hint_matches(hint, best), _KIND_PREFERENCE[best.kind])
            if rank_new < rank_old:
                best = ckpt
    return best


def build_segment(storage: Storage, version: int | None = None, *, listing: LogListing | None = None,
                  exclude_checkpoints: frozenset | set = frozenset()) -> LogSegment:
    """Choose the checkpoint and commits for ``version`` (latest when None); InvalidTable on gaps."""
    listing = listing or list_log(storage)
    where = storage.uri(LOG_DIR)
    complete = [c for c in listing.checkpoints if c.complete and (c.version, c.kind, c.uuid, c.num_parts)
                not in exclude_checkpoints]
    if not listing.commits and not complete:
        raise InvalidTable("no Delta log: _delta_log holds no commit and no complete checkpoint", path=where,
                           hint="is this the root of a Delta table?")
    latest = max(list(listing.commits) + [c.version for c in complete])
    if version is None:
        version = latest
    elif version < 0:
        raise InvalidTable(f"cannot read version {version}: versions start at 0", path=where)
    elif version > latest:
        raise InvalidTable(f"version {version} does not exist; the latest version is {latest}", path=where,
                           version=version)
    hint = read_last_checkpoint(storage) if listing.last_checkpoint is not None else None
    usable = LogListing(checkpoints=complete)
    ckpt = choose_checkpoint(usable, version, hint)
    start = 0 if ckpt is None else ckpt.version + 1
    if ckpt is None and 0 not in listing.commits:
        earliest = min(listing.commits) if listing.commits else None
        raise InvalidTable(f"cannot reconstruct version {version}: commit 0 is missing and no checkpoint at or "
                           f"below version {version} exists (earliest commit: {earliest})", path=where,
                           version=version, rule="DELTA-LOG-001")
    commits: list[tuple[int, FileInfo]] = []
    for v in range(start, version + 1):
        info = listing.commits.get(v)
        if info is None:
            raise InvalidTable(f"commit {v} is missing: versions {start}..{version} must all be present to "
                               f"reconstruct version {version}", path=where, version=v, rule="DELTA-LOG-001")
        commits.append((v, info))
    return LogSegment(version=version, checkpoint=ckpt, commits=commits,
                      version_commit=listing.commits.get(version), listing=listing)

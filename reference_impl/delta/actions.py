"""Actions: the wire shapes of every Delta log action and their parsing / serialization.

One place turns a JSON (or checkpoint-row) dict into a frozen model object and back. Wire keys
are spelled once, as the spec spells them, in the constants below. Parsing is strict about
required fields and types (``InvalidTable`` naming the action, the field and, when known, the
version), and tolerant of everything the spec says to tolerate: unknown fields are dropped,
unknown action types become ``UnknownAction`` (DELTA-ACTION-027).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Union

from reference_impl.errors import InvalidTable, LakeconfError

# --- action keys -------------------------------------------------------------------------
PROTOCOL = "protocol"
METADATA = "metaData"
ADD = "add"
REMOVE = "remove"
CDC = "cdc"
TXN = "txn"
COMMIT_INFO = "commitInfo"
DOMAIN_METADATA = "domainMetadata"
CHECKPOINT_METADATA = "checkpointMetadata"
SIDECAR = "sidecar"
KNOWN_ACTIONS = (PROTOCOL, METADATA, ADD, REMOVE, CDC, TXN, COMMIT_INFO, DOMAIN_METADATA,
                 CHECKPOINT_METADATA, SIDECAR)

# --- field keys --------------------------------------------------------------------------
MIN_READER_VERSION = "minReaderVersion"
MIN_WRITER_VERSION = "minWriterVersion"
READER_FEATURES = "readerFeatures"
WRITER_FEATURES = "writerFeatures"

ID = "id"
NAME = "name"
DESCRIPTION = "description"
FORMAT = "format"
PROVIDER = "provider"
OPTIONS = "options"
SCHEMA_STRING = "schemaString"
PARTITION_COLUMNS = "partitionColumns"
CONFIGURATION = "configuration"
CREATED_TIME = "createdTime"

PATH = "path"
PARTITION_VALUES = "partitionValues"
SIZE = "size"
MODIFICATION_TIME = "modificationTime"
DATA_CHANGE = "dataChange"
STATS = "stats"
TAGS = "tags"
DELETION_VECTOR = "deletionVector"
BASE_ROW_ID = "baseRowId"
DEFAULT_ROW_COMMIT_VERSION = "defaultRowCommitVersion"
CLUSTERING_PROVIDER = "clusteringProvider"
STATS_PARSED = "stats_parsed"
PARTITION_VALUES_PARSED = "partitionValues_parsed"
DELETION_TIMESTAMP = "deletionTimestamp"
EXTENDED_FILE_METADATA = "extendedFileMetadata"

APP_ID = "appId"
VERSION = "version"
LAST_UPDATED = "lastUpdated"
IN_COMMIT_TIMESTAMP = "inCommitTimestamp"

DOMAIN = "domain"
REMOVED = "removed"
SIZE_IN_BYTES = "sizeInBytes"

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


# --- the model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Protocol:
    """The protocol action: versions and, at (3, 7), the table-feature lists."""

    min_reader_version: int
    min_writer_version: int
    reader_features: frozenset[str] | None = None
    writer_features: frozenset[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Format:
    """The encoding of data files (always parquet for tables the spec lets writers create)."""

    provider: str = "parquet"
    options: Mapping[str, str] = field(default_factory=dict)


@functools.lru_cache(maxsize=256)
def _parse_schema_cached(schema_string: str):
    from reference_impl.delta.schema import parse_schema

    return parse_schema(schema_string)


@dataclass(frozen=True, slots=True, kw_only=True)
class Metadata:
    """The metaData action; ``schema`` parses ``schema_string`` once per distinct string."""

    id: str
    name: str | None = None
    description: str | None = None
    format: Format = field(default_factory=Format)
    schema_string: str
    partition_columns: tuple[str, ...] = ()
    configuration: Mapping[str, str] = field(default_factory=dict)
    created_time: int | None = None

    @property
    def schema(self):
        """The table schema as a ``schema.StructType``."""
        return _parse_schema_cached(self.schema_string)


class _LogicalFile:
    """What add and remove share: a logical file is keyed by (path, dvId), not by path alone."""

    __slots__ = ()

    @property
    def dv_id(self) -> str | None:
        """``deletionVector.uniqueId`` or None."""
        dv = self.deletion_vector
        return None if dv is None else dv.unique_id

    @property
    def key(self) -> tuple[str, str | None]:
        """The logical-file primary key (path, dvId) (DELTA-ACTION-005)."""
        return (self.path, self.dv_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class AddFile(_LogicalFile):
    """The add action: one logical file (data file + optional deletion vector)."""

    path: str
    partition_values: Mapping[str, str | None]
    size: int
    modification_time: int
    data_change: bool
    stats: str | None = None
    tags: Mapping[str, str | None] | None = None
    deletion_vector: Any = None  # deletion_vector.DeletionVectorDescriptor
    base_row_id: int | None = None
    default_row_commit_version: int | None = None
    clustering_provider: str | None = None
    stats_parsed: Mapping[str, Any] | None = None



@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveFile(_LogicalFile):
    """The remove action: a tombstone for one logical file."""

    path: str
    deletion_timestamp: int | None = None
    data_change: bool
    extended_file_metadata: bool | None = None
    partition_values: Mapping[str, str | None] | None = None
    size: int | None = None
    stats: str | None = None
    tags: Mapping[str, str | None] | None = None
    deletion_vector: Any = None
    base_row_id: int | None = None
    default_row_commit_version: int | None = None



@dataclass(frozen=True, slots=True, kw_only=True)
class AddCDCFile:
    """The cdc action: a change-data file of this commit."""

    path: str
    partition_values: Mapping[str, str | None] = field(default_factory=dict)
    size: int
    data_change: bool = False
    tags: Mapping[str, str | None] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Txn:
    """The txn action: an application's transaction version."""

    app_id: str
    version: int
    last_updated: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitInfo:
    """The commitInfo action: free-form provenance, kept as the raw JSON object."""

    info: Mapping[str, Any]

    @property
    def in_commit_timestamp(self) -> int | None:
        """The in-commit timestamp (ms) when present."""
        value = self.info.get(IN_COMMIT_TIMESTAMP)
        return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class DomainMetadata:
    """The domainMetadata action."""

    domain: str
    configuration: str
    removed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointMetadata:
    """The checkpointMetadata action (V2-spec checkpoints only)."""

    version: int
    tags: Mapping[str, str | None] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Sidecar:
    """The sidecar action (V2-spec checkpoints only): a parquet file of file actions."""

    path: str
    size_in_bytes: int
    modification_time: int
    tags: Mapping[str, str | None] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownAction:
    """An action type this implementation does not know; kept, and ignored by replay."""

    key: str
    value: Any


Action = Union[Protocol, Metadata, AddFile, RemoveFile, AddCDCFile, Txn, CommitInfo, DomainMetadata,
               CheckpointMetadata, Sidecar, UnknownAction]


# --- parsing -----------------------------------------------------------------------------


class _Ctx:
    """Where we are, for error messages (kept tiny: one is made per parsed action)."""

    __slots__ = ("action", "version")

    def __init__(self, action: str, version: int | None) -> None:
        self.action = action
        self.version = version

    def fail(self, message: str, rule: str | None = None) -> InvalidTable:
        return InvalidTable(f"{self.action} action: {message}", version=self.version, rule=rule)


def _missing(ctx: _Ctx, key: str, rule: str | None) -> InvalidTable:
    return ctx.fail(f"required field {key!r} is missing", rule)


def _str(d: Mapping, key: str, ctx: _Ctx, *, required: bool, rule: str | None = None) -> str | None:
    v = d.get(key)
    if v is None:
        if required:
            raise _missing(ctx, key, rule)
        return None
    if not isinstance(v, str):
        raise ctx.fail(f"field {key!r} must be a string, got {type(v).__name__}", rule)
    return v


def _int(d: Mapping, key: str, ctx: _Ctx, *, required: bool, rule: str | None = None,
         lo: int = LONG_MIN, hi: int = LONG_MAX) -> int | None:
    v = d.get(key)
    if v is None:
        if required:
            raise _missing(ctx, key, rule)
        return None
    if not isinstance(v, int) or isinstance(v, bool):
        raise ctx.fail(f"field {key!r} must be an integer, got {type(v).__name__}", rule)
    if v < lo or v > hi:
        raise ctx.fail(f"field {key!r} = {v} is out of range [{lo}, {hi}]", rule)
    return v


def _bool(d: Mapping, key: str, ctx: _Ctx, *, required: bool, rule: str | None = None) -> bool | None:
    v = d.get(key)
    if v is None:
        if required:
            raise _missing(ctx, key, rule)
        return None
    if not isinstance(v, bool):
        raise ctx.fail(f"field {key!r} must be a boolean, got {type(v).__name__}", rule)
    return v


def _str_map(d: Mapping, key: str, ctx: _Ctx, *, required: bool, rule: str | None = None,
             nullable_values: bool = True) -> dict[str, str | None] | None:
    v = d.get(key)
    if v is None:
        if required:
            raise _missing(ctx, key, rule)
        return None
    if isinstance(v, list):  # checkpoint maps arrive from Arrow as lists of (key, value) pairs
        try:
            v = dict(v)
        except (TypeError, ValueError):
            raise ctx.fail(f"field {key!r} must be a map of strings", rule) from None
    if not isinstance(v, dict):
        raise ctx.fail(f"field {key!r} must be a map of strings, got {type(v).__name__}", rule)
    for k, val in v.items():
        if not isinstance(k, str) or not (isinstance(val, str) or (val is None and nullable_values)):
            raise ctx.fail(f"field {key!r} must map strings to strings; entry {k!r}: {val!r}", rule)
    return v


def _str_list(d: Mapping, key: str, ctx: _Ctx, *, required: bool, rule: str | None = None) -> list[str] | None:
    v = d.get(key)
    if v is None:
        if required:
            raise _missing(ctx, key, rule)
        return None
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
        raise ctx.fail(f"field {key!r} must be an array of strings", rule)
    return list(v)


_DV_FROM_WIRE = None


def _deletion_vector(d: Mapping, ctx: _Ctx):
    v = d.get(DELETION_VECTOR)
    if v is None:
        return None
    if not isinstance(v, dict):
        raise ctx.fail(f"field {DELETION_VECTOR!r} must be an object or null", "DELTA-ACTION-022")
    if not v:
        raise ctx.fail(f"field {DELETION_VECTOR!r} is an empty object; absent or null means no DV",
                       "DELTA-ACTION-022")
    global _DV_FROM_WIRE
    if _DV_FROM_WIRE is None:
        from reference_impl.delta.deletion_vector import DeletionVectorDescriptor

        _DV_FROM_WIRE = DeletionVectorDescriptor.from_wire
    try:
        return _DV_FROM_WIRE(v)
    except LakeconfError as exc:
        raise ctx.fail(f"bad deletionVector: {exc.message}", exc.rule or "DELTA-ACTION-022") from None
    except (KeyError, TypeError, ValueError) as exc:
        raise ctx.fail(f"bad deletionVector: {exc}", "DELTA-ACTION-022") from None


def _parse_protocol(d: Mapping, ctx: _Ctx) -> Protocol:
    rule = "DELTA-ACTION-025"
    rf = _str_list(d, READER_FEATURES, ctx, required=False, rule=rule)
    wf = _str_list(d, WRITER_FEATURES, ctx, required=False, rule=rule)
    return Protocol(
        min_reader_version=_int(d, MIN_READER_VERSION, ctx, required=True, rule=rule, lo=INT_MIN, hi=INT_MAX),
        min_writer_version=_int(d, MIN_WRITER_VERSION, ctx, required=True, rule=rule, lo=INT_MIN, hi=INT_MAX),
        reader_features=None if rf is None else frozenset(rf),
        writer_features=None if wf is None else frozenset(wf),
    )


def _parse_metadata(d: Mapping, ctx: _Ctx) -> Metadata:
    rule = "DELTA-ACTION-004"
    fmt = d.get(FORMAT)
    if fmt is None:
        raise _missing(ctx, FORMAT, rule)
    if not isinstance(fmt, dict):
        raise ctx.fail(f"field {FORMAT!r} must be an object", rule)
    fctx = _Ctx("metaData.format", ctx.version)
    provider = _str(fmt, PROVIDER, fctx, required=False, rule=rule) or "parquet"
    options = _str_map(fmt, OPTIONS, fctx, required=False, rule=rule) or {}
    return Metadata(
        id=_str(d, ID, ctx, required=True, rule=rule),
        name=_str(d, NAME, ctx, required=False, rule=rule),
        description=_str(d, DESCRIPTION, ctx, required=False, rule=rule),
        format=Format(provider=provider, options=options),
        schema_string=_str(d, SCHEMA_STRING, ctx, required=True, rule=rule),
        partition_columns=tuple(_str_list(d, PARTITION_COLUMNS, ctx, required=True, rule=rule)),
        configuration=_str_map(d, CONFIGURATION, ctx, required=True, rule=rule),
        created_time=_int(d, CREATED_TIME, ctx, required=False, rule=rule),
    )


_ADD_SETTERS = [AddFile.__dict__[n].__set__ for n in (
    "path", "partition_values", "size", "modification_time", "data_change", "stats", "tags", "deletion_vector",
    "base_row_id", "default_row_commit_version", "clustering_provider", "stats_parsed")]
_NEW = object.__new__


def new_add(path, partition_values, size, modification_time, data_change, stats=None, tags=None,
            deletion_vector=None, base_row_id=None, default_row_commit_version=None, clustering_provider=None,
            stats_parsed=None) -> AddFile:
    """Build an AddFile from values already checked, skipping the frozen-dataclass __init__ cost."""
    o = _NEW(AddFile)
    s = _ADD_SETTERS
    s[0](o, path), s[1](o, partition_values), s[2](o, size), s[3](o, modification_time), s[4](o, data_change)
    s[5](o, stats), s[6](o, tags), s[7](o, deletion_vector), s[8](o, base_row_id)
    s[9](o, default_row_commit_version), s[10](o, clustering_provider), s[11](o, stats_parsed)
    return o


_ADD_FAST_KEYS = frozenset({PATH, PARTITION_VALUES, SIZE, MODIFICATION_TIME, DATA_CHANGE, STATS})


def _parse_add(d: Mapping, ctx: _Ctx) -> AddFile:
    # Fast path for the common shape (a log holds mostly such adds); anything else is checked
    # field by field below.
    if d.keys() <= _ADD_FAST_KEYS:
        path, pv, size, mt = d.get(PATH), d.get(PARTITION_VALUES), d.get(SIZE), d.get(MODIFICATION_TIME)
        dc, stats = d.get(DATA_CHANGE), d.get(STATS)
        if (type(path) is str and type(pv) is dict and type(size) is int and type(mt) is int
                and type(dc) is bool and (stats is None or type(stats) is str)
                and 0 <= size <= LONG_MAX and LONG_MIN <= mt <= LONG_MAX):
            for k, v in pv.items():
                if type(k) is not str or (v is not None and type(v) is not str):
                    break
            else:
                return new_add(path, pv, size, mt, dc, stats)
    return _parse_add_checked(d, ctx)


def _parse_add_checked(d: Mapping, ctx: _Ctx) -> AddFile:
    rule = "DELTA-ACTION-016"
    stats_parsed = d.get(STATS_PARSED)
    return AddFile(
        path=_str(d, PATH, ctx, required=True, rule=rule),
        partition_values=_str_map(d, PARTITION_VALUES, ctx, required=True, rule=rule),
        size=_int(d, SIZE, ctx, required=True, rule=rule, lo=0),
        modification_time=_int(d, MODIFICATION_TIME, ctx, required=True, rule=rule),
        data_change=_bool(d, DATA_CHANGE, ctx, required=True, rule=rule),
        stats=_str(d, STATS, ctx, required=False, rule=rule),
        tags=_str_map(d, TAGS, ctx, required=False, rule=rule),
        deletion_vector=_deletion_vector(d, ctx),
        base_row_id=_int(d, BASE_ROW_ID, ctx, required=False, rule=rule),
        default_row_commit_version=_int(d, DEFAULT_ROW_COMMIT_VERSION, ctx, required=False, rule=rule, lo=0),
        clustering_provider=_str(d, CLUSTERING_PROVIDER, ctx, required=False, rule=rule),
        stats_parsed=stats_parsed if isinstance(stats_parsed, dict) else None,
    )


def _parse_remove(d: Mapping, ctx: _Ctx) -> RemoveFile:
    rule = "DELTA-ACTION-020"
    ext = _bool(d, EXTENDED_FILE_METADATA, ctx, required=False, rule=rule)
    pv = _str_map(d, PARTITION_VALUES, ctx, required=False, rule=rule)
    size = _int(d, SIZE, ctx, required=False, rule=rule, lo=0)
    return RemoveFile(
        path=_str(d, PATH, ctx, required=True, rule=rule),
        deletion_timestamp=_int(d, DELETION_TIMESTAMP, ctx, required=False, rule=rule),
        data_change=_bool(d, DATA_CHANGE, ctx, required=True, rule=rule),
        extended_file_metadata=ext,
        partition_values=pv,
        size=size,
        stats=_str(d, STATS, ctx, required=False, rule=rule),
        tags=_str_map(d, TAGS, ctx, required=False, rule=rule),
        deletion_vector=_deletion_vector(d, ctx),
        base_row_id=_int(d, BASE_ROW_ID, ctx, required=False, rule=rule),
        default_row_commit_version=_int(d, DEFAULT_ROW_COMMIT_VERSION, ctx, required=False, rule=rule, lo=0),
    )


def _parse_cdc(d: Mapping, ctx: _Ctx) -> AddCDCFile:
    return AddCDCFile(
        path=_str(d, PATH, ctx, required=True),
        partition_values=_str_map(d, PARTITION_VALUES, ctx, required=False) or {},
        size=_int(d, SIZE, ctx, required=True, lo=0),
        data_change=bool(_bool(d, DATA_CHANGE, ctx, required=False)),
        tags=_str_map(d, TAGS, ctx, required=False),
    )


def _parse_txn(d: Mapping, ctx: _Ctx) -> Txn:
    rule = "DELTA-ACTION-023"
    return Txn(
        app_id=_str(d, APP_ID, ctx, required=True, rule=rule),
        version=_int(d, VERSION, ctx, required=True, rule=rule),
        last_updated=_int(d, LAST_UPDATED, ctx, required=False, rule=rule),
    )


def _parse_commit_info(d: Mapping, ctx: _Ctx) -> CommitInfo:
    if IN_COMMIT_TIMESTAMP in d and d[IN_COMMIT_TIMESTAMP] is not None:
        _int(d, IN_COMMIT_TIMESTAMP, ctx, required=True, rule="DELTA-ICT-003")
    return CommitInfo(info=d)


def _parse_domain(d: Mapping, ctx: _Ctx) -> DomainMetadata:
    rule = "DELTA-DOMAIN-002"
    return DomainMetadata(
        domain=_str(d, DOMAIN, ctx, required=True, rule=rule),
        configuration=_str(d, CONFIGURATION, ctx, required=True, rule=rule),
        removed=_bool(d, REMOVED, ctx, required=True, rule=rule),
    )


def _parse_checkpoint_metadata(d: Mapping, ctx: _Ctx) -> CheckpointMetadata:
    rule = "DELTA-CKPT-037"
    return CheckpointMetadata(
        version=_int(d, VERSION, ctx, required=True, rule=rule, lo=0),
        tags=_str_map(d, TAGS, ctx, required=False, rule=rule),
    )


def _parse_sidecar(d: Mapping, ctx: _Ctx) -> Sidecar:
    rule = "DELTA-CKPT-036"
    return Sidecar(
        path=_str(d, PATH, ctx, required=True, rule=rule),
        size_in_bytes=_int(d, SIZE_IN_BYTES, ctx, required=True, rule=rule, lo=0),
        modification_time=_int(d, MODIFICATION_TIME, ctx, required=True, rule=rule),
        tags=_str_map(d, TAGS, ctx, required=False, rule=rule),
    )


_PARSERS = {
    ADD: _parse_add,
    REMOVE: _parse_remove,
    PROTOCOL: _parse_protocol,
    METADATA: _parse_metadata,
    TXN: _parse_txn,
    COMMIT_INFO: _parse_commit_info,
    DOMAIN_METADATA: _parse_domain,
    CDC: _parse_cdc,
    CHECKPOINT_METADATA: _parse_checkpoint_metadata,
    SIDECAR: _parse_sidecar,
}


def parse_action(obj: dict, *, version: int | None = None) -> Action:
    """One wire action ``{"<type>": {...}}`` -> model; InvalidTable on bad shape."""
    if type(obj) is dict and len(obj) == 1:  # the usual line: one key, a known action
        for k, v in obj.items():
            parser = _PARSERS.get(k)
            if parser is not None and type(v) is dict:
                return parser(v, _Ctx(k, version))
    if not isinstance(obj, dict):
        raise InvalidTable(f"an action must be a JSON object, got {type(obj).__name__}", version=version,
                           rule="DELTA-LOG-005")
    found = None
    unknown = None
    for k, v in obj.items():
        if v is None:
            continue  # a null-valued key is an absent action (checkpoint rows look like this)
        if k in _PARSERS:
            if found is not None:
                raise InvalidTable(f"one line holds two actions ({found!r} and {k!r})", version=version,
                                   rule="DELTA-LOG-005")
            found = k
        elif unknown is None:
            unknown = k
    if found is None:
        if unknown is None:
            raise InvalidTable("empty action object", version=version, rule="DELTA-LOG-005")
        return UnknownAction(key=unknown, value=obj[unknown])
    body = obj[found]
    if not isinstance(body, dict):
        raise InvalidTable(f"{found} action must be a JSON object, got {type(body).__name__}", version=version)
    return _PARSERS[found](body, _Ctx(found, version))


def parse_commit(data: bytes, *, version: int | None = None, path: str | None = None) -> list[Action]:
    """A commit file (NDJSON, one action per line) -> actions; InvalidTable names the line."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidTable(f"commit is not valid UTF-8 ({exc.reason} at byte {exc.start})", path=path,
                           version=version, rule="DELTA-LOG-005") from None
    numbered = [(i, line) for i, line in enumerate(text.split("\n"), start=1) if line and not line.isspace()]
    if not numbered:
        # A commit is an atomic set of actions: a file without one is what a torn write leaves
        # (created, never filled), and reading it as "no change" would hide the lost commit.
        raise InvalidTable("commit file holds no action (an empty file is what an interrupted write leaves)",
                           path=path, version=version, rule="DELTA-LOG-006")
    # One decoder call for the whole file is much cheaper than one per line. Joining lines
    # with commas cannot make a multi-line (pretty-printed) object valid, and the count
    # check catches a line holding several values; any doubt falls back to line by line.
    try:
        objs = _DECODE("[" + ",".join(line for _, line in numbered) + "]")
    except (ValueError, RecursionError):
        objs = None
    if objs is not None and len(objs) != len(numbered):
        objs = None
    if objs is None:
        objs = []
        for lineno, line in numbered:
            try:
                objs.append(_DECODE(line))
            except ValueError as exc:
                raise InvalidTable(f"line {lineno} is not a complete JSON object: {exc.msg} (column {exc.colno})",
                                   path=path, version=version, rule="DELTA-LOG-005") from None
            except RecursionError:  # the decoder recurses per nesting level; no action nests this deep
                raise InvalidTable(f"line {lineno} nests JSON deeper than any action can", path=path,
                                   version=version, rule="DELTA-LOG-005") from None
    out: list[Action] = []
    for (lineno, _), obj in zip(numbered, objs):
        try:
            out.append(parse_action(obj, version=version))
        except InvalidTable as exc:
            raise InvalidTable(f"line {lineno}: {exc.message}", path=path, version=version,
                               rule=exc.rule) from None
    return out


_DECODE = json.JSONDecoder().decode


# --- serialization -----------------------------------------------------------------------


def _put(d: dict, key: str, value: Any) -> None:
    if value is not None:
        d[key] = value


def _dv_wire(dv: Any) -> dict | None:
    return None if dv is None else dv.to_wire()


def action_to_wire(action: Action) -> dict:
    """Model -> ``{"<type>": {...}}`` with the spec's key spelling; None fields are omitted."""
    if isinstance(action, AddFile):
        d = {PATH: action.path, PARTITION_VALUES: dict(action.partition_values), SIZE: action.size,
             MODIFICATION_TIME: action.modification_time, DATA_CHANGE: action.data_change}
        _put(d, STATS, action.stats)
        _put(d, TAGS, None if action.tags is None else dict(action.tags))
        _put(d, DELETION_VECTOR, _dv_wire(action.deletion_vector))
        _put(d, BASE_ROW_ID, action.base_row_id)
        _put(d, DEFAULT_ROW_COMMIT_VERSION, action.default_row_commit_version)
        _put(d, CLUSTERING_PROVIDER, action.clustering_provider)
        return {ADD: d}
    if isinstance(action, RemoveFile):
        d = {PATH: action.path}
        _put(d, DELETION_TIMESTAMP, action.deletion_timestamp)
        d[DATA_CHANGE] = action.data_change
        _put(d, EXTENDED_FILE_METADATA, action.extended_file_metadata)
        _put(d, PARTITION_VALUES, None if action.partition_values is None else dict(action.partition_values))
        _put(d, SIZE, action.size)
        _put(d, STATS, action.stats)
        _put(d, TAGS, None if action.tags is None else dict(action.tags))
        _put(d, DELETION_VECTOR, _dv_wire(action.deletion_vector))
        _put(d, BASE_ROW_ID, action.base_row_id)
        _put(d, DEFAULT_ROW_COMMIT_VERSION, action.default_row_commit_version)
        return {REMOVE: d}
    if isinstance(action, Protocol):
        d = {MIN_READER_VERSION: action.min_reader_version, MIN_WRITER_VERSION: action.min_writer_version}
        if action.reader_features is not None:
            d[READER_FEATURES] = sorted(action.reader_features)
        if action.writer_features is not None:
            d[WRITER_FEATURES] = sorted(action.writer_features)
        return {PROTOCOL: d}
    if isinstance(action, Metadata):
        d = {ID: action.id}
        _put(d, NAME, action.name)
        _put(d, DESCRIPTION, action.description)
        d[FORMAT] = {PROVIDER: action.format.provider, OPTIONS: dict(action.format.options)}
        d[SCHEMA_STRING] = action.schema_string
        d[PARTITION_COLUMNS] = list(action.partition_columns)
        d[CONFIGURATION] = dict(action.configuration)
        _put(d, CREATED_TIME, action.created_time)
        return {METADATA: d}
    if isinstance(action, Txn):
        d = {APP_ID: action.app_id, VERSION: action.version}
        _put(d, LAST_UPDATED, action.last_updated)
        return {TXN: d}
    if isinstance(action, CommitInfo):
        return {COMMIT_INFO: dict(action.info)}
    if isinstance(action, DomainMetadata):
        return {DOMAIN_METADATA: {DOMAIN: action.domain, CONFIGURATION: action.configuration,
                                  REMOVED: action.removed}}
    if isinstance(action, AddCDCFile):
        d = {PATH: action.path, PARTITION_VALUES: dict(action.partition_values), SIZE: action.size,
             DATA_CHANGE: action.data_change}
        _put(d, TAGS, None if action.tags is None else dict(action.tags))
        return {CDC: d}
    if isinstance(action, CheckpointMetadata):
        d = {VERSION: action.version}
        _put(d, TAGS, None if action.tags is None else dict(action.tags))
        return {CHECKPOINT_METADATA: d}
    if isinstance(action, Sidecar):
        d = {PATH: action.path, SIZE_IN_BYTES: action.size_in_bytes, MODIFICATION_TIME: action.modification_time}
        _put(d, TAGS, None if action.tags is None else dict(action.tags))
        return {SIDECAR: d}
    if isinstance(action, UnknownAction):
        return {action.key: action.value}
    raise TypeError(f"not an action: {action!r}")


def serialize_commit(actions: Iterable[Action]) -> bytes:
    """Actions -> NDJSON bytes: one compact JSON object per line, trailing newline."""
    dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    lines = [dumps(action_to_wire(a)) for a in actions]
    return ("\n".join(lines) + "\n").encode("utf-8") if lines else b""

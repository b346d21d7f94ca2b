"""Validation context: the raw table (log files, checkpoints, data-file footers) read tolerantly.

Nothing here raises for a table that breaks the spec: every file is read as far as it can be, and
what cannot be read is recorded (``Commit.lines[i].error``) for the checks to report. The replay
below is deliberately lenient (unknown or malformed actions are skipped) so that one broken action
does not hide every other violation of the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterator
from urllib.parse import unquote, urlparse

from reference_impl.common import jsontext
from reference_impl.common.arrow_rows import RowReader
from reference_impl.errors import InvalidTable, LakeconfError
from reference_impl.storage import FileInfo, LocalStorage, Storage
from reference_impl.parquet_io import open_parquet, read_parquet

LOG_DIR = "_delta_log"
SIDECAR_DIR = "_delta_log/_sidecars"
STAGED_DIR = "_delta_log/_staged_commits"
LAST_CHECKPOINT = "_delta_log/_last_checkpoint"
TABLE_CACHE = 8

# Wire keys of the actions, spelled once.
ADD, REMOVE, CDC, METADATA, PROTOCOL, TXN, COMMIT_INFO = "add", "remove", "cdc", "metaData", "protocol", "txn", "commitInfo"
DOMAIN, SIDECAR, CKPT_METADATA = "domainMetadata", "sidecar", "checkpointMetadata"
FILE_ACTIONS = (ADD, REMOVE)
# Private keys the replay adds to live add bodies (never wire keys: they start with NUL).
VERSION_KEY, WHERE_KEY = "\x00version", "\x00where"
KNOWN_ACTIONS = (ADD, REMOVE, CDC, METADATA, PROTOCOL, TXN, COMMIT_INFO, DOMAIN, SIDECAR, CKPT_METADATA)

COMMIT_RE = re.compile(r"^(\d{20})\.json$")
CRC_RE = re.compile(r"^(\d{20})\.crc$")
COMPACTION_RE = re.compile(r"^(\d{20})\.(\d{20})\.compacted\.json$")
CLASSIC_CKPT_RE = re.compile(r"^(\d{20})\.checkpoint\.parquet$")
MULTIPART_CKPT_RE = re.compile(r"^(\d{20})\.checkpoint\.(\d{10})\.(\d{10})\.parquet$")
UUID_CKPT_RE = re.compile(
    r"^(\d{20})\.checkpoint\.([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.(json|parquet)$"
)
STAGED_RE = re.compile(r"^(\d{20})\.[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\.json$")


@dataclass(slots=True)
class Line:
    """One line of a commit (or JSON checkpoint) file: parsed object or the parse error."""

    lineno: int
    obj: Any
    error: str | None


@dataclass(slots=True)
class Action:
    """One action found somewhere: key (``add``...), body, and where it was found."""

    key: str
    body: Any
    where: str  # "_delta_log/...json:3"
    version: int | None = None


@dataclass(slots=True)
class Commit:
    """A commit file: its version, listing info, raw lines and the actions on them."""

    version: int
    info: FileInfo
    lines: list[Line]
    actions: list[Action]

    def of(self, key: str) -> list[Action]:
        """Actions of one kind in file order."""
        return [a for a in self.actions if a.key == key]


@dataclass(slots=True)
class Checkpoint:
    """One checkpoint instance (all parts), with its rows read as dicts (None if unreadable)."""

    version: int
    kind: str  # classic | multipart | v2-json | v2-parquet
    files: list[FileInfo]
    num_parts: int = 1
    rows: list[tuple[str, dict]] | None = None  # (where, row)
    columns: dict[str, Any] = field(default_factory=dict)  # action column -> arrow type (first part)
    error: str | None = None
    sidecar_rows: list[tuple[str, dict]] = field(default_factory=list)
    sidecar_columns: dict[str, set[str]] = field(default_factory=dict)
    _actions: dict[bool, list[Action]] = field(default_factory=dict, repr=False)

    @property
    def complete(self) -> bool:
        """Every part present."""
        return len(self.files) == self.num_parts

    def actions(self, include_sidecars: bool = True) -> list[Action]:
        """Non-null action cells of every row (and of the sidecars); built once, never to be mutated."""
        if not self.sidecar_rows:
            include_sidecars = False  # one list serves both
        if include_sidecars not in self._actions:
            out = []
            rows = list(self.rows or []) + (self.sidecar_rows if include_sidecars else [])
            for where, row in rows:
                for key, val in row.items():
                    if val is not None:
                        out.append(Action(key=key, body=val, where=f"{where} {key}", version=self.version))
            self._actions[include_sidecars] = out
        return self._actions[include_sidecars]


@dataclass(slots=True)
class State:
    """Snapshot state after a version (lenient replay)."""

    version: int
    protocol: dict | None
    metadata: dict | None
    live: dict[tuple[str, str | None], dict]
    domains: dict[str, dict]
    txns: dict[str, dict]
    ict: int | None = None
    # where the current protocol/metadata came from (version)
    protocol_version: int | None = None
    metadata_version: int | None = None


def dv_id(dv: Any) -> str | None:
    """uniqueId of a DV descriptor dict (None when absent or unusable)."""
    if not isinstance(dv, dict) or not dv:
        return None
    st, p = dv.get("storageType"), dv.get("pathOrInlineDv")
    if not isinstance(st, str) or not isinstance(p, str):
        return None
    off = dv.get("offset")
    return f"{st}{p}@{off}" if off is not None else f"{st}{p}"


def file_key(body: Any) -> tuple[str, str | None] | None:
    """(path, dvId) key of a file action, None when it has no usable path."""
    if not isinstance(body, dict) or not isinstance(body.get("path"), str):
        return None
    return (body["path"], dv_id(body.get("deletionVector")))


# Arrow maps whose fields the checks read as dicts (the JSON objects of the log)
MAP_FIELDS = ("partitionValues", "configuration", "tags", "options")


def dup_keys_hook(pairs: list[tuple[str, Any]]) -> dict:
    """json object_pairs_hook recording duplicate keys under a private key."""
    out: dict = {}
    dups = []
    for k, v in pairs:
        if k in out:
            dups.append(k)
        out[k] = v
    if dups:
        out["\x00dups"] = dups
    return out


class Context:
    """Everything the checks look at, read once."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.log_files: list[FileInfo] = storage.list(LOG_DIR)
        if not self.log_files and not storage.exists(LOG_DIR):
            raise InvalidTable(f"no {LOG_DIR} directory under {storage.root}: not a Delta table", path=storage.root)
        self.commits: dict[int, Commit] = {}
        self.crcs: dict[int, FileInfo] = {}
        self.compactions: list[tuple[int, int, FileInfo]] = []
        self.checkpoints: list[Checkpoint] = []
        self.other_log_files: list[FileInfo] = []
        self._footers: dict[str, Any] = {}
        self._tables: dict[str, Any] = {}
        self._sizes: dict[str, int] | None = None
        self._rels: dict[str, str | None] = {}
        # one reader for every checkpoint part and sidecar: a checkpoint repeats most rows of the one
        # before it, and those rows become the same objects (checks cache their verdicts by identity)
        self._row_reader = RowReader(MAP_FIELDS)
        self._classify()
        self.states: dict[int, State] = {}
        self.before: dict[int, State] = {}
        self._replay()

    # ---------------------------------------------------------------- listing and parsing
    def _classify(self) -> None:
        parts: dict[tuple[int, int], list[tuple[int, FileInfo]]] = {}
        for f in self.log_files:
            name = f.path.rsplit("/", 1)[-1]
            if name.startswith("."):
                continue  # hidden files (Hadoop .crc checksums, temp files) are not part of the log
            if m := COMMIT_RE.match(name):
                v = int(m.group(1))
                self.commits[v] = self._read_commit(v, f)
            elif m := CRC_RE.match(name):
                self.crcs[int(m.group(1))] = f
            elif m := COMPACTION_RE.match(name):
                self.compactions.append((int(m.group(1)), int(m.group(2)), f))
            elif m := CLASSIC_CKPT_RE.match(name):
                self.checkpoints.append(Checkpoint(version=int(m.group(1)), kind="classic", files=[f]))
            elif m := MULTIPART_CKPT_RE.match(name):
                parts.setdefault((int(m.group(1)), int(m.group(3))), []).append((int(m.group(2)), f))
            elif m := UUID_CKPT_RE.match(name):
                self.checkpoints.append(Checkpoint(version=int(m.group(1)), kind=f"v2-{m.group(3)}", files=[f]))
            else:
                self.other_log_files.append(f)
        for (v, n), fs in parts.items():
            fs.sort(key=lambda t: t[0])
            self.checkpoints.append(Checkpoint(version=v, kind="multipart", files=[f for _, f in fs], num_parts=n))
        self.checkpoints.sort(key=lambda c: (c.version, c.kind))
        for c in self.checkpoints:
            self._read_checkpoint(c)

    def read_lines(self, path: str) -> list[Line]:
        """Parse an NDJSON file line by line, keeping errors."""
        try:
            data = self.storage.read(path)
        except OSError as e:
            return [Line(lineno=0, obj=None, error=f"unreadable: {e}")]
        out = []
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            return [Line(lineno=0, obj=None, error=f"not UTF-8: {e}")]
        for i, raw in enumerate(text.split("\n"), start=1):
            if not raw.strip():
                continue
            try:
                out.append(Line(lineno=i, obj=jsontext.loads(raw), error=None))
            except ValueError as e:
                out.append(Line(lineno=i, obj=None, error=f"not a JSON object: {e}"))
        return out

    def _read_commit(self, version: int, info: FileInfo) -> Commit:
        lines = self.read_lines(info.path)
        actions = []
        for ln in lines:
            if isinstance(ln.obj, dict) and len(ln.obj) == 1:
                (key, body), = ln.obj.items()
                actions.append(Action(key=key, body=body, where=f"{info.path}:{ln.lineno}", version=version))
        return Commit(version=version, info=info, lines=lines, actions=actions)

    def _parquet_source(self, rel: str) -> Any:
        """What pyarrow should open: a local path when possible, else the object's bytes."""
        if isinstance(self.storage, LocalStorage):
            # opening by path, not through an in-memory buffer, sidesteps an interpreter-exit abort
            # seen with pyarrow 19 after reading parquet from Python buffers
            return self.storage.local_path(rel)
        return self.storage.read(rel)

    def _read_parquet_rows(self, path: str) -> tuple[list[dict], dict[str, Any]]:
        table = _read_parquet_source(self._parquet_source(path))
        cols = {f.name: f.type for f in table.schema}
        return self._row_reader.rows(table), cols

    def _read_checkpoint(self, c: Checkpoint) -> None:
        rows: list[tuple[str, dict]] = []
        try:
            for f in c.files:
                if c.kind == "v2-json":
                    for ln in self.read_lines(f.path):
                        if ln.error:
                            raise ValueError(f"line {ln.lineno}: {ln.error}")
                        rows.append((f"{f.path}:{ln.lineno}", ln.obj))
                else:
                    prs, cols = self._read_parquet_rows(f.path)
                    if not c.columns:
                        c.columns = cols
                    rows.extend((f"{f.path} row {i}", r) for i, r in enumerate(prs))
        except Exception as e:  # any unreadable checkpoint is a finding, not a crash
            c.error = f"{type(e).__name__}: {e}"
            return
        c.rows = rows
        for where, row in rows:
            sc = row.get(SIDECAR) if isinstance(row, dict) else None
            if isinstance(sc, dict) and isinstance(sc.get("path"), str):
                rel = self.sidecar_path(sc["path"])
                if rel is None or not self.storage.exists(rel):
                    continue
                try:
                    prs, cols = self._read_parquet_rows(rel)
                except Exception:
                    continue
                c.sidecar_columns[rel] = set(cols)
                c.sidecar_rows.extend((f"{rel} row {i}", r) for i, r in enumerate(prs))

    def sidecar_path(self, path: str) -> str | None:
        """Root-relative location of a sidecar referenced by ``path`` (None if it leaves the root)."""
        p = unquote(path)
        if "/" not in p and ":" not in p:
            return f"{SIDECAR_DIR}/{p}"
        return self.rel(path)

    # ---------------------------------------------------------------- paths and files
    def rel(self, path: str) -> str | None:
        """Root-relative path of a (URI-encoded) action path; None if unusable / outside."""
        if path not in self._rels:  # checkpoints repeat their predecessors' paths
            try:
                urlparse(path)  # refuses malformed URIs (a bad IPv6 authority) that resolve would take
                self._rels[path] = self.storage.resolve(unquote(path))
            except Exception:
                self._rels[path] = None
        return self._rels[path]

    def exists(self, rel: str) -> bool:
        """Whether a root-relative file exists."""
        try:
            return self.storage.exists(rel)
        except Exception:
            return False

    def size(self, rel: str) -> int | None:
        """Length of a file in bytes, None if missing (one listing of the table, not a read per file)."""
        if self._sizes is None:
            try:
                self._sizes = {f.path: f.size for f in self.storage.walk("")}
            except Exception:
                self._sizes = {}
        return self._sizes.get(rel)

    def footer(self, rel: str) -> "Footer | None":
        """Parquet footer of a data file (None if missing or unreadable); no file handle is kept open."""
        if rel not in self._footers:
            try:
                self._footers[rel] = Footer(_read_parquet_footer(self._parquet_source(rel)))
            except LakeconfError:
                raise  # the storage refused the file (a link out of the root): the table is refused
            except Exception:
                self._footers[rel] = None
        return self._footers[rel]

    def table(self, rel: str) -> Any:
        """The whole data file as an Arrow table (None if unreadable)."""
        if rel not in self._tables:
            try:
                tbl = _read_parquet_source(self._parquet_source(rel)) if self.footer(rel) else None
            except LakeconfError:
                raise
            except Exception:
                tbl = None
            if len(self._tables) >= TABLE_CACHE:  # data files can be big: keep only the most recent few
                self._tables.pop(next(iter(self._tables)))
            self._tables[rel] = tbl
        return self._tables[rel]

    # ---------------------------------------------------------------- replay
    @property
    def versions(self) -> list[int]:
        """Commit versions present, ascending."""
        return sorted(self.commits)

    @cached_property
    def latest(self) -> int | None:
        """Newest version with a commit (or a checkpoint when there are no commits)."""
        vs = self.versions + [c.version for c in self.checkpoints]
        return max(vs) if vs else None

    def _base(self) -> State | None:
        vs = self.versions
        if not vs or vs[0] == 0:
            return None
        # log starts after cleanup: use the newest usable checkpoint just below the first commit
        usable = [c for c in self.checkpoints if c.rows is not None and c.complete and c.version >= vs[0] - 1]
        if not usable:
            return None
        c = min(usable, key=lambda c: c.version)
        st = State(version=c.version, protocol=None, metadata=None, live={}, domains={}, txns={})
        for a in c.actions():
            apply_action(st, a, c.version)
        return st

    def _replay(self) -> None:
        base = self._base()
        st = base or State(version=-1, protocol=None, metadata=None, live={}, domains={}, txns={})
        for v in self.versions:
            if v <= st.version:
                continue
            self.before[v] = copy_state(st)
            st.version = v
            st.ict = None
            for a in self.commits[v].actions:
                apply_action(st, a, v)
            self.states[v] = copy_state(st)
        if base is not None:
            self.states.setdefault(base.version, copy_state(base))

    def state_at(self, v: int) -> State | None:
        """Replayed state at version v (None when unknown)."""
        return self.states.get(v)

    def iter_commit_actions(self) -> Iterator[tuple[Commit, Action]]:
        """Every action of every commit, in version then file order."""
        for v in self.versions:
            c = self.commits[v]
            for a in c.actions:
                yield c, a


class Footer:
    """What the checks need from a parquet footer: metadata, parquet schema, Arrow schema."""

    __slots__ = ("metadata", "schema", "schema_arrow")

    def __init__(self, metadata: Any) -> None:
        self.metadata = metadata
        self.schema = metadata.schema
        self.schema_arrow = metadata.schema.to_arrow_schema()


def copy_state(st: State) -> State:
    """Shallow copy of the mutable maps."""
    return State(version=st.version, protocol=st.protocol, metadata=st.metadata, live=dict(st.live),
                 domains=dict(st.domains), txns=dict(st.txns), ict=st.ict,
                 protocol_version=st.protocol_version, metadata_version=st.metadata_version)


def apply_action(st: State, a: Action, version: int) -> None:
    """Lenient reconciliation of one action."""
    b = a.body
    if not isinstance(b, dict):
        return
    if a.key == PROTOCOL:
        st.protocol, st.protocol_version = b, version
    elif a.key == METADATA:
        st.metadata, st.metadata_version = b, version
    elif a.key == ADD:
        k = file_key(b)
        if k:
            st.live[k] = dict(b, **{VERSION_KEY: version, WHERE_KEY: a.where})
    elif a.key == REMOVE:
        k = file_key(b)
        if k:
            st.live.pop(k, None)
    elif a.key == TXN and isinstance(b.get("appId"), str):
        st.txns[b["appId"]] = b
    elif a.key == DOMAIN and isinstance(b.get("domain"), str):
        if b.get("removed") is True:
            st.domains.pop(b["domain"], None)
        else:
            st.domains[b["domain"]] = b
    elif a.key == COMMIT_INFO and isinstance(b.get("inCommitTimestamp"), int):
        st.ict = b["inCommitTimestamp"]


def open_storage(location: Any) -> Storage:
    """A Storage for a path, file:// URI or an existing Storage."""
    if isinstance(location, Storage):
        return location
    text = str(location)
    if text.startswith("s3://") or text.startswith("s3a://"):
        from reference_impl import storage as st_mod

        s3 = getattr(st_mod, "S3Storage", None)
        if s3 is None:
            raise InvalidTable(f"no S3 storage available for {text}")
        return s3(text)
    return LocalStorage(text)


def _read_parquet_source(source: "str | bytes"):
    """A data file as a table: by path for local files, from bytes otherwise."""
    import pyarrow.parquet as pq

    if isinstance(source, str):
        # INT96 (Spark's legacy timestamps) as microseconds, as read_parquet does: the nanosecond
        # default wraps years outside 1677..2262 (0001-01-01 reads as 1754-08-30).
        table = pq.ParquetFile(source, coerce_int96_timestamp_unit="us").read(use_threads=False)
        table.validate(full=True)  # strings must be UTF-8 (see parquet_io.read_parquet)
        return table
    return read_parquet(source)


def _read_parquet_footer(source: "str | bytes"):
    """A data file's footer metadata."""
    import pyarrow.parquet as pq

    if isinstance(source, str):
        return pq.read_metadata(source)
    return open_parquet(source).metadata

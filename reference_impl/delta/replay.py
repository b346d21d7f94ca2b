"""Action Reconciliation: replay a log segment into the state of one snapshot.

The newest protocol and metaData win; txn is newest per appId; domainMetadata newest per
domain with removed=true hiding it; file actions keep the newest reference per logical file
(path, dvId), adds being live files and removes tombstones. commitInfo is taken only from the
JSON commit at the snapshot version. checkpointMetadata / sidecar actions found in commits and
unknown actions play no part.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass, field
from itertools import repeat

from reference_impl.delta.actions import (
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    Txn,
    parse_commit,
)
from reference_impl.delta.log import LogSegment
from reference_impl.common.gcpause import gc_paused
from reference_impl.errors import InvalidTable
from reference_impl.storage import Storage

FileKey = tuple[str, "str | None"]


@dataclass(slots=True, kw_only=True)
class SnapshotState:
    """The reconciled state at ``version``."""

    version: int
    protocol: Protocol
    metadata: Metadata
    files: dict[FileKey, AddFile] = field(default_factory=dict)
    tombstones: dict[FileKey, RemoveFile] = field(default_factory=dict)
    txns: dict[str, Txn] = field(default_factory=dict)
    domains: dict[str, DomainMetadata] = field(default_factory=dict)
    commit_info: CommitInfo | None = None
    in_commit_timestamp: int | None = None
    checkpoint_version: int | None = None


class FileMap(MutableMapping):
    """The live-file map of a snapshot: a dict from (path, dvId) to AddFile whose checkpoint part
    stays columnar (``checkpoint.AddBatch``) until values are asked for.

    Behaves as a mutable mapping; ``values()``/``items()`` build the objects in bulk, a single
    lookup builds one. Later commits override or delete entries without building anything.
    """

    __slots__ = ("_base", "_batches", "_over", "_cache")

    def __init__(self, batches=()) -> None:
        self._batches = list(batches)
        self._base: dict = {}
        for bi, b in enumerate(self._batches):
            self._base.update(zip(b.keys, zip(repeat(bi), range(len(b.keys)))))
        self._over: dict = {}

    def __getitem__(self, key):
        v = self._over.get(key)
        if v is not None:
            return v
        bi, row = self._base[key]
        return self._batches[bi].row(row)

    def __setitem__(self, key, value) -> None:
        self._base.pop(key, None)
        self._over[key] = value

    def __delitem__(self, key) -> None:
        a = self._over.pop(key, None)
        b = self._base.pop(key, None)
        if a is None and b is None:
            raise KeyError(key)

    def discard(self, key) -> None:
        """Remove ``key`` if present, without building its AddFile."""
        self._over.pop(key, None)
        self._base.pop(key, None)

    def __contains__(self, key) -> bool:
        return key in self._over or key in self._base

    def __iter__(self):
        yield from self._base
        yield from self._over

    def __len__(self) -> int:
        return len(self._base) + len(self._over)

    def values(self) -> list:
        """All AddFiles (built in bulk)."""
        with gc_paused():
            rows = [b.rows() for b in self._batches]
        return [rows[bi][r] for bi, r in self._base.values()] + list(self._over.values())

    def items(self) -> list:
        """All (key, AddFile) pairs (built in bulk)."""
        return list(zip(self.keys(), self.values()))

    def keys(self) -> list:
        """All keys, in the same order as ``values()``."""
        return list(self._base) + list(self._over)

    def copy(self) -> dict:
        """A plain dict copy."""
        return dict(self.items())

    def __repr__(self) -> str:
        return f"FileMap({len(self)} files)"


class _Acc:
    """The mutable accumulator replay folds actions into."""

    __slots__ = ("protocol", "metadata", "files", "tombstones", "txns", "domains")

    def __init__(self) -> None:
        self.protocol: Protocol | None = None
        self.metadata: Metadata | None = None
        self.files: dict[FileKey, AddFile] | FileMap = {}
        self.tombstones: dict[FileKey, RemoveFile] = {}
        self.txns: dict[str, Txn] = {}
        self.domains: dict[str, DomainMetadata] = {}

    def apply(self, actions) -> None:
        """Fold one commit's (or checkpoint's) actions in; InvalidTable if it holds two protocol or
        two metaData actions, since actions of one commit are unordered and neither would win."""
        files, tombstones = self.files, self.tombstones
        seen_metadata = seen_protocol = False
        for a in actions:
            t = type(a)
            if t is AddFile:
                dv = a.deletion_vector
                key = (a.path, None if dv is None else dv.unique_id)
                files[key] = a
                tombstones.pop(key, None)
            elif t is RemoveFile:
                dv = a.deletion_vector
                key = (a.path, None if dv is None else dv.unique_id)
                if key in files:
                    del files[key]
                tombstones[key] = a
            elif t is Metadata:
                if seen_metadata:
                    raise InvalidTable("more than one metaData action in one commit", rule="DELTA-ACTION-003")
                seen_metadata = True
                self.metadata = a
            elif t is Protocol:
                if seen_protocol:
                    raise InvalidTable("more than one protocol action in one commit", rule="DELTA-LOG-007")
                seen_protocol = True
                self.protocol = a
            elif t is Txn:
                self.txns[a.app_id] = a
            elif t is DomainMetadata:
                if a.removed:
                    self.domains.pop(a.domain, None)
                else:
                    self.domains[a.domain] = a
            # commitInfo, cdc, checkpointMetadata, sidecar and unknown actions do not reconcile.


def _apply(acc: _Acc, actions, version: int, path: str) -> None:
    try:
        acc.apply(actions)
    except InvalidTable as exc:
        raise InvalidTable(exc.message, path=path, version=version, rule=exc.rule) from None


def read_commit(storage: Storage, version: int, path: str):
    """Read and parse one commit file; InvalidTable with path and version on any failure."""
    try:
        data = storage.read(path)
    except FileNotFoundError:
        raise InvalidTable(f"commit file for version {version} disappeared", path=path, version=version,
                           rule="DELTA-LOG-001") from None
    return parse_commit(data, version=version, path=path)


def replay(storage: Storage, segment: LogSegment) -> SnapshotState:
    """Reconcile the checkpoint (if any) and the commits of ``segment``."""
    with gc_paused():
        return _replay(storage, segment)


def _replay(storage: Storage, segment: LogSegment) -> SnapshotState:
    acc = _Acc()
    if segment.checkpoint is not None:
        from reference_impl.delta.checkpoint import read_checkpoint_lazy

        actions, batches = read_checkpoint_lazy(storage, segment.checkpoint)
        if batches:
            acc.files = FileMap(batches)
        _apply(acc, actions, segment.checkpoint.version, segment.checkpoint.files[0].path)
    last_actions = None
    for version, info in segment.commits:
        actions = read_commit(storage, version, info.path)
        _apply(acc, actions, version, info.path)
        if version == segment.version:
            last_actions = actions
    if last_actions is None and segment.version_commit is not None:
        last_actions = read_commit(storage, segment.version, segment.version_commit.path)
    commit_info = None
    for a in last_actions or ():
        if type(a) is CommitInfo:
            commit_info = a
            break
    where = storage.uri("_delta_log")
    if acc.protocol is None:
        raise InvalidTable(f"no protocol action in the log up to version {segment.version}", path=where,
                           version=segment.version, rule="DELTA-REPLAY-002")
    if acc.metadata is None:
        raise InvalidTable(f"no metaData action in the log up to version {segment.version}", path=where,
                           version=segment.version, rule="DELTA-ACTION-001")
    return SnapshotState(
        version=segment.version,
        protocol=acc.protocol,
        metadata=acc.metadata,
        files=acc.files,
        tombstones=acc.tombstones,
        txns=acc.txns,
        domains=acc.domains,
        commit_info=commit_info,
        in_commit_timestamp=None if commit_info is None else commit_info.in_commit_timestamp,
        checkpoint_version=None if segment.checkpoint is None else segment.checkpoint.version,
    )


def replay_actions(batches) -> SnapshotState:
    """Reconcile in-memory batches ``[(version, actions), ...]`` (tests and writers use this)."""
    acc = _Acc()
    version = None
    last = None
    for version, actions in batches:
        acc.apply(actions)
        last = actions
    if acc.protocol is None or acc.metadata is None or version is None:
        raise InvalidTable("no protocol or metaData in the given actions", version=version,
                           rule="DELTA-REPLAY-002")
    ci = next((a for a in last or () if type(a) is CommitInfo), None)
    return SnapshotState(version=version, protocol=acc.protocol, metadata=acc.metadata, files=acc.files,
                         tombstones=acc.tombstones, txns=acc.txns, domains=acc.domains, commit_info=ci,
                         in_commit_timestamp=None if ci is None else ci.in_commit_timestamp)

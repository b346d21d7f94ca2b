"""Delta Log Entries: naming, NDJSON shape, contiguity, per-commit rules, compaction and checksum files."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterator

from reference_impl.common import jsontext
from reference_impl.delta.validate.context import (
    ADD, CKPT_METADATA, COMMIT_INFO, METADATA, PROTOCOL, REMOVE, SIDECAR, TXN, Context, file_key,
)
from reference_impl.delta.validate.meta import Proto, config, truthy, P_ICT
from reference_impl.delta.validate.registry import V, Violation, check

_LOOKS_COMMIT = re.compile(r"^\d+\.json$")
_LOOKS_CRC = re.compile(r"^\d+\.crc$")
_LOOKS_COMPACTION = re.compile(r"^\d+\.\d+\.compacted\.json$")


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


@check("LOG-004")
def commit_file_names(ctx: Context) -> Iterator[Violation]:
    """Commit-like files must be named with a 20-digit version."""
    for f in ctx.other_log_files:
        if _LOOKS_COMMIT.match(_name(f.path)):
            yield V("LOG-004", "commit file name is not a 20-digit zero-padded version", f.path)


@check("CRC-001")
def checksum_file_names(ctx: Context) -> Iterator[Violation]:
    """Checksum files: 20-digit name, exactly one JSON object."""
    for f in ctx.other_log_files:
        if _LOOKS_CRC.match(_name(f.path)):
            yield V("CRC-001", "checksum file name is not a 20-digit zero-padded version", f.path)
    for v, f in sorted(ctx.crcs.items()):
        lines = ctx.read_lines(f.path)
        if len(lines) != 1 or lines[0].error or not isinstance(lines[0].obj, dict):
            yield V("CRC-001", "checksum file does not hold exactly one JSON object", f.path)


@check("LOG-012")
def compaction_file_names(ctx: Context) -> Iterator[Violation]:
    """Compaction files x.y.compacted.json: 20-digit bounds, y > x."""
    for f in ctx.other_log_files:
        if _LOOKS_COMPACTION.match(_name(f.path)):
            yield V("LOG-012", "compaction file bounds are not 20-digit zero-padded", f.path)
    for x, y, f in ctx.compactions:
        if y <= x:
            yield V("LOG-012", f"compaction end version {y} is not greater than start {x}", f.path)


@check("LOG-013")
def compaction_content(ctx: Context) -> Iterator[Violation]:
    """Compactions hold reconciled actions: no commitInfo, one action per file key."""
    for x, y, f in ctx.compactions:
        keys: Counter = Counter()
        for ln in ctx.read_lines(f.path):
            if ln.error or not isinstance(ln.obj, dict) or len(ln.obj) != 1:
                yield V("LOG-013", "compaction line is not one action object", f"{f.path}:{ln.lineno}")
                continue
            (key, body), = ln.obj.items()
            if key == COMMIT_INFO:
                yield V("LOG-013", "compaction file contains commitInfo", f"{f.path}:{ln.lineno}")
            elif key in (ADD, REMOVE):
                k = file_key(body)
                keys[k] += 1
                if k and keys[k] == 2:
                    yield V("LOG-013", f"compaction is not reconciled: {k[0]} appears twice", f"{f.path}:{ln.lineno}")


@check("LOG-005")
def ndjson_lines(ctx: Context) -> Iterator[Violation]:
    """Every non-empty commit line is one JSON object holding exactly one action."""
    for v in ctx.versions:
        c = ctx.commits[v]
        for ln in c.lines:
            where = f"{c.info.path}:{ln.lineno}"
            if ln.error:
                yield V("LOG-005", ln.error, where)
            elif not isinstance(ln.obj, dict):
                yield V("LOG-005", "line is not a JSON object", where)
            elif len(ln.obj) != 1:
                yield V("LOG-005", f"line holds {len(ln.obj)} actions, expected exactly one", where)


@check("LOG-006")
def commits_not_empty(ctx: Context) -> Iterator[Violation]:
    """A commit holds at least one action: an empty file is a commit torn mid-write, not an empty change."""
    for v in ctx.versions:
        c = ctx.commits[v]
        if not c.lines:
            yield V("LOG-006", "commit file holds no action (what an interrupted write leaves)", c.info.path)


@check("LOG-001", "CKPT-042")
def contiguous_versions(ctx: Context) -> Iterator[Violation]:
    """Versions are contiguous; a log that starts after 0 starts at a retained checkpoint."""
    vs = ctx.versions
    if not vs:
        if not ctx.checkpoints:
            yield V("LOG-001", "the log has no commit and no checkpoint", "_delta_log")
        return
    for a, b in zip(vs, vs[1:]):
        if b != a + 1:
            yield V("LOG-001", f"versions {a + 1}..{b - 1} are missing", f"_delta_log (between {a} and {b})")
    if vs[0] > 0:
        usable = {c.version for c in ctx.checkpoints if c.complete and c.error is None}
        if not any(vs[0] - 1 <= cv <= vs[-1] for cv in usable):
            yield V("LOG-001", f"log starts at version {vs[0]} with no checkpoint to replay from", "_delta_log")
        elif vs[0] not in usable:
            yield V("CKPT-042", f"oldest retained commit {vs[0]} has no checkpoint at its version", "_delta_log")


@check("REPLAY-002")
def protocol_present(ctx: Context) -> Iterator[Violation]:
    """A snapshot has a protocol at every version."""
    for v in ctx.versions:
        st = ctx.states.get(v)
        if st is not None and st.protocol is None:
            yield V("REPLAY-002", f"no protocol action at or before version {v}", ctx.commits[v].info.path)
            return


@check("ACTION-001")
def version_zero_metadata(ctx: Context) -> Iterator[Violation]:
    """Version 0 contains a metaData action."""
    c = ctx.commits.get(0)
    if c is not None and not c.of(METADATA):
        yield V("ACTION-001", "version 0 has no metaData action", c.info.path)


@check("REPLAY-010")
def no_checkpoint_actions_in_commits(ctx: Context) -> Iterator[Violation]:
    """checkpointMetadata and sidecar never appear in commits."""
    for c, a in ctx.iter_commit_actions():
        if a.key in (CKPT_METADATA, SIDECAR):
            yield V("REPLAY-010", f"{a.key} action in a commit file", a.where)


@check("LOG-007", "ACTION-003")
def single_protocol_and_metadata(ctx: Context) -> Iterator[Violation]:
    """At most one protocol and one metaData per commit."""
    for v in ctx.versions:
        c = ctx.commits[v]
        for key, rule in ((PROTOCOL, "LOG-007"), (METADATA, "ACTION-003")):
            acts = c.of(key)
            if len(acts) > 1:
                yield V(rule, f"{len(acts)} {key} actions in one commit", acts[1].where)


@check("LOG-008")
def single_txn_per_app(ctx: Context) -> Iterator[Violation]:
    """At most one txn per appId per commit."""
    for v in ctx.versions:
        seen: set = set()
        for a in ctx.commits[v].of(TXN):
            app = a.body.get("appId") if isinstance(a.body, dict) else None
            if isinstance(app, str):
                if app in seen:
                    yield V("LOG-008", f"second txn for appId {app!r} in one commit", a.where + " txn.appId")
                seen.add(app)


@check("LOG-009", "ACTION-008", "ACTION-012")
def file_actions_per_commit(ctx: Context) -> Iterator[Violation]:
    """One add and one remove per path per commit; never add and remove of the same (path, dvId)."""
    for v in ctx.versions:
        c = ctx.commits[v]
        by_kind: dict[str, dict[str, list]] = {ADD: {}, REMOVE: {}}
        for a in c.actions:
            if a.key in by_kind:
                k = file_key(a.body)
                if k:
                    by_kind[a.key].setdefault(k[0], []).append((k, a))
        for kind, paths in by_kind.items():
            for path, acts in paths.items():
                if len(acts) > 1:
                    first = acts[0][1].body
                    if all(x[1].body == first for x in acts[1:]):
                        yield V("ACTION-012", f"repeated identical {kind} of {path}", acts[1][1].where)
                    else:
                        yield V("ACTION-008", f"{len(acts)} {kind} actions for path {path} in one commit", acts[1][1].where)
        for path, adds in by_kind[ADD].items():
            for k, a in adds:
                for rk, r in by_kind[REMOVE].get(path, []):
                    if rk == k:
                        yield V("LOG-009", f"add and remove of the same (path, dvId) {path}", a.where)


@check("ACTION-011")
def add_over_live_path(ctx: Context) -> Iterator[Violation]:
    """An add must not make a path live twice (under two dvIds) without removing the old key."""
    for v in ctx.versions:
        before = ctx.before.get(v)
        if before is None:
            continue
        c = ctx.commits[v]
        removed = {file_key(a.body) for a in c.of(REMOVE)}
        live_paths: dict[str, set] = {}
        for k in before.live:
            live_paths.setdefault(k[0], set()).add(k[1])
        for a in c.of(ADD):
            k = file_key(a.body)
            if not k:
                continue
            for other in live_paths.get(k[0], ()):
                if other != k[1] and (k[0], other) not in removed:
                    yield V("ACTION-011", f"{k[0]} is already live with another deletion vector", a.where)


def logical_rows(ctx: Context, body: dict) -> int | None:
    """Logical rows of a file action: numRecords (stats, else footer) minus DV cardinality."""
    n = None
    stats = body.get("stats")
    if isinstance(stats, str):
        try:
            s = jsontext.loads(stats)
            n = s.get("numRecords") if isinstance(s, dict) and isinstance(s.get("numRecords"), int) else None
        except ValueError:
            n = None
    if n is None:
        rel = ctx.rel(body.get("path", ""))
        pf = ctx.footer(rel) if rel else None
        if pf is None:
            return None
        n = pf.metadata.num_rows
    dv = body.get("deletionVector")
    if isinstance(dv, dict) and isinstance(dv.get("cardinality"), int):
        n -= dv["cardinality"]
    return n


@check("ACTION-013", "ACTION-014", "ACTION-015")
def data_change_false(ctx: Context) -> Iterator[Violation]:
    """dataChange=false commits only rearrange: new files replace removed rows one for one."""
    for v in ctx.versions:
        before = ctx.before.get(v)
        c = ctx.commits[v]
        adds = [a for a in c.of(ADD) if isinstance(a.body, dict) and a.body.get("dataChange") is False]
        rems = [a for a in c.of(REMOVE) if isinstance(a.body, dict) and a.body.get("dataChange") is False]
        live_paths = {k[0] for k in before.live} if before else set()
        new_adds = [a for a in adds if str(a.body.get("path")) not in live_paths]
        if rems and not c.of(ADD):
            yield V("ACTION-015", "dataChange=false remove with no add putting its rows back", rems[0].where)
            continue
        if new_adds and not rems:
            yield V("ACTION-014", "dataChange=false add of a new file with no remove in the commit", new_adds[0].where)
            continue
        if new_adds and rems:
            # only files whose path is new carry moved rows; a re-add of a live path with a new DV is data change
            na = [logical_rows(ctx, a.body) for a in new_adds]
            nr = [logical_rows(ctx, r.body) for r in rems if str(r.body.get("path")) not in {str(a.body.get("path")) for a in adds}]
            if None not in na and None not in nr and nr and sum(na) != sum(nr):
                yield V("ACTION-013", f"dataChange=false commit adds {sum(na)} rows but removes {sum(nr)}", new_adds[0].where)


# ------------------------------------------------------------------ version checksum files
CRC_REQUIRED = ("tableSizeBytes", "numFiles", "numMetadata", "numProtocol", "metadata", "protocol")
DELETED_BINS = (0, 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 2147483647)


def _int(v) -> bool:
    """JSON integer (bools excluded)."""
    return isinstance(v, int) and not isinstance(v, bool)


def _crc_obj(ctx: Context, v: int):
    lines = ctx.read_lines(ctx.crcs[v].path)
    if len(lines) == 1 and isinstance(lines[0].obj, dict):
        return lines[0].obj
    return None


def strip_private(d):
    """Copy without the replay's private keys and null values (for comparing actions)."""
    if isinstance(d, dict):
        return {k: strip_private(x) for k, x in d.items() if not k.startswith("\x00") and x is not None}
    if isinstance(d, list):
        return [strip_private(x) for x in d]
    return d


@check("CRC-002", "CRC-003", "CRC-004", "CRC-005", "CRC-006", "CRC-008")
def checksum_content(ctx: Context) -> Iterator[Violation]:
    """Version checksum: required fields, values equal to replay, histogram shapes."""
    for v in sorted(ctx.crcs):
        where = ctx.crcs[v].path
        if v not in ctx.commits:
            if ctx.latest is None or v > ctx.latest:
                yield V("CRC-008", f"checksum for version {v} that has no commit", where)
            continue
        crc = _crc_obj(ctx, v)
        if crc is None:
            continue
        for k in CRC_REQUIRED:
            if k not in crc:
                yield V("CRC-002", f"checksum lacks required field {k}", f"{where} {k}")
        for k in ("numMetadata", "numProtocol"):
            if k in crc and crc[k] != 1:
                yield V("CRC-002", f"{k} is {crc[k]!r}, must be 1", f"{where} {k}")
        st = ctx.states.get(v)
        if st is not None:
            live = list(st.live.values())
            expect = {"tableSizeBytes": sum(a["size"] for a in live if _int(a.get("size"))), "numFiles": len(live)}
            for k, val in expect.items():
                if k in crc and crc[k] != val:
                    yield V("CRC-003", f"{k}={crc[k]!r} but replay gives {val}", f"{where} {k}")
            for k, actual in (("metadata", st.metadata), ("protocol", st.protocol)):
                if isinstance(crc.get(k), dict) and actual is not None and strip_private(crc[k]) != strip_private(actual):
                    yield V("CRC-003", f"{k} differs from the replayed {k}", f"{where} {k}")
            if isinstance(crc.get("setTransactions"), list):
                got = {t.get("appId"): t.get("version") for t in crc["setTransactions"] if isinstance(t, dict)}
                if got != {a: t.get("version") for a, t in st.txns.items()}:
                    yield V("CRC-003", "setTransactions differ from the live txns", f"{where} setTransactions")
            if isinstance(crc.get("domainMetadata"), list):
                got = {d.get("domain"): d.get("configuration") for d in crc["domainMetadata"] if isinstance(d, dict)}
                if got != {d: x.get("configuration") for d, x in st.domains.items()}:
                    yield V("CRC-003", "domainMetadata differs from the live domains", f"{where} domainMetadata")
            dvs = [a["deletionVector"] for a in live if isinstance(a.get("deletionVector"), dict)]
            if isinstance(crc.get("numDeletionVectorsOpt"), int) and crc["numDeletionVectorsOpt"] != len(dvs):
                yield V("CRC-003", "numDeletionVectorsOpt differs from replay", f"{where} numDeletionVectorsOpt")
            deleted = sum(d["cardinality"] for d in dvs if _int(d.get("cardinality")))
            if isinstance(crc.get("numDeletedRecordsOpt"), int) and crc["numDeletedRecordsOpt"] != deleted:
                yield V("CRC-003", "numDeletedRecordsOpt differs from replay", f"{where} numDeletedRecordsOpt")
            ict_on = truthy(config(st.metadata).get(P_ICT)) and Proto.of(st.protocol).writer_supports("inCommitTimestamp")
            has = "inCommitTimestampOpt" in crc and crc["inCommitTimestampOpt"] is not None
            if ict_on and (not has or crc["inCommitTimestampOpt"] != st.ict):
                yield V("CRC-004", f"inCommitTimestampOpt must equal the commit's inCommitTimestamp {st.ict}", where)
            elif not ict_on and has:
                yield V("CRC-004", "inCommitTimestampOpt present while in-commit timestamps are disabled", where)
            yield from _histograms(crc, where, live)


def _histograms(crc: dict, where: str, live: list) -> Iterator[Violation]:
    h = crc.get("fileSizeHistogram")
    if isinstance(h, dict):
        b, fc, tb = h.get("sortedBinBoundaries"), h.get("fileCounts"), h.get("totalBytes")
        if not (isinstance(b, list) and isinstance(fc, list) and isinstance(tb, list)):
            yield V("CRC-005", "fileSizeHistogram lacks one of its arrays", f"{where} fileSizeHistogram")
        elif not b or not all(_int(x) for x in b) or b[0] != 0 or any(x >= y for x, y in zip(b, b[1:])) or not (len(b) == len(fc) == len(tb)):
            yield V("CRC-005", "fileSizeHistogram boundaries must start at 0, ascend, and match the arrays' lengths",
                    f"{where} fileSizeHistogram")
        else:
            counts = [0] * len(b)
            for a in live:
                s = a.get("size") if _int(a.get("size")) else 0
                i = max((j for j, lo in enumerate(b) if lo <= s), default=0)
                counts[i] += 1
            if counts != fc:
                yield V("CRC-003", "fileSizeHistogram counts differ from replay", f"{where} fileSizeHistogram")
    d = crc.get("deletedRecordCountsHistogramOpt")
    if isinstance(d, dict):
        arr = d.get("deletedRecordCounts")
        if not isinstance(arr, list) or len(arr) != 10:
            yield V("CRC-006", "deletedRecordCounts must have exactly 10 bins", f"{where} deletedRecordCountsHistogramOpt")
        else:
            counts = [0] * 10
            for a in live:
                dv = a.get("deletionVector")
                n = dv.get("cardinality") if isinstance(dv, dict) and _int(dv.get("cardinality")) else 0
                counts[max((i for i, lo in enumerate(DELETED_BINS) if lo <= n), default=0)] += 1
            if counts != arr:
                yield V("CRC-006", "deletedRecordCounts bins do not match the live files' deletion counts",
                        f"{where} deletedRecordCountsHistogramOpt")

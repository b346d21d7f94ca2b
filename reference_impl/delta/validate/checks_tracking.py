"""In-Commit Timestamps, Row Tracking, Change Data Feed writer duties and catalog-managed commits."""

from __future__ import annotations

from typing import Iterator

from reference_impl.common import jsontext
from reference_impl.delta.validate.context import (
    ADD, CDC, COMMIT_INFO, REMOVE, STAGED_DIR, STAGED_RE, VERSION_KEY, Context,
)
from reference_impl.delta.validate.meta import (
    D_ROW_TRACKING, P_CDF, P_ICT, P_ICT_TIMESTAMP, P_ICT_VERSION, P_ROW_ID_COL, P_ROW_TRACKING,
    P_ROW_TRACKING_SUSPENDED, P_ROW_VERSION_COL, Proto, config, truthy,
)
from reference_impl.delta.validate.registry import V, Violation, check
from reference_impl.delta.validate.checks_log import logical_rows


def _ict_enabled(st) -> bool:
    return st is not None and truthy(config(st.metadata).get(P_ICT)) and Proto.of(st.protocol).writer_supports("inCommitTimestamp")


@check("ICT-002", "ICT-003", "ICT-004", "ICT-005")
def in_commit_timestamps(ctx: Context) -> Iterator[Violation]:
    """With ICT on: commitInfo first with a long inCommitTimestamp, strictly increasing; enablement tracked."""
    prev_ict = None
    for v in ctx.versions:
        st, before = ctx.states.get(v), ctx.before.get(v)
        c = ctx.commits[v]
        if not _ict_enabled(st):
            prev_ict = None
            continue
        first = c.actions[0] if c.actions else None
        ict = first.body.get("inCommitTimestamp") if first is not None and first.key == COMMIT_INFO and isinstance(first.body, dict) else None
        if first is None or first.key != COMMIT_INFO:
            yield V("ICT-002", "in-commit timestamps enabled but the first action is not commitInfo", c.info.path + ":1")
            prev_ict = None
            continue
        if not isinstance(ict, int) or isinstance(ict, bool):
            yield V("ICT-002", "commitInfo lacks a long inCommitTimestamp", first.where + " commitInfo.inCommitTimestamp")
            prev_ict = None
            continue
        if prev_ict is not None and ict <= prev_ict:
            yield V("ICT-003", f"inCommitTimestamp {ict} does not exceed the previous {prev_ict}", first.where)
        newly = v > 0 and not _ict_enabled(before) and before is not None and before.metadata is not None
        if newly:
            cfg = config(st.metadata)
            if cfg.get(P_ICT_VERSION) != str(v) or cfg.get(P_ICT_TIMESTAMP) != str(ict):
                yield V("ICT-004", f"enabling commit must set {P_ICT_VERSION}={v} and {P_ICT_TIMESTAMP}={ict}", c.info.path)
            prev_file = ctx.commits.get(v - 1)
            if prev_file is not None and ict <= prev_file.info.modification_time:
                yield V("ICT-005", f"enabling inCommitTimestamp {ict} not after the previous commit's mtime "
                                   f"{prev_file.info.modification_time}", first.where)
        prev_ict = ict


def _hwm(st) -> int | None:
    d = st.domains.get(D_ROW_TRACKING) if st else None
    if not d:
        return None
    try:
        return int(jsontext.loads(d.get("configuration"))["rowIdHighWaterMark"])
    except (ValueError, KeyError, TypeError):
        return None


@check("ROWTRACK-003", "ROWTRACK-004", "ROWTRACK-005", "ROWTRACK-006", "ROWTRACK-007", "ROWTRACK-009")
def row_tracking(ctx: Context) -> Iterator[Violation]:
    """Fresh row ids above the high-water mark, recorded; commit versions; copied ids; enablement preconditions."""
    last_add: dict[str, dict] = {}
    for v in ctx.versions:
        st, before = ctx.states.get(v), ctx.before.get(v)
        c = ctx.commits[v]
        if st is None:
            continue
        p = Proto.of(st.protocol)
        cfg = config(st.metadata)
        supported = p.writer >= 7 and "rowTracking" in (p.wf or ())
        suspended = truthy(cfg.get(P_ROW_TRACKING_SUSPENDED))
        if supported and not suspended:
            old_hwm = _hwm(before)
            max_fresh = None
            known = set(last_add)
            for a in c.actions:
                if a.key not in (ADD, REMOVE) or not isinstance(a.body, dict) or not isinstance(a.body.get("path"), str):
                    continue
                b, path = a.body, a.body["path"]
                prior = last_add.get(path)
                if prior is not None and (a.key == REMOVE or b.get("dataChange") is False or
                                          (path in known and prior.get("baseRowId") is not None)):
                    for k in ("baseRowId", "defaultRowCommitVersion"):
                        if prior.get(k) is not None and b.get(k) != prior.get(k):
                            yield V("ROWTRACK-007", f"{a.key}.{k}={b.get(k)!r} differs from the last add's {prior.get(k)!r}", a.where)
                    continue
                if a.key != ADD:
                    continue
                base = b.get("baseRowId")
                if not isinstance(base, int):
                    yield V("ROWTRACK-003", "new add lacks baseRowId while row tracking is supported", a.where)
                    continue
                if b.get("defaultRowCommitVersion") != v:
                    yield V("ROWTRACK-006", f"defaultRowCommitVersion {b.get('defaultRowCommitVersion')!r} of a new add in version {v}", a.where)
                if old_hwm is not None and base <= old_hwm:
                    yield V("ROWTRACK-004", f"baseRowId {base} not above the high-water mark {old_hwm}", a.where)
                n = logical_rows(ctx, dict(b, deletionVector=None))
                if n is not None:
                    top = base + max(n, 1) - 1
                    max_fresh = top if max_fresh is None else max(max_fresh, top)
            new_hwm = _hwm(st)
            if max_fresh is not None and (new_hwm is None or new_hwm < max_fresh):
                yield V("ROWTRACK-005", f"row-id high-water mark {new_hwm} below the highest fresh row id {max_fresh}", c.info.path)
            # overlapping id ranges among live files
            ranges = []
            for (path, _), b in st.live.items():
                base = b.get("baseRowId")
                n = logical_rows(ctx, dict(b, deletionVector=None)) if isinstance(base, int) else None
                if n:
                    ranges.append((base, base + n, path))
            ranges.sort()
            for (b1, e1, p1), (b2, e2, p2) in zip(ranges, ranges[1:]):
                if b2 < e1 and any(a.key == ADD and a.body.get("path") in (p1, p2) for a in c.actions if isinstance(a.body, dict)):
                    yield V("ROWTRACK-003", f"row id ranges of {p1} and {p2} overlap", c.info.path)
        enabled_now = truthy(cfg.get(P_ROW_TRACKING))
        enabled_before = before is not None and truthy(config(before.metadata).get(P_ROW_TRACKING))
        if enabled_now and not enabled_before:
            problems = []
            if not supported:
                problems.append("rowTracking not in writerFeatures")
            if not cfg.get(P_ROW_ID_COL) or not cfg.get(P_ROW_VERSION_COL):
                problems.append("materialized column names not configured")
            if any(b.get("baseRowId") is None or b.get("defaultRowCommitVersion") is None for b in st.live.values()):
                problems.append("a live add lacks baseRowId/defaultRowCommitVersion")
            if problems:
                yield V("ROWTRACK-009", "enabling row tracking: " + "; ".join(problems), c.info.path)
        for a in c.of(ADD):
            if isinstance(a.body, dict) and isinstance(a.body.get("path"), str):
                last_add[a.body["path"]] = a.body


@check("ROWTRACK-012", "ROWTRACK-014")
def materialized_row_ids(ctx: Context) -> Iterator[Violation]:
    """Stable row ids are unique in the newest version; fresh inserts leave materialized ids null or equal."""
    if not ctx.versions:
        return
    v = ctx.versions[-1]
    st = ctx.states.get(v)
    if st is None or not truthy(config(st.metadata).get(P_ROW_TRACKING)):
        return
    col = config(st.metadata).get(P_ROW_ID_COL)
    seen: dict[int, str] = {}
    from reference_impl.delta.validate.checks_actions import decode_bitmap, dv_bytes
    for (path, dvid), b in st.live.items():
        base = b.get("baseRowId")
        rel = ctx.rel(path)
        tbl = ctx.table(rel) if rel else None
        if tbl is None or not isinstance(base, int):
            continue
        mat = tbl.column(col).to_pylist() if col and col in tbl.column_names else [None] * tbl.num_rows
        fresh_file = b.get(VERSION_KEY) is not None and all(
            a.key != REMOVE for a in ctx.commits[b[VERSION_KEY]].actions) and b.get("dataChange") is not False
        deleted = set()
        dv = b.get("deletionVector")
        if isinstance(dv, dict):
            try:
                data, err, _ = dv_bytes(ctx, dv)
                rows, err2, _ = decode_bitmap(data) if data else (None, err, "")
                deleted = set(rows or [])
            except Exception:
                deleted = set()
        for i, m in enumerate(mat):
            if fresh_file and m is not None and m != base + i:
                yield V("ROWTRACK-014", f"freshly inserted row {i} of {path} has materialized row id {m} != {base + i}", path)
                break
            if i in deleted:
                continue
            rid = m if m is not None else base + i
            if rid in seen:
                yield V("ROWTRACK-012", f"row id {rid} appears in {seen[rid]} and {path}", path)
                return
            seen[rid] = path


@check("CDF-009", "CDF-010")
def change_data_feed_written(ctx: Context) -> Iterator[Violation]:
    """With CDF on, commits rewriting existing rows (UPDATE/MERGE/DELETE with file rewrites) carry cdc files."""
    for v in ctx.versions:
        st = ctx.states.get(v)
        c = ctx.commits[v]
        if st is None or not truthy(config(st.metadata).get(P_CDF)):
            continue
        p = Proto.of(st.protocol)
        if p.writer >= 7:
            if "changeDataFeed" not in (p.wf or ()):
                continue
            rule = "CDF-010"
        elif p.writer >= 4:
            rule = "CDF-009"
        else:
            continue
        ops = [a.body.get("operation") for a in c.of(COMMIT_INFO) if isinstance(a.body, dict)]
        if not any(isinstance(o, str) and o.upper() in ("UPDATE", "MERGE", "DELETE") for o in ops):
            continue
        adds = [a for a in c.of(ADD) if isinstance(a.body, dict) and a.body.get("dataChange") is not False]
        rems = [a for a in c.of(REMOVE) if isinstance(a.body, dict) and a.body.get("dataChange") is not False]
        if adds and rems and not c.of(CDC):
            yield V(rule, f"{ops[0]} rewrote files without cdc actions while the change data feed is enabled", c.info.path)


@check("CATALOG-003", "CATALOG-004", "CATALOG-010")
def catalog_managed_commits(ctx: Context) -> Iterator[Violation]:
    """Catalog-managed: every commit has commitInfo with a unique txnId; staged commit files are well named."""
    txn_ids: dict[str, int] = {}
    prev_mtime = None
    for v in ctx.versions:
        st = ctx.states.get(v)
        if st is None or not Proto.of(st.protocol).any_list("catalogManaged"):
            continue
        c = ctx.commits[v]
        # publication happens in version order, so a published file is never older than its predecessor
        if prev_mtime is not None and c.info.modification_time < prev_mtime and v - 1 in ctx.commits:
            yield V("CATALOG-010", f"version {v} was published before version {v - 1}", c.info.path)
        prev_mtime = c.info.modification_time
        infos = [a for a in c.of(COMMIT_INFO) if isinstance(a.body, dict)]
        tid = infos[0].body.get("txnId") if infos else None
        if not isinstance(tid, str):
            yield V("CATALOG-003", "catalog-managed commit lacks commitInfo.txnId", c.info.path)
        elif tid in txn_ids:
            yield V("CATALOG-003", f"txnId {tid} already used by version {txn_ids[tid]}", c.info.path)
        else:
            txn_ids[tid] = v
    for f in ctx.storage.list(STAGED_DIR):
        name = f.path.rsplit("/", 1)[-1]
        if not STAGED_RE.match(name):
            yield V("CATALOG-004", "staged commit is not named <20-digit version>.<uuid>.json", f.path)


@check("CLUSTER-005", "CLUSTER-006")
def clustering_provider(ctx: Context) -> Iterator[Violation]:
    """OPTIMIZE output in a clustered table names its clustering provider and reclusters only its own files."""
    provider: dict[str, str | None] = {}
    for v in ctx.versions:
        st = ctx.states.get(v)
        c = ctx.commits[v]
        p = Proto.of(st.protocol if st else None)
        clustered = p.writer >= 7 and "clustering" in (p.wf or ())
        ops = [a.body.get("operation") for a in c.of(COMMIT_INFO) if isinstance(a.body, dict)]
        adds = [a for a in c.of(ADD) if isinstance(a.body, dict) and isinstance(a.body.get("path"), str)]
        if clustered:
            new = [a for a in adds if a.body.get("dataChange") is False]
            if new and any(isinstance(o, str) and o.upper() in ("OPTIMIZE", "CLUSTER BY") for o in ops):
                for a in new:
                    if not isinstance(a.body.get("clusteringProvider"), str):
                        yield V("CLUSTER-005", "clustered file added by OPTIMIZE without clusteringProvider", a.where)
            names = {a.body["clusteringProvider"] for a in new if isinstance(a.body.get("clusteringProvider"), str)}
            for r in c.of(REMOVE):
                b = r.body if isinstance(r.body, dict) else {}
                old = provider.get(b.get("path")) if isinstance(b.get("path"), str) else None
                if b.get("dataChange") is False and old is not None and names and old not in names:
                    yield V("CLUSTER-006", f"file clustered by {old!r} reclustered by {sorted(names)}", r.where)
        for a in adds:
            provider[a.body["path"]] = a.body.get("clusteringProvider") if isinstance(a.body.get("clusteringProvider"), str) else None

"""Checks of a schema-on-read table's InternalSchema history (schema evolution on read: HUDI-EVOLR, HUDI-CHG).

A table that ALTER TABLE changed under ``hoodie.schema.on.read.enable`` keeps every schema version in
``.hoodie/.schema/<instant>.schemacommit`` and the current one in each commit's ``extraMetadata.latest_schema``
(``internal_schema``). Readers resolve old files through it by field id (HUDI-EVOLR-017), so it must parse, number
columns uniquely and never reuse an id, agree with the commits, and cover every data file. The refusals of the DDL
(partition columns, FIRST at the top level, map keys, nested type changes, emptied structs, the change matrix) do
leave a trace here: two successive versions show the change that was made.

Only completed ``.schemacommit`` files of completed commits are read: a leftover of a failed write is ignored by
Hudi's readers (and deleted by its next schema commit), as a failed write's data files are.
"""

from __future__ import annotations

from typing import Any, Iterator

from reference_impl.common.validation import Violation
from reference_impl.errors import LakeconfError
from reference_impl.hudi import commit_metadata as CM
from reference_impl.hudi import evolution as EV
from reference_impl.hudi import internal_schema as IS
from reference_impl.hudi.validate.context import Context
from reference_impl.hudi.validate.registry import V, at, check

_DATA_ACTIONS = ("commit", "deltacommit", "replacecommit")
# The change matrix cells a history can show broken (every MUST NOT cell of HUDI-CHG, and the bytes ones).
_CHG_REFUSED = tuple(f"CHG-{n:03d}" for n in (6, 13, 14, 15, 20, 21, 22, 23, 27, 28, 29, 30, 31, 34, 35, 36, 37, 38,
                                              42, 43, 44, 45, 47, 49)) + ("CHG-033", "CHG-050")


def _completed_commits(ctx: Context) -> dict[str, Any]:
    """Completed data instants (requested time -> timeline file), not rolled back."""
    return {f.instant.requested_time: f for f in ctx.completed()
            if f.instant.action in _DATA_ACTIONS and f.instant.requested_time not in ctx.rolled_back}


def _histories(ctx: Context) -> list[tuple[str, str, list[IS.InternalSchema] | None, str | None]]:
    """(rel path, instant, versions oldest first or None, parse error) of every completed history file of a
    completed commit, in instant order."""
    commits = _completed_commits(ctx)
    out = []
    for name in IS.history_files(ctx.storage):
        instant = IS.file_instant(name)
        if instant not in commits:
            continue
        rel = f"{IS.SCHEMA_DIR}/{name}"
        try:
            out.append((rel, instant, IS.parse_history(ctx.storage.read(rel)), None))
        except LakeconfError as exc:
            out.append((rel, instant, None, exc.message))
    return sorted(out, key=lambda h: h[1])


def _latest(ctx: Context) -> list[IS.InternalSchema]:
    """The versions of the newest readable history file (what readers resolve with)."""
    for _rel, _instant, versions, _err in reversed(_histories(ctx)):
        if versions:
            return versions
    return []


@check("EVOLR-017")
def schema_history_files(ctx: Context) -> Iterator[Violation]:
    """Every history file parses; its versions have distinct ids, none newer than the file's instant, and in each
    version field ids are unique and at most ``max_column_id``."""
    for rel, instant, versions, error in _histories(ctx):
        if versions is None:
            yield V("EVOLR-017", f"schema history does not parse: {error}", at(rel))
            continue
        ids = [v.version_id for v in versions]
        if len(set(ids)) != len(ids):
            yield V("EVOLR-017", f"schema history repeats a version_id ({sorted(ids)})", at(rel))
        if ids and max(ids) > int(instant):
            yield V("EVOLR-017", f"schema history holds version {max(ids)}, newer than its instant {instant}",
                    at(rel))
        for v in versions:
            seen = [i for i, _n, _f in IS.walk(v.record)]
            dup = sorted({i for i in seen if seen.count(i) > 1})
            if dup:
                yield V("EVOLR-017", f"version {v.version_id} gives id(s) {dup} to more than one column",
                        at(rel, f"version {v.version_id}"))
            if seen and v.max_column_id is not None and max(seen) > v.max_column_id:
                yield V("EVOLR-017", f"version {v.version_id}: id {max(seen)} above max_column_id "
                        f"{v.max_column_id}", at(rel, f"version {v.version_id}"))


@check("EVOLR-017", "EVOLR-003")
def latest_schema_matches_history(ctx: Context) -> Iterator[Violation]:
    """Once a table has a history, every later data commit records ``latest_schema`` (schema on read cannot be
    turned off, HUDI-EVOLR-003), equal to the newest version of its own history file when it wrote one."""
    histories = _histories(ctx)
    if not histories:
        return
    first = histories[0][1]
    by_instant = {h[1]: h for h in histories}
    for instant, f in sorted(_completed_commits(ctx).items()):
        if instant <= first:  # the commit that began schema on read is judged by its history file
            continue
        meta = ctx.metadata.get(f.name)
        if not isinstance(meta, CM.CommitMetadata):
            continue
        text = meta.extra_metadata.get(IS.LATEST_SCHEMA)
        if not text:
            if meta.write_stats() or meta.operation_type == "ALTER_SCHEMA":
                yield V("EVOLR-003", f"commit {instant} after schema on read began ({first}) records no "
                        "latest_schema: its files would be read by name", at(f.rel, "extraMetadata"))
            continue
        try:
            latest = IS.parse(text)
        except LakeconfError as exc:
            yield V("EVOLR-017", f"latest_schema does not parse: {exc.message}", at(f.rel, "extraMetadata"))
            continue
        own = by_instant.get(instant)
        if own is not None and own[2]:
            if IS.to_json(latest) != IS.to_json(own[2][-1]):
                yield V("EVOLR-017", f"latest_schema of {instant} (version {latest.version_id}) differs from the "
                        f"newest version of its history file ({own[2][-1].version_id})", at(f.rel, "extraMetadata"))


def _changes(old: IS.InternalSchema, new: IS.InternalSchema, partition: set[str]) -> Iterator[tuple[str, str]]:
    """(rule, message) of what no ALTER may do, seen between two successive versions."""
    old_ids = {i: (n, f) for i, n, f in IS.walk(old.record)}
    new_ids = {i: (n, f) for i, n, f in IS.walk(new.record)}
    map_keys = {f.type.key_id for _i, _n, f in IS.walk(old.record) if isinstance(f.type, IS.Map)}
    old_max = old.max_column_id if old.max_column_id is not None else max(old_ids, default=-1)
    if new.max_column_id is not None and new.max_column_id < old_max:
        yield "EVOLR-017", f"max_column_id falls from {old_max} to {new.max_column_id}: ids would be reused"
    for i, (name, f) in new_ids.items():
        if i not in old_ids:
            if i <= old_max and old_ids:
                yield "EVOLR-017", f"new column {name} reuses id {i} (max_column_id was {old_max})"
            continue
        old_name, of = old_ids[i]
        if i in map_keys:
            if of.type != f.type:
                yield "EVOLR-011", f"the key of map {old_name.rsplit('.', 1)[0]} changed ({_kind(of.type)} -> " \
                    f"{_kind(f.type)})"
            continue
        if old_name in partition and (old_name != name or of.type != f.type):
            yield "EVOLR-006", f"partition column {old_name} changed (now {name}: {f.type})"
        if isinstance(of.type, str) and isinstance(f.type, str):
            if of.type != f.type:
                a, b = IS.arrow_type(of.type), IS.arrow_type(f.type)
                if not EV.alter_type_allowed(a, b):
                    yield EV.alter_rule(a, b)[5:], f"{name} changes from {of.type} to {f.type} (the change matrix " \
                        "refuses it)"
        elif type(of.type) is not type(f.type):
            yield "EVOLR-013", f"{name} changes its nested type ({_kind(of.type)} -> {_kind(f.type)})"
    for i, name, f in IS.walk(new.record):
        if isinstance(f.type, IS.Record) and not f.type.fields:
            yield "EVOLR-015", f"struct {name} has no fields left"
    if new.fields and new.fields[0].id not in old_ids and old.fields:
        yield "EVOLR-009", f"new top-level column {new.fields[0].name} is first: FIRST is for nested columns only"


def _kind(t: Any) -> str:
    return t if isinstance(t, str) else type(t).__name__.lower()


@check("EVOLR-006", "EVOLR-009", "EVOLR-011", "EVOLR-013", "EVOLR-015", "EVOLR-017", *_CHG_REFUSED)
def schema_history_changes(ctx: Context) -> Iterator[Violation]:
    """Between successive versions of the history: no id reused, no partition column renamed or retyped, no
    primitive retyped against the change matrix, no nested type changed, no struct emptied, no map key changed,
    no top-level column added FIRST."""
    histories = [h for h in _histories(ctx) if h[2]]
    if not histories:
        return
    rel, versions = histories[-1][0], histories[-1][2]
    partition = set(ctx.config.partition_fields) if ctx.config else set()
    for old, new in zip(versions, versions[1:]):
        for rule, message in _changes(old, new, partition):
            yield V(rule, message, at(rel, f"version {new.version_id}"))


@check("EVOLR-017")
def files_resolve_by_id(ctx: Context) -> Iterator[Violation]:
    """Every column of a schema-on-read table's base file is a column of the version that applies to its instant
    (the newest at or before it): a reader resolves it through that version's ids. (A version's column a file
    lacks reads null; a file column its version lacks has no id to resolve by.)"""
    versions = _latest(ctx)
    if not versions:
        return
    history = IS.History(versions=tuple(versions))
    meta = set(IS.META_COLUMNS)
    for df in ctx.data_files:
        if df.base is None or df.rel not in ctx.base_summaries:
            continue
        v = history.at(df.base.instant)
        if v is None:
            continue
        want = {f.name for f in v.fields}
        unknown = [n for n, _t in ctx.base_summaries[df.rel].columns if n not in meta and n not in want]
        if unknown:
            yield V("EVOLR-017", f"column(s) {unknown} are not in schema version {v.version_id}, which applies to "
                    f"instant {df.base.instant}: they have no field id to resolve by", at(df.rel))

"""``lakeconf findings verify``: does every registry entry still reproduce, and still explain its cells?

Each entry names its cells: its cases (globs), its engines (readers; ``*`` for a writer-side cause),
its writers and its stores. Verification runs those cells (or reads a results.json that holds
them) and judges each entry reachable here:

* ``reproduced``    at least one of its cells shows its status with its pattern and carries it;
* ``gone``          none does any more: the engine was fixed or behaves differently (stale entry);
* ``drifted``       one of its cells has its status but another message, and nothing explains it:
                    the entry no longer explains a cell it used to (a new cause hides there);
* ``unreachable``   not verifiable here (another store, an engine or writer not installed), with why.

``gone`` and ``drifted`` fail verification; ``unreachable`` is reported, never counted as verified.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from conformance.findings import Finding, all_findings


@dataclass(slots=True)
class Verdict:
    """One entry's verification."""

    finding: Finding
    outcome: str  # reproduced | gone | drifted | unreachable
    detail: str = ""
    cells: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.outcome in ("reproduced", "unreachable")


def _covered(f: Finding, r: Mapping[str, Any], store: str) -> bool:
    return f.covers(r["case"], r["reader"], r.get("writer", "reference"), store)


def _explanation(r: Mapping[str, Any], store: str, registry: Sequence[Finding], versions: Mapping[str, str]) -> str | None:
    """What explains a cell under the registry as it is now: a finding id, ``other`` (a declared
    capability, a case not built), or None. The cell's own recorded explanation is not trusted: the
    registry may have changed since the run."""
    from conformance.findings import FINDING_STATUSES, explain

    if r["status"] not in FINDING_STATUSES:
        return None
    f = explain(r["case"], r["reader"], r["status"], registry, writer=r.get("writer", "reference"), store=store,
                text=f"{r.get('message', '')}\n{r.get('diff', '')}", engine_version=versions.get(r["reader"], ""))
    if f is not None:
        return f.id
    recorded = r.get("finding")
    return "other" if isinstance(recorded, Mapping) and recorded.get("source") != "registry" else None


def _judge_violation(f: Finding, checks: Sequence[Mapping[str, Any]], store: str, registry: Sequence[Finding],
                     versions: Mapping[str, str]) -> Verdict:
    """A writer-side ``violation`` entry against the validator's verdicts on the tables its writers built."""
    from conformance.writer_checks import explain_violation

    tables = [e for e in checks if f.covers(e["case"], "*", e["writer"], store)]
    if not tables:
        return Verdict(f, "unreachable", f"no table of {', '.join(f.writers)} was built and validated here")
    mine, drifted = [], []
    for e in tables:
        for v in e.get("violations", ()):
            if v.get("declared") or v["rule"] not in f.rules:
                continue
            now = explain_violation(e["case"], e["writer"], v["rule"], v["message"], store=store,
                                    writer_version=versions.get(e["writer"], ""), registry=registry)
            row = {"case": e["case"], "writer": e["writer"], "rule": v["rule"], "message": v["message"]}
            if now is not None and now.id == f.id:
                mine.append(row)
            elif now is None:
                drifted.append(row)
    if drifted:
        r = drifted[0]
        return Verdict(f, "drifted", f"{r['case']} written by {r['writer']}: {r['rule']} without explanation: "
                                     f"{r['message'][:200]}", drifted)
    if mine:
        return Verdict(f, "reproduced", f"{len(mine)} violation(s) on {len({r['case'] for r in mine})} table(s)", mine)
    seen = ", ".join(f"{k} {v}" for k, v in f.versions.items()) or "-"
    now = "; ".join(f"{w} {versions.get(w, '?')}" for w in f.writers)
    return Verdict(f, "gone", f"no table of {', '.join(f.writers)} shows {', '.join(f.rules)} matching {f.pattern!r} "
                              f"(seen with {seen}; now {now})")


def judge(findings: Iterable[Finding], results: Sequence[Mapping[str, Any]], store: str,
          engines: Mapping[str, Mapping[str, Any]] | None = None,
          writer_checks: Sequence[Mapping[str, Any]] = ()) -> list[Verdict]:
    """Each finding against the cells of one run (results.json rows) on ``store``; a writer-side
    ``violation`` entry against the run's ``writer_checks``.

    ``engines``: name -> the run's engine entry (``version``, ``unavailable``), to tell a finding
    whose engine did not run from one that no longer reproduces.
    """
    from conformance.findings import VIOLATION

    engines = engines or {}
    findings = list(findings)
    # the registry as it is now, with the judged entries (a caller may judge entries of its own);
    # each cell is explained once, whichever entries cover it
    registry = list(all_findings())
    registry += [x for x in findings if x not in registry]
    memo: dict[int, str | None] = {}

    def explained(r: Mapping[str, Any]) -> str | None:
        if id(r) not in memo:
            memo[id(r)] = _explanation(r, store, registry, versions)
        return memo[id(r)]

    versions = {name: str(e.get("version", "")) for name, e in engines.items()}
    out = []
    for f in findings:
        if not any(fnmatch.fnmatchcase(store, s) for s in f.stores):
            out.append(Verdict(f, "unreachable", f"shows on stores {', '.join(f.stores)}, this run is on {store}"))
            continue
        if f.status == VIOLATION:
            out.append(_judge_violation(f, writer_checks, store, registry, versions))
            continue
        cells = [r for r in results if _covered(f, r, store)]
        ran = [r for r in cells if r["status"] != "skip"]
        if not ran:
            why = "; ".join(sorted({r.get("message", "")[:120] for r in cells})) or "none of its cells ran here"
            missing = [e for e in f.engines if e != "*" and engines.get(e, {}).get("unavailable")]
            if missing:
                why = f"engine(s) {', '.join(missing)} not usable here"
            out.append(Verdict(f, "unreachable", why))
            continue
        now = [(r, explained(r)) for r in ran]
        mine = [r for r, why in now if why == f.id]
        drifted = [r for r, why in now if r["status"] == f.status and why is None]
        if drifted:
            r = drifted[0]
            out.append(Verdict(f, "drifted", f"{r['case']} read by {r['reader']} (writer {r.get('writer')}): "
                                             f"{r['status']} without explanation: {r.get('message', '')[:200]}", drifted))
        elif mine:
            out.append(Verdict(f, "reproduced", f"{len(mine)} cell(s)", mine))
        else:
            seen = ", ".join(sorted({f"{r['reader']} {r['status']}" for r in ran}))
            running = "; ".join(f"{e} {engines[e].get('version')}" for e in f.engines if e in engines)
            out.append(Verdict(f, "gone", f"no cell shows {f.status} matching {f.pattern!r} (now: {seen}; "
                                          f"running {running or 'the engines'}; seen with "
                                          f"{', '.join(f'{k} {v}' for k, v in f.versions.items()) or '-'})"))
    return out


def selection(findings: Sequence[Finding], store: str, available: Iterable[str]) -> tuple[list[str], list[str]]:
    """(case-id globs, engine names) a run needs to reach ``findings`` on ``store``."""
    names = set(available)
    patterns: list[str] = []
    wanted: set[str] = {"reference"}
    for f in findings:
        if not any(fnmatch.fnmatchcase(store, s) for s in f.stores):
            continue
        patterns.extend(p for p in f.cases if p not in patterns)
        # a violation is the validator's finding on the writer's tables: no reader is needed
        readers = set() if f.status == "violation" else names if f.engines == ("*",) else set(f.engines)
        writers = {n for n in names if any(fnmatch.fnmatchcase(n, w) for w in f.writers)}
        wanted |= (readers | writers) & names
    return patterns, sorted(wanted)


def cells_needed(findings: Sequence[Finding], store: str, available: Iterable[str]):
    """A case's (writer names, reader names) that ``findings`` cover on ``store``: the cells a verify run
    needs (``run(cells_of=...)``), so a glob entry for one reader does not replay its cases for every reader.
    A violation entry needs its writers' tables and no reader (the validator judges them): its writers
    count, its readers do not."""
    names = set(available)
    live = [f for f in findings if any(fnmatch.fnmatchcase(store, s) for s in f.stores)]

    def cells_of(case) -> tuple[set[str], set[str]]:
        writers: set[str] = set()
        readers: set[str] = set()
        for f in live:
            if not any(fnmatch.fnmatchcase(case.id, p) for p in f.cases):
                continue
            writers |= {n for n in names if any(fnmatch.fnmatchcase(n, w) for w in f.writers)}
            if f.status != "violation":
                readers |= names if f.engines == ("*",) else set(f.engines) & names
        return writers, readers

    return cells_of


def render(verdicts: Sequence[Verdict]) -> str:
    """One line per entry, grouped by outcome, and a summary line."""
    order = {"gone": 0, "drifted": 1, "unreachable": 2, "reproduced": 3}
    lines = []
    for v in sorted(verdicts, key=lambda v: (order[v.outcome], v.finding.id)):
        lines.append(f"{v.outcome:<11} {v.finding.id}: {v.detail}")
    counts = {k: sum(1 for v in verdicts if v.outcome == k) for k in order}
    lines.append("findings verify: " + ", ".join(f"{n} {k}" for k, n in counts.items())
                 + ("" if all(v.ok for v in verdicts) else "; FAILED (update or remove the entries named above)"))
    return "\n".join(lines)


def select(ids: Sequence[str] | None = None, fmt: str | None = None) -> list[Finding]:
    """The registry entries to verify: all, or those with the given ids, or one format's."""
    found = list(all_findings())
    if fmt:
        found = [f for f in found if all(c.startswith(f"{fmt}/") for c in f.cases)]
    if ids:
        unknown = set(ids) - {f.id for f in found}
        if unknown:
            raise KeyError(f"no finding with id {', '.join(sorted(unknown))}")
        found = [f for f in found if f.id in ids]
    return found

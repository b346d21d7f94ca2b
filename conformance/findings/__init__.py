"""The finding model: a reviewed explanation of a published engine's non-pass, and how cells find theirs.

Each entry says what the engine does (``cause``), which side the spec supports and why
(``spec``, citing rule ids of the format's rule catalog and the spec section), and the status the
engine's cells show (``status``: ``fail``, ``error`` or ``unsupported``). One entry covers every
(case, engine) cell the same cause explains; ``writers`` and ``stores`` narrow it to tables built
by some writers (Spark's INT96 timestamps) or to object stores (a reader's S3 path handling), and
``engines=("*",)`` with named writers is a writer-side cause (every reader's cell of a table that
writer built wrongly). The runner attaches the matching entry to each result dict (key
``finding``), so a report re-renders without the registry; the cross-engine suite turns a
registered non-pass into an xfail, an unregistered one into a failure ("triage it"), and an entry
whose cells now pass into a failure ("stale").

The entries live with their format (``conformance/formats/<format>/findings.py``, the plugin's
``findings``); this module joins them. Triage a new non-pass: reproduce it with the engine
directly, read the spec section, then add an entry there (or, if the engine is right, fix the case
and regenerate goldens). Entries never name the reference engine: a reference non-pass is a kit
bug, never an explained finding.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Literal, Mapping

FindingStatus = Literal["fail", "error", "unsupported", "violation"]
Upstream = Literal["engine bug", "engine limitation", "spec ambiguity"]
FINDING_STATUSES: tuple[str, ...] = ("fail", "error", "unsupported")  # the cell statuses a finding explains
# A writer-side finding about the tables a writer builds rather than a reader's cell: the reference
# validator flags its rules on that writer's tables (``conformance.writer_checks``).
VIOLATION = "violation"
_VERSION_NUMBER = re.compile(r"\d+(?:\.\d+)+", re.ASCII)
UPSTREAM_KINDS: tuple[str, ...] = ("engine bug", "engine limitation", "spec ambiguity")


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One cause explaining the non-pass cells of some engines on some cases."""

    id: str  # short stable slug, shown in reports
    engines: tuple[str, ...]  # the readers whose cells it explains; ("*",) = every reader (a writer-side cause)
    # (a ``violation`` entry is about no reader: engines=("*",), the writer in ``writers``)
    cases: tuple[str, ...]  # case ids, or fnmatch globs over case ids
    status: FindingStatus  # the status class the explained cells have, or ``violation`` (a rule the writer breaks)
    cause: str  # one sentence: what the engine does
    spec: str  # which side the spec supports, and why (quotes the spec where short)
    rules: tuple[str, ...]  # rule ids from conformance/rules/<format>.md
    section: str  # the PROTOCOL.md section(s) the spec side rests on
    upstream: Upstream | None = None
    versions: Mapping[str, str] = field(default_factory=dict)  # engine -> version(s) it was seen with
    # Which writers' tables it is about (fnmatch globs over writer names): a reader's cause usually
    # holds whoever wrote the table; a writer-side cause names the writer and every reader ("*").
    writers: tuple[str, ...] = ("*",)
    # Which stores it shows on (``local``, ``minio``, ``s3``): some causes are object-store only.
    stores: tuple[str, ...] = ("*",)
    # A regular expression the cell's message or diff must hold (re.search): the entry explains
    # this cause only, so a new error on a case that already has an error finding is still new.
    pattern: str = ""

    def matches(self, text: str) -> bool:
        """Whether a cell's message-and-diff text shows this cause."""
        return bool(self.pattern) and re.search(self.pattern, text, re.S) is not None

    def seen_with(self, engine: str, version: str) -> bool:
        """Whether ``engine`` at ``version`` (its ``version()``) is what this entry was seen with: every
        version number recorded for it appears in the version string. A newer engine makes the entry
        stale, not silently true."""
        recorded = self.versions.get(engine)
        if recorded is None:
            return self.engines == ("*",)  # a writer-side cause holds for every reader
        have = set(_VERSION_NUMBER.findall(version))
        return all(v in have for v in _VERSION_NUMBER.findall(recorded))

    @property
    def side(self) -> str:
        """``writer`` when the cause lies in how a writer built the table, else ``reader``."""
        return "writer" if self.engines == ("*",) else "reader"

    def covers(self, case_id: str, engine: str, writer: str = "reference", store: str = "local") -> bool:
        """Whether this entry is about ``engine`` reading ``case_id`` as written by ``writer`` on ``store``."""
        return (
            (engine in self.engines or self.engines == ("*",))
            and any(fnmatch.fnmatchcase(writer, w) for w in self.writers)
            and any(fnmatch.fnmatchcase(store, s) for s in self.stores)
            and any(fnmatch.fnmatchcase(case_id, p) for p in self.cases)
        )

    def to_dict(self) -> dict[str, Any]:
        """The shape attached to a result dict (results.json key ``finding``)."""
        return {
            "source": "registry",
            "id": self.id,
            "kind": self.upstream or "finding",
            "status": self.status,
            "cause": self.cause,
            "spec": self.spec,
            "rules": list(self.rules),
            "section": self.section,
            "side": self.side,
            "writers": list(self.writers),
            "stores": list(self.stores),
        }


@lru_cache(maxsize=None)
def all_findings() -> tuple[Finding, ...]:
    """Every registered finding of every format (the plugins' ``findings``), in format order."""
    from conformance import formats

    out: list[Finding] = []
    for plugin in formats.all_formats().values():
        out.extend(plugin.findings_entries())
    return tuple(out)


def finding(finding_id: str) -> Finding:
    """The registry entry with this id (KeyError naming the id when there is none)."""
    for f in all_findings():
        if f.id == finding_id:
            return f
    raise KeyError(f"no finding {finding_id!r} in the registry")


def deviation_reason(finding_id: str, engine: str) -> str:
    """The xfail reason of a suite's known deviation: the registry entry's cause, which must be
    about ``engine`` (suites keep no findings of their own)."""
    f = finding(finding_id)
    if engine not in f.engines:
        raise KeyError(f"finding {finding_id!r} is not about {engine}")
    return f"finding {f.id}: {f.cause}"


@lru_cache(maxsize=None)
def _by_engine() -> dict[str, tuple[Finding, ...]]:
    out: dict[str, list[Finding]] = {}
    for f in all_findings():
        if f.status == VIOLATION:
            continue  # about tables, never a reader's cell
        for engine in f.engines:
            out.setdefault(engine, []).append(f)
    return {k: tuple(v) for k, v in out.items()}


def findings_for(
    case_id: str, engine: str, registry: Iterable[Finding] | None = None, *, writer: str = "reference",
    store: str = "local",
) -> list[Finding]:
    """Every registered finding about ``engine`` reading ``case_id`` built by ``writer`` on ``store`` (any status)."""
    if registry is None:
        index = _by_engine()
        pool = index.get(engine, ()) + index.get("*", ())
    else:
        pool = tuple(f for f in registry if f.status != VIOLATION)
    return [f for f in pool if f.covers(case_id, engine, writer, store)]


def violation_findings(registry: Iterable[Finding] | None = None) -> tuple[Finding, ...]:
    """The writer-side entries about rules a writer's tables break (``status="violation"``)."""
    return tuple(f for f in (all_findings() if registry is None else registry) if f.status == VIOLATION)


def explain(
    case_id: str, engine: str, status: str, registry: Iterable[Finding] | None = None, *, writer: str = "reference",
    store: str = "local", text: str | None = None, engine_version: str | None = None,
) -> Finding | None:
    """The finding that explains ``engine``'s ``status`` on ``case_id`` (built by ``writer``, on ``store``), or None.

    With ``text`` (the cell's message and diff) the entry's pattern must match it; with
    ``engine_version`` the entry must have been seen with that version of the engine.
    """
    for f in findings_for(case_id, engine, registry, writer=writer, store=store):
        if f.status != status:
            continue
        if text is not None and not f.matches(text):
            continue
        if engine_version is not None and not f.seen_with(engine, engine_version):
            continue
        return f
    return None


def capability_explanation(reasons: str) -> dict[str, Any]:
    """The ``finding`` dict of an unsupported cell explained by the engine's declared capabilities."""
    return {
        "source": "capability",
        "kind": "declared capability",
        "status": "unsupported",
        "cause": reasons,
        "spec": "Not judged: the engine declares it does not implement what the case needs.",
        "rules": [],
    }


def not_built_explanation(message: str) -> dict[str, Any]:
    """The ``finding`` dict of a cell whose table the writer declared it cannot build."""
    return {
        "source": "build",
        "kind": "not built",
        "status": "unsupported",
        "cause": message,
        "spec": "Not judged: no reader saw this table, the writer cannot build it.",
        "rules": [],
    }

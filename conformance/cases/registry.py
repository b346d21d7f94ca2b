"""The case registry: every case of every format, checked once when first loaded.

A case is accounted for here or nowhere: the runner, the golden regeneration and the suites all
ask ``all_cases``. Each format's cases come from its plugin (``conformance.formats``). Loading
checks what would otherwise fail late and obscurely: ids are unique and well formed
(``<format>/<slug>``), every rule id a case cites exists in the format's catalog, and every case
declares at least one expectation.
"""

from __future__ import annotations

import re
from functools import lru_cache

from conformance.model import Case

_RULE_ROW = re.compile(r"^\|\s*([A-Z]+-[A-Z0-9]+-\d{3})\s*\|", re.MULTILINE)
_ID = re.compile(r"^[a-z0-9]+/[a-z0-9][a-z0-9-]*$")

class RegistryError(Exception):
    """The corpus itself is inconsistent (a bug in the case definitions)."""


@lru_cache(maxsize=None)
def rule_ids(fmt: str) -> frozenset[str]:
    """Rule ids catalogued for ``fmt`` (its plugin's rule catalog)."""
    from conformance import formats

    try:
        path = formats.get(fmt).catalog_path()
    except KeyError:
        return frozenset()
    if not path.exists():
        return frozenset()
    return frozenset(_RULE_ROW.findall(path.read_text(encoding="utf-8")))


def _declared_facts(fmt: str) -> frozenset[str]:
    """The fact keys a format's describe() reports (empty: the format declares none)."""
    from conformance import formats

    try:
        return frozenset(formats.get(fmt).facts)
    except KeyError:
        return frozenset()


def _check(cases: list[Case]) -> None:
    problems: list[str] = []
    seen: set[str] = set()
    for c in cases:
        if not _ID.match(c.id) or not c.id.startswith(c.format + "/"):
            problems.append(f"{c.id}: id must be '<format>/<slug>' with a lowercase slug")
        if c.id in seen:
            problems.append(f"{c.id}: duplicate id")
        seen.add(c.id)
        if not c.rules:
            problems.append(f"{c.id}: cites no rule")
        known = rule_ids(c.format)
        for r in c.rules:
            if r not in known:
                problems.append(f"{c.id}: rule {r} is not in the {c.format} rule catalog")
        for r in c.violates:
            if r not in known:
                problems.append(f"{c.id}: violates rule {r}, which is not in the {c.format} rule catalog")
        if not c.expected:
            problems.append(f"{c.id}: declares no expectation")
        declared = _declared_facts(c.format)
        for e in c.expected:
            unknown = sorted(set(e.metadata) - declared) if declared else []
            if unknown:
                problems.append(f"{c.id}: metadata keys {unknown} are not facts the {c.format} format declares")
            if (e.rows is None) == (e.error is None):
                problems.append(f"{c.id}: each expectation needs exactly one of rows / error")
            if sum(x is not None for x in (e.version, e.timestamp, e.ref)) > 1:
                problems.append(f"{c.id}: an expectation reads at one of a version, a timestamp or a ref")
    if problems:
        raise RegistryError("case registry is inconsistent:\n  " + "\n  ".join(problems))


@lru_cache(maxsize=None)
def _load() -> tuple[Case, ...]:
    from conformance import formats as registry

    out: list[Case] = []
    for plugin in registry.all_formats().values():
        out.extend(plugin.all_cases())
    _check(out)
    return tuple(out)


def formats() -> list[str]:
    """Formats that have a corpus."""
    return sorted({c.format for c in _load()})


def all_cases(format: str | None = None) -> list[Case]:  # noqa: A002 - the contract's name
    """Every registered case, or those of one format, in corpus order."""
    cases = _load()
    return [c for c in cases if format is None or c.format == format]


def get_case(case_id: str) -> Case:
    """The case with this id; ``KeyError`` naming close matches otherwise."""
    for c in _load():
        if c.id == case_id:
            return c
    close = [c.id for c in _load() if case_id.split("/")[-1] in c.id]
    raise KeyError(f"no case {case_id!r}" + (f"; did you mean {', '.join(close[:5])}?" if close else ""))

"""The rule catalogs as data: id, rule, section, binds, strength.

A catalog is ``conformance/rules/<format>.md`` (the catalogs of the specs the kit covers, also of
formats whose packages have not landed yet) or the catalog a format plugin names.

Each catalog is Markdown with one or more tables whose header row starts with ``ID``; the other
columns are found by their header names, which differ a little between catalogs
("Rule (paraphrase)" / "Requirement (paraphrase)", "Binds" / "Side", "Str." / "Strength").
Appendix tables (no ``ID`` header) are ignored.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

RULES_DIR = os.path.join(os.path.dirname(__file__), "rules")

# header name (lower-cased, trimmed) -> field
_COLUMNS = {
    "id": "id",
    "rule (paraphrase)": "rule",
    "requirement (paraphrase)": "rule",
    "rule": "rule",
    "requirement": "rule",
    "spec section": "section",
    "doc section / source": "section",
    "section": "section",
    "binds": "binds",
    "side": "binds",
    "str.": "strength",
    "strength": "strength",
}
_ID = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-\d+[a-z]?$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One catalogued normative statement."""

    id: str
    format: str
    rule: str
    section: str
    binds: str
    strength: str  # as written: MUST, MUST NOT, SHOULD, MAY, required-field, ...

    @property
    def is_must(self) -> bool:
        """MUST, MUST NOT and "required" rules (the ones a conformant implementation cannot skip)."""
        s = self.strength.upper()
        return s.startswith("MUST") or s.startswith("REQUIRED")


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    # A literal pipe inside a cell is written "\|" in Markdown.
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", body)]


def parse_catalog(text: str, fmt: str) -> list[Rule]:
    """Every rule row of a catalog's Markdown text, in order."""
    rules: list[Rule] = []
    mapping: dict[int, str] | None = None
    for line in text.splitlines():
        if not line.lstrip().startswith("|"):
            mapping = None
            continue
        cells = _cells(line)
        if cells and cells[0].strip().lower() == "id":
            mapping = {i: _COLUMNS[c.lower()] for i, c in enumerate(cells) if c.lower() in _COLUMNS}
            continue
        if mapping is None or all(set(c) <= set("-: ") for c in cells):
            continue
        values = {name: cells[i] for i, name in mapping.items() if i < len(cells)}
        rid = values.get("id", "").strip("`* ")
        if not _ID.match(rid):
            continue
        rules.append(
            Rule(
                id=rid,
                format=fmt,
                rule=values.get("rule", ""),
                section=values.get("section", ""),
                binds=values.get("binds", ""),
                strength=values.get("strength", ""),
            )
        )
    return rules


@lru_cache(maxsize=None)
def catalogs() -> dict[str, str]:
    """format -> catalog path: the built-in catalogs, then those the format plugins name."""
    from conformance import formats

    out = {}
    for name in sorted(os.listdir(RULES_DIR)):
        if name.endswith(".md") and name != "README.md":
            out[name[: -len(".md")]] = os.path.join(RULES_DIR, name)
    for fmt, plugin in formats.all_formats().items():
        out[fmt] = str(plugin.catalog_path())
    return out


def catalog_formats() -> list[str]:
    """The formats that have a rule catalog."""
    return list(catalogs())


@lru_cache(maxsize=None)
def load_rules(fmt: str) -> tuple[Rule, ...]:
    """The catalog of one format (empty if it has none)."""
    path = catalogs().get(fmt)
    if path is None or not os.path.exists(path):
        return ()
    with open(path, encoding="utf-8") as fh:
        return tuple(parse_catalog(fh.read(), fmt))


def all_rules() -> dict[str, Rule]:
    """Every catalogued rule of every format by id (ids are unique across catalogs)."""
    out: dict[str, Rule] = {}
    for fmt in catalogs():
        for rule in load_rules(fmt):
            out.setdefault(rule.id, rule)
    return out


def format_of(rule_id: str) -> str | None:
    """The format whose catalog holds ``rule_id``, or None."""
    rule = all_rules().get(rule_id)
    return rule.format if rule else None

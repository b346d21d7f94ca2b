"""The format registry: every table format the kit knows, each declared by its own package.

A format is two packages: ``reference_impl/<format>/`` (the reference implementation, declaring
``FORMAT`` for ``reference_impl.formats``) and ``conformance/formats/<format>/`` declaring a
``FormatPlugin`` named ``FORMAT``: its cases, findings, facts, the engines that read only it, the
drivers it gives multi-format engines (DuckDB, Polars, Daft, Spark, the reference), and its
benchmark. The shared harness (model, runner, compare, golden, report, CLI, coverage, suites)
asks this registry and never names a format.

Built-in formats are the subpackages of this package. A third party adds a format without
forking the kit through the entry-point group ``lakeconf.formats``::

    [project.entry-points."lakeconf.formats"]
    myformat = "my_package.lakeconf_format:FORMAT"

whose object is a ``FormatPlugin`` (its ``reference_format`` names the reference side the same
way, ``"module:attribute"`` of a ``reference_impl.formats.Format``).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata as _metadata
from pathlib import Path
from typing import Any, Literal, Mapping

ENTRY_POINT_GROUP = "lakeconf.formats"
RULES_DIR = Path(__file__).resolve().parents[1] / "rules"

# How ``describe`` facts are compared with a case's ``Expected.metadata``: ``exact`` (equal),
# ``subset`` (the expectation lists what must be there; an engine may report more: a map's
# entries or a list's items), ``unordered`` (equal as multisets: lists of records in no order).
Comparison = Literal["exact", "subset", "unordered"]


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatPlugin:
    """One table format as the harness sees it.

    Module references are ``"module"`` or ``"module:attribute"`` strings, imported on first use
    so that listing formats never imports an engine.
    """

    name: str  # the id prefix of its cases and the value of TableRef.format: "myformat"
    title: str  # "My Format"
    cases: str  # "module:function" returning the format's cases
    findings: str | None = None  # "module:FINDINGS": its reviewed findings
    reference_format: str | None = None  # "module:FORMAT": the reference_impl.formats.Format
    # Every key the format's describe() reports (its facts), and how each is compared with a case's
    # Expected.metadata; the case registry refuses an expectation naming a key not declared here.
    facts: Mapping[str, Comparison] = field(default_factory=dict)
    engines: Mapping[str, str] = field(default_factory=dict)  # engine name -> "module:Class" (engines of this format only)
    drivers: Mapping[str, str] = field(default_factory=dict)  # multi-format engine family -> driver "module[:attr]"
    bench: str | None = None  # module with main(argv) -> exit code (``lakeconf bench <format>``)
    hostile: str | None = None  # "module:SPEC": a conformance.hostile.HostileSpec (file kinds, seed cases)
    rules_catalog: str | None = None  # path of the rule catalog (default: conformance/rules/<name>.md)
    # What a version number means for this format (``lakeconf read --at``, the report, the README).
    versions: str = "the format's own version numbers"

    def load(self, which: str) -> Any:
        """Import what field ``which`` names (a module, or ``module:attribute``)."""
        spec = getattr(self, which)
        if spec is None:
            raise LookupError(f"format {self.name} declares no {which}")
        module, _, attr = spec.partition(":")
        obj = importlib.import_module(module)
        return getattr(obj, attr) if attr else obj

    def all_cases(self) -> list[Any]:
        """The format's cases (unchecked; ``conformance.cases.registry`` checks them)."""
        return list(self.load("cases")())

    def findings_entries(self) -> tuple[Any, ...]:
        """The format's registered findings."""
        return tuple(self.load("findings")) if self.findings else ()

    def catalog_path(self) -> Path:
        """Where the format's rule catalog is."""
        return Path(self.rules_catalog) if self.rules_catalog else RULES_DIR / f"{self.name}.md"

    def comparison(self, key: str) -> Comparison:
        """How fact ``key`` is compared."""
        return self.facts.get(key, "exact")


class FormatRegistryError(Exception):
    """A format plugin is malformed or two claim one name (a bug in a format package)."""


def _builtin() -> list[FormatPlugin]:
    out = []
    package = importlib.import_module(__name__)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        plugin = getattr(module, "FORMAT", None)
        if isinstance(plugin, FormatPlugin):
            out.append(plugin)
    return out


def _entry_points() -> list[FormatPlugin]:
    out = []
    for ep in _metadata.entry_points(group=ENTRY_POINT_GROUP):
        plugin = ep.load()
        if not isinstance(plugin, FormatPlugin):
            raise FormatRegistryError(f"entry point {ep.name} = {ep.value} is {type(plugin).__name__}, not a FormatPlugin")
        out.append(plugin)
    return out


_extra: list[FormatPlugin] = []


@lru_cache(maxsize=None)
def _all() -> tuple[FormatPlugin, ...]:
    plugins = _builtin() + _entry_points() + list(_extra)
    seen: dict[str, FormatPlugin] = {}
    for p in plugins:
        if p.name in seen and seen[p.name] is not p:
            raise FormatRegistryError(f"two formats are named {p.name!r}")
        seen[p.name] = p
    return tuple(seen.values())


def all_formats() -> dict[str, FormatPlugin]:
    """Every registered format by name: built-in ones (alphabetically), then entry points."""
    return {p.name: p for p in _all()}


def names() -> list[str]:
    """The registered format names."""
    return [p.name for p in _all()]


def get(name: str) -> FormatPlugin:
    """The plugin of format ``name``; ``KeyError`` naming the known ones otherwise."""
    for p in _all():
        if p.name == name:
            return p
    raise KeyError(f"unknown format {name!r} (known: {', '.join(names())})")


def register(plugin: FormatPlugin) -> None:
    """Add a format at run time (tests, notebooks); ``unregister`` takes it back."""
    _extra.append(plugin)
    _changed()


def unregister(plugin: FormatPlugin) -> None:
    """Remove a format added with ``register``."""
    _extra.remove(plugin)
    _changed()


def _changed() -> None:
    """Forget every cache built from the registry (cases, findings, rule catalogs, formats)."""
    _all.cache_clear()
    for module, names_ in (
        ("conformance.cases.registry", ("_load", "rule_ids")),
        ("conformance.findings", ("all_findings", "_by_engine")),
        ("conformance.rules", ("load_rules", "catalogs")),
        ("reference_impl.formats", ("_all",)),
    ):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        for name in names_:
            fn = getattr(mod, name, None)
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()

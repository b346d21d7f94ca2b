"""The one adapter interface every engine sits behind; the reference is just another engine.

An adapter declares what it can do (``Capabilities``); the harness reports a case outside those
capabilities as *unsupported* with the reason, never as a pass. ``read`` returns the table's
logical rows as Arrow; ``write`` builds a case's table from writer-neutral steps.

An engine that reads several formats (DuckDB, Polars, Daft, Spark, the reference) is a
``MultiFormatEngine``: the engine-wide part (a connection, a session, error translation) lives in
its adapter, and each format's part is a *driver* that the format package provides
(``conformance/formats/<format>/drivers/<engine>.py``, registered in the format's plugin), so the
adapter itself names no format. A driver is a module (or object) with these callables, each taking
the engine instance first:

* ``support(engine) -> FormatSupport``: what the engine does with the format (required);
* ``available(engine) -> str | None``: why the format is not usable here (a missing extension);
* ``read(engine, table, *, at, timestamp, ref, columns) -> pyarrow.Table`` (required);
* ``describe(engine, table, *, at, timestamp, ref) -> dict | None``;
* ``write(engine, table, steps) -> None``.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pyarrow as pa

from conformance.engines.errors import ErrorPatterns, refusals
from conformance.model import Step, TableRef

# Harness feature names (next to each format's own feature names in ``read_features``).
TIME_TRAVEL = "time-travel"  # read an older version by number
TIMESTAMP_TRAVEL = "timestamp-travel"  # read the version current at a timestamp
REF_TRAVEL = "ref-travel"  # read a named branch or tag


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What an engine claims, per format.

    ``read``/``write``: formats it reads / writes. ``read_features``: per format, the feature
    names (the format's own feature names, or harness names such as ``time-travel``) it reads;
    ``None`` means "every feature" (the engine itself says when it cannot). ``write_steps``: per
    format, the step class names it runs. ``unsupported``: per format, per feature, why it is
    missing (shown in the report); a feature listed there is missing whatever ``read_features``
    says, so an engine can claim "everything but these".
    """

    read: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()
    read_features: Mapping[str, frozenset[str] | None] = field(default_factory=dict)
    write_steps: Mapping[str, frozenset[str]] = field(default_factory=dict)
    unsupported: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def missing_read_features(self, fmt: str, needed: Sequence[str]) -> list[str]:
        """The features of ``needed`` this engine does not read for ``fmt``."""
        have = self.read_features.get(fmt)
        gaps = self.unsupported.get(fmt, {})
        return [f for f in needed if f in gaps or (have is not None and f not in have)]

    def reason(self, fmt: str, feature: str) -> str:
        """Why ``feature`` of ``fmt`` is missing (a generic sentence when the engine gave none)."""
        return self.unsupported.get(fmt, {}).get(feature, f"does not declare the feature {feature!r}")


class Engine(ABC):
    """An engine adapter."""

    name: str
    # How many jobs (builds, reads) the harness may give this engine at once. One by default: an
    # adapter need not be thread-safe. An engine that runs each job in one of several independent
    # processes (``isolation.RemoteEngine`` with ``workers``) can take as many as it has; an adapter
    # that serialises what must not overlap itself may take more (the Spark adapter: reads side by
    # side, writes alone), and a worker then answers that many of its calls at once.
    concurrency: int = 1

    @abstractmethod
    def version(self) -> str:
        """The engine's version string (library version, or the command's own answer)."""

    @abstractmethod
    def capabilities(self) -> Capabilities:
        """What the engine reads and writes."""

    def available(self) -> str | None:
        """``None`` when usable here, else the reason (missing package, no JVM, ...)."""
        return None

    def roles(self) -> list[str]:
        """``reader`` and/or ``writer``."""
        caps = self.capabilities()
        return [r for r, fmts in (("reader", caps.read), ("writer", caps.write)) if fmts]

    @abstractmethod
    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        """The table's logical rows at version ``at`` / as of ``timestamp`` / at the named branch
        or tag ``ref`` (latest if none). The harness passes ``ref`` only when a case reads a ref,
        and only to engines that declare ``ref-travel`` (or declare every feature)."""

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        """Build a table by running ``steps`` in order (one or more commits each)."""
        from reference_impl.errors import Unsupported

        raise Unsupported(f"{self.name} does not write tables")

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        """The format's own facts at a version (protocol, partitioning, ...), or ``None`` if the
        engine cannot tell. Keys are those the format declares (its plugin's ``facts``,
        the keys of the corpus' ``Expected.metadata``); the harness checks only keys both sides have."""
        return None

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        """Python source defining ``read()``, which reads ``table`` at version ``at`` with this
        engine's public API only and returns a ``pyarrow.Table`` (``lakeconf findings export``
        puts it in a script a maintainer runs without the kit); the table directory is the
        script's ``TABLE``. ``None`` when the engine has no such snippet."""
        return None

    def start(self) -> None:
        """Pay one-time start-up costs (a JVM, a session) before the first cell; the harness times it."""

    def close(self) -> None:
        """Release sessions, connections, JVMs."""


# ----------------------------------------------------------------------------------------------
# Engines of several formats: one driver per format
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatSupport:
    """What an engine does with one format (a driver's answer).

    ``reads``: whether it reads the format. ``read_features``: the features it reads (``None``:
    every feature but ``gaps``). ``write_steps``: the step class names it writes with (``None``:
    not a writer of the format). ``gaps``: feature -> why it is missing.
    """

    reads: bool = True
    read_features: frozenset[str] | None = None
    write_steps: frozenset[str] | None = None
    gaps: Mapping[str, str] = field(default_factory=dict)


def _load_driver(spec: Any) -> Any:
    if not isinstance(spec, str):
        return spec
    module, _, attr = spec.partition(":")
    obj = importlib.import_module(module)
    return getattr(obj, attr) if attr else obj


class MultiFormatEngine(Engine):
    """An engine whose per-format work is done by drivers the format packages register.

    ``family`` names the drivers to look for (``drivers["duckdb"]`` in each format's plugin); it
    defaults to ``name``. A format whose driver cannot be imported, or says it is unavailable, is
    simply not offered (``lakeconf engines`` shows why).
    """

    family: str | None = None

    def __init__(self) -> None:
        self._drivers: dict[str, Any] | None = None
        self._driver_problems: dict[str, str] = {}

    # -- drivers -------------------------------------------------------------------------------

    def drivers(self) -> dict[str, Any]:
        """format -> driver, for every registered format with a usable driver for this engine."""
        if self._drivers is None:
            from conformance import formats

            found: dict[str, Any] = {}
            for name, plugin in formats.all_formats().items():
                spec = plugin.drivers.get(self.family or self.name)
                if spec is None:
                    continue
                try:
                    driver = _load_driver(spec)
                    reason = driver.available(self) if hasattr(driver, "available") else None
                except Exception as exc:  # noqa: BLE001 - one broken driver must not hide the others
                    reason = f"driver {spec} failed to load: {type(exc).__name__}: {exc}"
                if reason:
                    self._driver_problems[name] = reason
                else:
                    found[name] = driver
            self._drivers = found
        return self._drivers

    def library_versions(self) -> str:
        """`` (lib 1.2.3, ...)`` for the libraries the usable drivers read through (their ``LIBRARIES``):
        an engine that plans through another library behaves as that library's version does."""
        from conformance.engines._common import package_version

        libs = sorted({lib for d in self.drivers().values() for lib in getattr(d, "LIBRARIES", ())})
        return f" ({', '.join(f'{lib} {package_version(lib)}' for lib in libs)})" if libs else ""

    def driver_problems(self) -> dict[str, str]:
        """format -> why this engine does not offer it here (missing extension, package, ...)."""
        self.drivers()
        return dict(self._driver_problems)

    def driver(self, fmt: str) -> Any:
        """The driver of ``fmt``; ``Unsupported`` naming why when there is none."""
        from reference_impl.errors import Unsupported

        found = self.drivers().get(fmt)
        if found is None:
            why = self._driver_problems.get(fmt, "no driver registered for it")
            raise Unsupported(f"{self.name} does not read {fmt} tables here: {why}", feature=fmt)
        return found

    errors: ErrorPatterns = ErrorPatterns()  # what the engine itself says, whatever the format

    def errors_of(self, driver: Any) -> ErrorPatterns:
        """How this engine's refusals read for one driver's format (the driver's ``ERRORS``)."""
        return self.errors | getattr(driver, "ERRORS", ErrorPatterns())

    def available(self) -> str | None:
        if not self.drivers():
            problems = "; ".join(f"{f}: {r}" for f, r in self._driver_problems.items())
            return f"no format usable here ({problems or 'no format registers a driver for it'})"
        return None

    def capabilities(self) -> Capabilities:
        read, write, features, steps, gaps = set(), set(), {}, {}, {}
        for fmt, driver in self.drivers().items():
            s: FormatSupport = driver.support(self)
            if s.reads:
                read.add(fmt)
                features[fmt] = s.read_features
            if s.write_steps is not None:
                write.add(fmt)
                steps[fmt] = frozenset(s.write_steps)
            if s.gaps:
                gaps[fmt] = dict(s.gaps)
        return Capabilities(read=frozenset(read), write=frozenset(write), read_features=features,
                            write_steps=steps, unsupported=gaps)

    # -- dispatch ------------------------------------------------------------------------------

    def read(
        self,
        table: TableRef,
        *,
        at: int | None = None,
        timestamp: str | None = None,
        ref: str | None = None,
        columns: Sequence[str] | None = None,
    ) -> pa.Table:
        driver = self.driver(table.format)
        with refusals(self.errors_of(driver), table.uri):
            return driver.read(self, table, at=at, timestamp=timestamp, ref=ref, columns=columns)

    def describe(
        self, table: TableRef, *, at: int | None = None, timestamp: str | None = None, ref: str | None = None
    ) -> dict | None:
        driver = self.driver(table.format)
        if not hasattr(driver, "describe"):
            return None
        with refusals(self.errors_of(driver), table.uri):
            return driver.describe(self, table, at=at, timestamp=timestamp, ref=ref)

    def reproduction(self, table: TableRef, at: int | None = None) -> str | None:
        driver = self.driver(table.format)
        return driver.reproduce(self, table, at) if hasattr(driver, "reproduce") else None

    def write(self, table: TableRef, steps: Sequence[Step]) -> None:
        from reference_impl.errors import Unsupported

        driver = self.driver(table.format)
        if not hasattr(driver, "write"):
            raise Unsupported(f"{self.name} does not write {table.format} tables")
        driver.write(self, table, steps)

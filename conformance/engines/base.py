"""The one adapter interface every engine sits behind; the reference is just another engine.

An adapter declares what it can do (``Capabilities``); the harness reports a case outside those
capabilities as *unsupported* with the reason, never as a pass. ``read`` returns the table's
logical rows as Arrow; ``write`` builds a case's table from writer-neutral steps.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Sequence

import pyarrow as pa

from conformance.model import Step, TableRef

# Harness feature names (next to each format's own table-feature names in ``read_features``).
TIME_TRAVEL = "time-travel"  # read an older version by number
TIMESTAMP_TRAVEL = "timestamp-travel"  # read the version current at a timestamp
REF_TRAVEL = "ref-travel"  # read a named branch or tag


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What an engine claims, per format.

    ``read``/``write``: formats it reads / writes. ``read_features``: per format, the feature
    names (the spec's table-feature names, or harness names such as ``time-travel``) it reads;
    ``None`` means "every feature" (the engine itself says when it cannot).
    ``unsupported_reasons``: per feature, why it is missing (shown in the report).
    """

    read: frozenset[str] = frozenset()
    write: frozenset[str] = frozenset()
    read_features: dict[str, frozenset[str] | None] = field(default_factory=dict)
    write_steps: dict[str, frozenset[str]] = field(default_factory=dict)  # step class names
    unsupported_reasons: dict[str, str] = field(default_factory=dict)

    def missing_read_features(self, fmt: str, needed: Sequence[str]) -> list[str]:
        """The features of ``needed`` this engine does not read for ``fmt``."""
        # A feature with an unsupported reason is missing whatever ``read_features`` says, so an
        # engine can claim "everything but these" (None + reasons) without listing every name.
        have = self.read_features.get(fmt)
        return [f for f in needed if f in self.unsupported_reasons or (have is not None and f not in have)]

    def reason(self, feature: str) -> str:
        """Why ``feature`` is missing (a generic sentence when the engine gave none)."""
        return self.unsupported_reasons.get(feature, f"does not declare the feature {feature!r}")


class Engine(ABC):
    """An engine adapter."""

    name: str

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
        engine cannot tell. Keys are those of the case corpus' ``Expected.metadata`` (Delta:
        ``conformance/engines/delta_facts.py``, Iceberg: ``iceberg_facts.py``); the harness checks
        only keys both sides have."""
        return None

    def start(self) -> None:
        """Pay one-time start-up costs (a JVM, a session) before the first cell; the harness times it."""

    def close(self) -> None:
        """Release sessions, connections, JVMs."""

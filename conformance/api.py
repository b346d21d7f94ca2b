"""Everything a vendor imports to plug an engine (or a whole table format) into the kit.

An engine adapter subclasses ``Engine``, declares ``Capabilities`` and raises the kit's error
kinds: ``Unsupported`` for a valid table that needs a feature the engine lacks, ``InvalidTable``
for a table the spec says is broken, ``Internal`` for the engine's own failure; any other exception
is an engine error. See ``conformance/engines/VENDORS.md`` for the two ways to register one (a
Python entry point, or a command), and ``conformance.formats`` for adding a format.
"""

from __future__ import annotations

from conformance.engines.base import (
    REF_TRAVEL,
    TIME_TRAVEL,
    TIMESTAMP_TRAVEL,
    Capabilities,
    Engine,
    FormatSupport,
    MultiFormatEngine,
)
from conformance.formats import FormatPlugin
from conformance.model import Step, TableRef
from reference_impl.errors import Internal, InvalidTable, LakeconfError, Unsupported

__all__ = [
    "Engine",
    "Capabilities",
    "MultiFormatEngine",
    "FormatSupport",
    "FormatPlugin",
    "TableRef",
    "Step",
    "LakeconfError",
    "InvalidTable",
    "Unsupported",
    "Internal",
    "TIME_TRAVEL",
    "TIMESTAMP_TRAVEL",
    "REF_TRAVEL",
]

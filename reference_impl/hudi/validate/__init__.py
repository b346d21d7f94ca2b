"""Table validation: name every rule of the Hudi spec (rules/hudi.md) that a table breaks.

``validate_table(location)`` reads the table once (``context.Context``: ``hoodie.properties``, every
file of the active timeline and what it holds, the archive when small, the partition metafiles, and
a summary of every base and log file) and runs every registered check, a named pure function over
that context. A table that is merely invalid never makes it raise: each finding is a
``Violation(rule, message, where)``, ``where`` being the root-relative file and the spot in it; a
file the strict parsers refuse is a violation at that file. A location that holds no Hudi table,
or whose ``hoodie.properties`` cannot be read, gives exactly one violation. A table of a real Hudi
version this kit does not read (0-5, 7) is ``Unsupported``; a check that crashes is the kit's bug
(``Internal``, from the runner).

``CHECKS`` maps each rule id to the check function that can report it, so the harness can count
which rules have an executable check.

Rules without a check, each for a reason (every other rule of rules/hudi.md has one, ``CHECKS``):

* HUDI-LAYOUT-007: the record-key property is optional (MAY); nothing in files can break it.
* HUDI-TIMELINE-002, -014, -015, -019, -020: how readers derive states, order instants and choose what
  is visible; the files they work from are checked under the rules that shape them.
* HUDI-TIMELINE-004: atomic publication is a property of the write, not of the bytes it leaves.
* HUDI-TIMELINE-024: nothing records which leftovers a failed instant had once it is archived.
* HUDI-TIMELINE-026: retention settings (MAY) leave no checkable trace.
* HUDI-FILE-002: one key in two file groups is legal after ``insert`` with duplicates allowed, and the
  index that would decide is not in the files.
* HUDI-FILE-003, -009 .. -016: how readers build, choose and merge slices (the names and instants they
  use are checked under HUDI-FILE-001/004/005/006/007/008 and HUDI-TIMELINE-001).
* HUDI-LOG-007: a reader's duty to skip corrupt ranges; the validator reports those ranges under the
  framing rule they break (HUDI-LOG-002 block size, HUDI-LOG-006 total length and next magic).
* HUDI-LOG-013: byte order shows only through the framing checks.
* HUDI-META-006, HUDI-TABLE-003 .. -006: reader behaviour (virtual keys, query types, merge laws).
* HUDI-EVOL-001 .. -008, -014 .. -018, HUDI-PROMO-*, the other HUDI-EVOLR-* and HUDI-CHG-* rules: what
  writers and DDL must accept or refuse; a refused write or ALTER leaves no file, so it cannot be told from
  one never tried. What does leave a trace is checked: between successive commit schemas no column is
  demoted (HUDI-EVOL-011/012/013) and none is added non-nullable without a default (-009/010)
  (``checks_schema``); a schema-on-read table's InternalSchema history parses, numbers columns uniquely,
  agrees with the commits' latest_schema and covers every base file (HUDI-EVOLR-017, -003), and between its
  versions shows no change the DDL refuses (HUDI-EVOLR-006/009/011/013/015, the MUST NOT cells of HUDI-CHG)
  (``checks_evolution``).
"""

from __future__ import annotations

from typing import Any

from reference_impl.common.validation import Violation
from reference_impl.errors import InvalidTable
from reference_impl.hudi.validate import checks_evolution, checks_files, checks_properties, checks_schema, checks_timeline
from reference_impl.hudi.validate import checks_parsed  # relays last: CHECKS prefers dedicated checks
from reference_impl.hudi.validate.context import Context, open_table
from reference_impl.hudi.validate.registry import CHECK_FUNCTIONS, CHECKS, REGISTRY

__all__ = ["Violation", "validate_table", "run_checks", "CHECKS", "CHECK_FUNCTIONS", "RULES_CHECKED"]

RULES_CHECKED: frozenset[str] = frozenset(CHECKS)
# The modules whose import registers the checks, in run order (the parse relays last).
CHECK_MODULES = (checks_files, checks_properties, checks_schema, checks_evolution, checks_timeline, checks_parsed)


def validate_table(location: Any) -> list[Violation]:
    """Every rule violation of the Hudi table at ``location`` (path, URI or Storage), in a stable order."""
    try:
        ctx = open_table(location)
        if ctx.fatal is not None:
            return list(checks_properties.table_root(ctx))
        return run_checks(ctx)
    except InvalidTable as exc:
        # The table cannot be examined at all (an unlistable directory, a root that is not one): one violation.
        # Unsupported (a real Hudi version the kit does not read) is no fault of the table and passes through.
        return [Violation(exc.rule or "HUDI-LAYOUT-001", f"table cannot be read: {exc.message}", exc.path or "")]


def run_checks(ctx: Context) -> list[Violation]:
    """Run every registered check over a context."""
    return REGISTRY.run(ctx)

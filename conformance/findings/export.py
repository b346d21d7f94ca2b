"""``lakeconf findings export DIR``: one self-contained folder per engine bug, to file upstream.

Each folder holds what a maintainer needs without this kit:

* ``table/``         the case's table as the reference writer builds it;
* ``expected-*.parquet`` the rows the spec gives at each version the case checks;
* ``reproduce.py``   reads the table with the engine's public API only (the adapter's
                     ``reproduction`` snippet), compares with the expected rows or the expected
                     refusal, prints the divergence, exits 1 while the engine diverges;
* ``README.md``      the cause, the spec clause with its section and rule ids, the engine versions
                     it was seen with, and how to run the script.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from conformance.findings import Finding
from conformance.model import Case, Expected, TableRef

_SCRIPT_HEAD = '''#!/usr/bin/env python3
"""{title}

{cause}

Spec: {spec}
Rules: {rules} ({section})

Run: python reproduce.py  (needs pyarrow and {engine}; exit 1 while the engine diverges)
"""

import os
import sys

import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "table")
'''

_SCRIPT_TAIL = '''

def rows(table):
    """The rows as sorted text: order is not part of a table's content."""
    return sorted(repr(sorted(r.items())) for r in table.to_pylist())


diverged = False
for label, read, expected, refusal in CHECKS:
    try:
        got = read()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # a Rust panic is a BaseException
        if refusal and RAISING_IS_A_REFUSAL:
            print(f"{label}: refused, as the spec expects ({refusal}): {type(exc).__name__}: {exc}")
        elif refusal:
            diverged = True
            print(f"{label}: DIVERGES: raised {type(exc).__name__}: {exc}\\n  the spec expects the table refused "
                  f"({refusal}); this failure is no such refusal (see README.md)")
        else:
            diverged = True
            print(f"{label}: DIVERGES: raised {type(exc).__name__}: {exc}")
        continue
    if refusal:
        diverged = True
        print(f"{label}: DIVERGES: returned {got.num_rows} row(s); a correct reader refuses this table ({refusal})")
        continue
    want = pq.read_table(os.path.join(HERE, expected))
    if rows(got) == rows(want):
        print(f"{label}: agrees with the spec ({want.num_rows} row(s))")
        continue
    diverged = True
    got_rows, want_rows = rows(got), rows(want)
    print(f"{label}: DIVERGES")
    for r in sorted(set(want_rows) - set(got_rows)):
        print(f"  expected, missing: {r}")
    for r in sorted(set(got_rows) - set(want_rows)):
        print(f"  returned, not expected: {r}")
sys.exit(1 if diverged else 0)
'''


@dataclass(slots=True)
class Exported:
    """What happened to one finding."""

    finding: str
    folder: str | None
    note: str


def _case_for(f: Finding, cases: Sequence[Case]) -> Case | None:
    """The first case of the finding that the reference writer builds."""
    if not any(fnmatch.fnmatchcase("reference", w) for w in f.writers):
        return None
    for c in cases:
        if any(fnmatch.fnmatchcase(c.id, p) for p in f.cases) and (c.writers is None or "reference" in c.writers):
            return c
    return None


def _checks(case: Case) -> list[tuple[int, Expected]]:
    """The expectations a script can check: by version (timestamps and refs need the kit's resolution)."""
    return [(i, e) for i, e in enumerate(case.expected) if e.timestamp is None and e.ref is None]


def _label(e: Expected) -> str:
    return "latest version" if e.version is None else f"version {e.version}"


def export_one(f: Finding, case: Case, engine: Any, folder: str) -> str:
    """Build the case's table under ``folder`` and write the script and README; returns a note."""
    from conformance.engines.reference import ReferenceEngine
    import pyarrow.parquet as pq

    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    table = TableRef(format=case.format, uri=os.path.join(folder, "table"))
    ReferenceEngine().write(table, case.steps)
    snippets, checks = [], []
    for i, e in _checks(case):
        code = engine.reproduction(table, e.version)
        if code is None:
            raise LookupError(f"{engine.name} has no reproduction snippet for {case.format}")
        snippets.append(code.replace("def read():", f"def read_{i}():", 1))
        expected = None
        if e.error is None and e.rows is not None:
            expected = f"expected-{i}.parquet"
            pq.write_table(e.rows, os.path.join(folder, expected))
        elif e.error is None:
            continue  # metadata only: nothing a row read can show
        checks.append(f"    ({_label(e)!r}, read_{i}, {expected!r}, {e.error!r}),")
    seen = "; ".join(f"{k} {v}" for k, v in f.versions.items()) or "-"
    wrap = lambda text: textwrap.fill(text, 96)  # noqa: E731
    head = _SCRIPT_HEAD.format(title=f"{f.id}: {engine.name} reading {case.id}", cause=wrap(f.cause),
                               spec=wrap(f.spec), rules=", ".join(f.rules), section=f.section, engine=engine.name)
    # where the finding is an error on a case that expects a refusal, the engine's failure is not the
    # refusal (a crash, its own bug, a storage failure): the script must not count it as one
    refusal_ok = f.status != "error"
    script = (head + "\n\n" + "\n\n".join(snippets) + "\n\nCHECKS = [\n" + "\n".join(checks) + "\n]\n"
              + f"RAISING_IS_A_REFUSAL = {refusal_ok!r}\n" + _SCRIPT_TAIL)
    with open(os.path.join(folder, "reproduce.py"), "w", encoding="utf-8") as fh:
        fh.write(script)
    readme = [
        f"# {f.id}", "",
        f"**Engine:** {engine.name} (seen with {seen}). **Kind:** {f.upstream or 'finding'}; the cells show `{f.status}`.",
        "", f"**Table:** `table/`, the case `{case.id}`: {case.description}", "",
        f"**What the engine does:** {f.cause}", "",
        f"**What the spec says:** {f.spec}", "",
        f"**Spec section:** {f.section}. **Rules:** {', '.join(f.rules)}.", "",
        "**Reproduce:** `python reproduce.py` with pyarrow and the engine installed. It reads `table/` with the "
        "engine's public API, compares each version with `expected-*.parquet` (or expects a refusal), prints the "
        "divergence and exits 1 while the engine diverges.", "",
    ]
    readme += ["If the table records absolute file locations (some formats do), run the script where this "
               f"folder was exported ({folder}), or rewrite that prefix in the table's metadata.", ""]
    with open(os.path.join(folder, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(readme))
    with open(os.path.join(folder, "finding.json"), "w", encoding="utf-8") as fh:
        json.dump({**f.to_dict(), "pattern": f.pattern, "versions": dict(f.versions), "case": case.id,
                   "engine": engine.name}, fh, indent=1, sort_keys=True)
    return f"{engine.name} on {case.id}"


def export(findings: Sequence[Finding], out: str, engines: dict[str, Any], cases: Sequence[Case],
           say: Callable[[str], None] = print) -> list[Exported]:
    """A folder per engine-bug finding under ``out`` (others are listed with why they were left out)."""
    done = []
    for f in findings:
        if f.upstream != "engine bug" or f.engines == ("*",):
            done.append(Exported(f.id, None, f"not exported: {f.upstream or 'finding'} on the "
                                             f"{'writer' if f.engines == ('*',) else 'reader'} side"))
            continue
        if not any(fnmatch.fnmatchcase("local", s) for s in f.stores):
            done.append(Exported(f.id, None, f"not exported: it shows on {', '.join(f.stores)} only, and the "
                                             "export builds tables on local disk"))
            continue
        case = _case_for(f, cases)
        engine = next((engines[e] for e in f.engines if e in engines), None)
        if case is None or engine is None:
            why = "no case the reference writer builds" if case is None else f"none of {', '.join(f.engines)} is usable here"
            done.append(Exported(f.id, None, f"not exported: {why}"))
            continue
        folder = os.path.join(out, f.id)
        try:
            note = export_one(f, case, engine, folder)
        except LookupError as exc:
            done.append(Exported(f.id, None, f"not exported: {exc}"))
            continue
        done.append(Exported(f.id, folder, note))
        say(f"exported {f.id}: {note} -> {folder}")
    return done

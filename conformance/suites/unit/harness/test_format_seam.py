"""The format seam: a throw-away format defined here runs through cases, goldens, the runner, the report
and the command line without a line of shared code knowing it.

"toy" is a table format just big enough to be one: a table is a directory with a log ``_toy/`` of
commits ``<version>.json``, each a JSON object ``{"add": [rows...]}`` or ``{"clear": true}``
(drop every row); version N is the replay of commits 0..N; a gap in the versions makes the table
invalid. Its reference side (reader, writer, validator, driver) and its harness side (plugin,
cases, rule catalog) live in this module and are registered at run time, as a third-party package
would register them through the ``lakeconf.formats`` entry points.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Sequence

import pyarrow as pa
import pytest

from conformance import formats as format_registry
from conformance.engines.base import FormatSupport
from conformance.model import Append, Case, Create, Expected, Overwrite, Raw, Step, TableRef
from reference_impl import formats as reference_formats
from reference_impl.common.validation import CheckRegistry
from reference_impl.errors import InvalidTable, Unsupported

LOG = "_toy"
SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


# ----------------------------------------------------------------------------------------------
# The reference side: reader, writer, validator
# ----------------------------------------------------------------------------------------------


def _storage(location: Any):
    from reference_impl.storage import open_storage

    return open_storage(location) if isinstance(location, str) else location


def _commits(storage) -> dict[int, dict]:
    out = {}
    for info in storage.list(LOG):
        name = info.path.rsplit("/", 1)[-1]
        if name.endswith(".json") and name[: -len(".json")].isdigit():
            out[int(name[: -len(".json")])] = json.loads(storage.read(info.path))
    return out


def read_table(location: Any, *, version: int | None = None, columns: Sequence[str] | None = None, **_: Any) -> pa.Table:
    """Replay commits 0..version (latest by default)."""
    commits = _commits(_storage(location))
    if not commits:
        raise InvalidTable("no commit under _toy/: not a toy table")
    last = max(commits) if version is None else version
    if sorted(commits) != list(range(max(commits) + 1)) or last not in commits:
        raise InvalidTable(f"version {last} is not in a gap-free log ({sorted(commits)})")
    rows: list[dict] = []
    for v in range(last + 1):
        rows = [] if commits[v].get("clear") else rows
        rows += commits[v].get("add", [])
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    return table.select(list(columns)) if columns else table


CHECKS = CheckRegistry("TOY-")


@CHECKS.check("LOG-001")
def versions_are_contiguous(ctx) -> Any:
    """Commit versions start at 0 and have no gap."""
    versions = sorted(ctx)
    if versions != list(range(len(versions))):
        yield CHECKS.violation("LOG-001", f"versions {versions} are not 0..N", LOG)


def validate_table(location: Any) -> list:
    """Every violation of the toy rules."""
    return CHECKS.run(_commits(_storage(location)))


FORMAT = reference_formats.Format("toy", LOG, (".json",), f"{__name__}:read_table", f"{__name__}:validate_table")


# ----------------------------------------------------------------------------------------------
# The harness side: the reference engine's driver, cases, the plugin
# ----------------------------------------------------------------------------------------------


def support(engine: Any) -> FormatSupport:
    return FormatSupport(write_steps=frozenset({"Create", "Append", "Overwrite", "Raw"}))


def read(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None, columns=None) -> pa.Table:
    if timestamp is not None or ref is not None:
        raise Unsupported("toy tables travel by version only")
    return read_table(table.uri, version=at, columns=columns)


def describe(engine: Any, table: TableRef, *, at=None, timestamp=None, ref=None) -> dict:
    commits = _commits(_storage(table.uri))
    return {"version": max(commits) if at is None else at, "tags": ["toy", "kit"]}


def write(engine: Any, table: TableRef, steps: Sequence[Step]) -> None:
    storage = _storage(table.uri)
    for step in steps:
        version = len(_commits(storage))
        if isinstance(step, Create):
            body: dict = {"add": []}
        elif isinstance(step, Append):
            body = {"add": step.rows.to_pylist()}
        elif isinstance(step, Overwrite):
            body = {"clear": True, "add": step.rows.to_pylist()}
        elif isinstance(step, Raw):
            step.fn(storage)
            continue
        else:
            raise Unsupported(f"toy has no {type(step).__name__}")
        storage.put_if_absent(f"{LOG}/{version}.json", json.dumps(body).encode())


def _rows(*pairs) -> pa.Table:
    return pa.Table.from_pylist([{"id": i, "name": n} for i, n in pairs], schema=SCHEMA)


def cases() -> list[Case]:
    return [
        Case(id="toy/append-and-overwrite", format="toy", description="appends replay; an overwrite clears",
             rules=("TOY-LOG-001",),
             steps=(Create(schema=SCHEMA), Append(rows=_rows((1, "a"), (2, "b"))), Overwrite(rows=_rows((3, "c")))),
             expected=(Expected(version=1, rows=_rows((1, "a"), (2, "b")), metadata={"version": 1}),
                       Expected(rows=_rows((3, "c")), metadata={"version": 2, "tags": ["kit"]}))),
        Case(id="toy/neg-version-gap", format="toy", description="a gap in the log makes the table invalid",
             rules=("TOY-LOG-001",), violates=("TOY-LOG-001",),
             steps=(Create(schema=SCHEMA), Raw(fn=lambda s: s.put_if_absent(f"{LOG}/2.json", b'{"add": []}'),
                                                description="commit 2 without commit 1")),
             expected=(Expected(error="invalid_table"),)),
    ]


CATALOG = """# Toy rules

| ID | Rule (paraphrase) | Spec section | Binds | Str. |
|---|---|---|---|---|
| TOY-LOG-001 | Commit versions are contiguous from 0 | Log | both | MUST |
"""


@pytest.fixture
def toy(tmp_path):
    """The toy format registered for one test (both sides), and its rule catalog on disk."""
    catalog = tmp_path / "toy.md"
    catalog.write_text(CATALOG)
    plugin = format_registry.FormatPlugin(
        name="toy", title="Toy", cases=f"{__name__}:cases", reference_format=f"{__name__}:FORMAT",
        facts={"version": "exact", "tags": "subset"}, drivers={"reference": __name__}, rules_catalog=str(catalog),
        versions="the commit number in _toy/",
    )
    format_registry.register(plugin)
    reference_formats.register(FORMAT)
    yield plugin
    reference_formats.unregister(FORMAT)
    format_registry.unregister(plugin)


def test_cases_goldens_runner_report_and_cli(toy, tmp_path, capsys):
    from conformance import golden
    from conformance.cases.registry import all_cases
    from conformance.cli import main
    from conformance.engines.reference import ReferenceEngine
    from conformance.report import render_html, render_markdown
    from conformance.runner import run, verdict
    from conformance.storage import open_store

    # cases: registered, checked against the format's own catalog
    mine = all_cases("toy")
    assert [c.id for c in mine] == ["toy/append-and-overwrite", "toy/neg-version-gap"]

    # goldens: written and checked like any format's
    root = tmp_path / "golden"
    assert golden.regenerate(root=root, cases=mine, out=io.StringIO()) == 0
    assert sorted(p.name for p in (root / "toy").iterdir()) == ["append-and-overwrite.json", "neg-version-gap.json"]
    assert golden.regenerate(check=True, root=root, cases=mine, out=io.StringIO()) == 0

    # the runner: the reference engine writes and reads the format through the driver registered here
    reference = ReferenceEngine()
    assert "toy" in reference.capabilities().read and "toy" in reference.capabilities().write
    out = run(mine, [reference], store=open_store("local", str(tmp_path / "run")), progress=False)
    assert {(r.case, r.version, r.status) for r in out.results} == {
        ("toy/append-and-overwrite", 1, "pass"), ("toy/append-and-overwrite", None, "pass"),
        ("toy/neg-version-gap", None, "pass"),
    }
    assert verdict(out.document["results"]).ok
    # the reference validator judged both tables: the negative case breaks its declared rule only
    checks = {e["case"]: e for e in out.document["writer_checks"]}
    assert checks["toy/append-and-overwrite"]["status"] == "clean"
    assert [v["rule"] for v in checks["toy/neg-version-gap"]["violations"]] == ["TOY-LOG-001"]
    assert verdict(out.document["results"], out.document["writer_checks"]).writer_unexplained == 0

    # the report names the format's cells
    assert "toy/append-and-overwrite" in render_markdown(out.document)
    assert "toy/neg-version-gap" in render_html(out.document)

    # the command line detects the format, reads and validates its tables
    (table,) = [p.parent for p in (tmp_path / "run").rglob("append-and-overwrite/_toy")]
    (broken,) = [p.parent for p in (tmp_path / "run").rglob("neg-version-gap/_toy")]
    parquet = tmp_path / "rows.parquet"
    assert main(["read", str(table), "--at", "1", "--out", str(parquet)]) == 0
    import pyarrow.parquet as pq

    assert pq.read_table(parquet).to_pylist() == [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]
    capsys.readouterr()
    assert main(["validate", str(broken), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "toy" and [v["rule"] for v in report["violations"]] == ["TOY-LOG-001"]


def test_a_format_is_gone_when_unregistered(toy):
    from conformance.cases.registry import all_cases

    format_registry.unregister(toy)
    reference_formats.unregister(FORMAT)
    try:
        assert all_cases("toy") == [] and "toy" not in format_registry.names()
    finally:  # the fixture unregisters again
        format_registry.register(toy)
        reference_formats.register(FORMAT)


def test_shared_modules_name_no_format():
    """The shared machinery (everything outside a format's own packages) names no format: adding a
    format is adding its packages. Docs (Markdown) aside; this checks code, comments and docstrings."""
    import re

    root = Path(__file__).resolve().parents[4]
    names = sorted({*format_registry.names(), *(p.stem for p in (root / "conformance" / "rules").glob("*.md"))} - {"README"})
    pattern = re.compile(r"(?<![A-Za-z])(" + "|".join(names) + r")(?![A-Za-z])", re.IGNORECASE)
    shared = [p for p in (root / "conformance").rglob("*.py") if _is_shared(p.relative_to(root))]
    shared += [p for p in (root / "reference_impl").glob("*.py")] + list((root / "reference_impl" / "common").glob("*.py"))
    offenders = []
    for path in shared:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(root)}:{n}: {line.strip()[:100]}")
    assert len(shared) > 40 and not offenders, "\n".join(offenders)


def _is_shared(rel: Path) -> bool:
    parts = rel.parts
    if parts[1] == "formats":
        return len(parts) == 3  # conformance/formats/__init__.py is the registry; the subpackages are formats
    if parts[1] == "suites":
        # The suites of the shared machinery; the unit/property/spark suites test formats by name.
        return len(parts) == 3 or parts[2] in ("golden", "cross_engine")
    return True


def test_the_registry_refuses_a_fact_the_format_does_not_declare(toy):
    from conformance.cases.registry import RegistryError, _check

    bad = Case(id="toy/typo", format="toy", description="", rules=("TOY-LOG-001",), steps=(),
               expected=(Expected(rows=_rows(), metadata={"versoin": 1}),))
    with pytest.raises(RegistryError, match=r"metadata keys \['versoin'\] are not facts the toy format declares"):
        _check([bad])

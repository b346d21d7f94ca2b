"""The whole pipeline on MinIO: ``lakeconf run --store minio`` starts a server, builds, reads, reports.

For every registered format, the reference builds the format's first cases on MinIO and every
Python reader of the format reads them; every cell is explained (exit 0) and nothing in the
outputs carries a credential. The same with Spark as writer and reader is in
conformance/suites/spark/test_spark_pipeline.py.
"""

from __future__ import annotations

import json

import pytest

from conformance import formats
from conformance.cli import main
from conformance.storage.testing import skip_without_minio

SECRET = "lakeconf-test-secret-0123456789"


def readers_of(fmt: str) -> list[str]:
    """The built-in engines of this interpreter (no JVM) that read ``fmt``."""
    from conformance.engines.registry import OPT_IN, builtin_names, load_engines

    engines = load_engines([n for n in builtin_names() if n not in OPT_IN])
    try:
        return [e.name for e in engines if not e.available() and fmt in e.capabilities().read]
    finally:
        for e in engines:
            e.close()


def run_on_minio(argv, tmp_path, monkeypatch, capsys):
    """``lakeconf run ... --store minio``; the results document, the exit code and stdout, after checking
    that the MinIO password appears in none of the outputs."""
    skip_without_minio()
    # A known MinIO password, to prove it appears in none of the outputs.
    monkeypatch.setattr("conformance.storage.minio.secrets.token_urlsafe", lambda n=None: SECRET)
    out = tmp_path / "out"
    code = main([*argv, "--store", "minio", "--out", str(out), "-q"])
    printed = capsys.readouterr()
    doc = json.loads((out / "results.json").read_text())
    for name in ("results.json", "report.md", "report.html"):
        assert SECRET not in (out / name).read_text(), f"the MinIO password leaked into {name}"
    assert SECRET not in printed.out + printed.err
    return code, doc, printed.out


@pytest.mark.parametrize("fmt", formats.names())
def test_first_cases_on_minio_are_all_explained(fmt, tmp_path, monkeypatch, capsys):
    from conformance.cases.registry import all_cases

    first = [c.id for c in all_cases(fmt) if all(e.error is None for e in c.expected)][:3]
    readers = readers_of(fmt)
    code, doc, printed = run_on_minio(["run", "--format", fmt, "--engines", ",".join(readers), "--cases", ",".join(first)],
                                      tmp_path, monkeypatch, capsys)
    assert doc["store"] == "minio" and doc["store_root"].startswith("s3://")
    assert doc["store_startup_seconds"] > 0
    assert {r["reader"] for r in doc["results"]} == set(readers)
    assert {r["case"] for r in doc["results"]} == set(first)
    assert "reference" in {r["writer"] for r in doc["results"]}
    unexplained = [r for r in doc["results"] if r["status"] in ("fail", "error", "unsupported") and not r.get("finding")]
    assert unexplained == [], unexplained
    assert [r for r in doc["results"] if r["reader"] == "reference" and r["status"] != "pass"] == []
    assert code == 0, printed
    assert "unexplained 0; reference failures 0" in printed.splitlines()[-1]

"""The whole pipeline on MinIO: ``lakeconf run --store minio`` starts a server, builds, reads, reports.

The reference builds the basic cases on MinIO and every Python reader reads them; every cell is
explained (exit 0) and nothing in the outputs carries a credential. The same with Spark as writer
and reader is in conformance/suites/spark/test_spark_pipeline.py.
"""

from __future__ import annotations

import json

import pytest

from conformance.cli import main
from conformance.storage.testing import skip_without_minio

SECRET = "lakeconf-test-secret-0123456789"
READERS = "reference,deltalake,duckdb,polars,daft"


def _run(argv, tmp_path, monkeypatch, capsys):
    skip_without_minio()
    # A known MinIO password, to prove it appears in none of the outputs.
    monkeypatch.setattr("conformance.storage.minio.secrets.token_urlsafe", lambda n=None: SECRET)
    out = tmp_path / "out"
    code = main([*argv, "--store", "minio", "--format", "delta", "--out", str(out), "-q"])
    printed = capsys.readouterr()
    doc = json.loads((out / "results.json").read_text())
    for name in ("results.json", "report.md", "report.html"):
        assert SECRET not in (out / name).read_text(), f"the MinIO password leaked into {name}"
    assert SECRET not in printed.out + printed.err
    return code, doc, printed.out


@pytest.mark.rule("DELTA-LOG-001", "DELTA-LOG-006")
def test_basic_cases_on_minio_are_all_explained(tmp_path, monkeypatch, capsys):
    code, doc, printed = _run(["run", "--engines", READERS, "--cases", "delta/basic*,delta/partitioned-string"],
                              tmp_path, monkeypatch, capsys)
    assert doc["store"] == "minio" and doc["store_root"].startswith("s3://")
    assert doc["store_startup_seconds"] > 0
    assert {r["reader"] for r in doc["results"]} == set(READERS.split(","))
    # delta-rs writes too (DeltalakeEngine.write, with the table's S3 storage options).
    assert {r["writer"] for r in doc["results"]} == {"reference", "deltalake"}
    unexplained = [r for r in doc["results"] if r["status"] in ("fail", "error", "unsupported") and not r.get("finding")]
    assert unexplained == [], unexplained
    assert [r for r in doc["results"] if r["reader"] == "reference" and r["status"] != "pass"] == []
    assert code == 0, printed
    assert "unexplained 0; reference failures 0" in printed.splitlines()[-1]

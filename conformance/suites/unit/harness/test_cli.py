"""The command line: exit codes (0 ok / 1 findings / 2 usage or unreadable), one-line errors, --json shapes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from conformance.cli import main
from conformance.compare import compare

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))


def err_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err  # one clear line, never a traceback
    return err[0]


def _reference_ok(module: str) -> bool:
    try:
        __import__(module)
        return True
    except Exception:
        return False


def test_no_command_is_usage(capsys):
    assert main([]) == 2
    assert err_line(capsys).startswith("lakeconf: usage error: missing command")


def test_bad_option_is_usage(capsys):
    assert main(["run", "--nope"]) == 2
    assert "unrecognized arguments: --nope" in err_line(capsys)


def test_unknown_engine(capsys):
    assert main(["run", "--engines", "reference,nosuch"]) == 2
    line = err_line(capsys)
    assert "unknown engine(s) nosuch" in line and "duckdb" in line


def test_minio_without_a_binary_is_a_config_error(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("MINIO_BINARY", str(tmp_path / "no-minio-here"))
    monkeypatch.setattr("conformance.storage.minio.docker_available", lambda: False)
    assert main(["run", "--store", "minio", "--engines", "duckdb", "--cases", "delta/basic-append",
                 "--out", str(tmp_path / "out")]) == 2
    line = err_line(capsys)
    assert line.startswith("lakeconf: store not available:")
    assert "bash .ci/install-minio" in line and "MINIO_BINARY" in line


def test_s3_without_a_bucket_is_a_config_error(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("LAKECONF_S3_BUCKET", raising=False)
    assert main(["run", "--store", "s3", "--engines", "duckdb", "--cases", "delta/basic-append",
                 "--out", str(tmp_path / "out")]) == 2
    line = err_line(capsys)
    assert line.startswith("lakeconf: store not configured: --store s3") and "LAKECONF_S3_BUCKET" in line


def test_validate_missing_path(capsys, tmp_path):
    assert main(["validate", str(tmp_path / "nope")]) == 2
    assert "no such file or directory" in err_line(capsys)


def test_validate_unknown_format(capsys, tmp_path):
    assert main(["validate", str(tmp_path)]) == 2
    assert err_line(capsys).startswith("lakeconf: unknown format:")


def test_read_unknown_format(capsys, tmp_path):
    assert main(["read", str(tmp_path), "--out", str(tmp_path / "x.parquet")]) == 2
    assert "unknown format" in err_line(capsys)


def test_read_requires_out(capsys, tmp_path):
    assert main(["read", str(tmp_path)]) == 2
    assert "--out" in err_line(capsys)


@pytest.mark.skipif(not _reference_ok("reference_impl.delta.validate"), reason="validator not importable yet")
def test_validate_json_shape(capsys, delta_table):
    path, _v0, _v1 = delta_table
    code = main(["validate", path, "--json"])
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"table", "format", "violations"}
    assert out["table"] == path and out["format"] == "delta"
    assert code == (1 if out["violations"] else 0)
    for v in out["violations"]:
        assert set(v) == {"rule", "message", "where"}


@pytest.mark.skipif(not _reference_ok("reference_impl.delta.table"), reason="reference reader not importable yet")
def test_read_writes_parquet(capsys, tmp_path, delta_table):
    path, v0, v1 = delta_table
    out = tmp_path / "rows.parquet"
    assert main(["read", path, "--out", str(out)]) == 0
    assert compare(pq.read_table(out), v1).equal
    assert main(["read", path, "--at", "0", "--out", str(out)]) == 0
    assert compare(pq.read_table(out), v0).equal
    capsys.readouterr()
    assert main(["read", path, "--at", "99", "--out", str(out)]) == 2
    assert err_line(capsys).startswith("lakeconf: ")


def test_report_rerenders(capsys, tmp_path, results_doc):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results_doc))
    assert main(["report", str(path), "--out", str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "report.html").exists() and (tmp_path / "r" / "report.md").exists()


def test_report_unreadable(capsys, tmp_path):
    bad = tmp_path / "results.json"
    bad.write_text("[]")
    assert main(["report", str(bad)]) == 2
    assert err_line(capsys).startswith("lakeconf: unreadable:")


def test_golden_and_bench_hooks_fail_cleanly_or_run(capsys, monkeypatch):
    import types

    fake = types.ModuleType("conformance.golden")
    fake.regenerate = lambda check: 1 if check else 0
    monkeypatch.setitem(sys.modules, "conformance.golden", fake)
    assert main(["golden", "regenerate", "--check"]) == 1
    assert main(["golden", "regenerate"]) == 0
    monkeypatch.setitem(sys.modules, "conformance.formats.delta.bench", None)  # import fails
    assert main(["bench", "delta"]) == 2
    assert "the delta benchmark cannot be imported" in err_line(capsys)
    assert main(["golden"]) == 2


def test_coverage_json_shape(capsys, monkeypatch):
    # The real collection (a pytest subprocess) is tested in test_rules_coverage; keep this fast.
    import conformance.coverage as cov

    monkeypatch.setattr(cov, "collect_test_rules", lambda paths=None: ({"t::a": ["DELTA-LOG-001"], "t::b": []}, []))
    assert main(["coverage", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    delta = [f for f in doc["formats"] if f["format"] == "delta"][0]
    assert delta["rules"] == 320 and delta["must"] == 257
    assert 0 <= delta["must_with_check"] <= delta["with_check"] <= delta["rules"]
    assert set(doc) >= {"formats", "unknown_rule_ids", "problems", "tests_collected", "cases"}
    assert doc["tests_collected"] > 0


def test_engines_lists_builtins(capsys):
    assert main(["engines", "--json"]) == 0
    names = [e["name"] for e in json.loads(capsys.readouterr().out)]
    assert names[:2] == ["reference", "deltalake"] and "daft" in names
    assert "spark" in names and "spark-3.5" in names  # listed (opt-in for runs), whether or not a JVM is here


def test_engines_say_which_formats_an_engine_does_not_offer_and_why(capsys):
    """A format whose driver says it is unavailable is listed with the reason, not left out silently."""
    from conformance import formats

    assert main(["engines", "--json"]) == 0
    rows = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    for name, plugin in formats.all_formats().items():
        for family in plugin.drivers:
            row = rows.get(family)
            if row and row.get("available") and name not in row["read"]:
                assert row["unavailable_formats"].get(name), f"{family} leaves {name} out without a reason"


def test_spark_is_opt_in(monkeypatch):
    from conformance.engines.registry import load_engines

    monkeypatch.delenv("LAKECONF_SPARK", raising=False)
    assert "spark" not in [e.name for e in load_engines()]
    assert [e.name for e in load_engines(["spark"])] == ["spark"]  # named: included
    monkeypatch.setenv("LAKECONF_SPARK", "1")
    assert "spark" in [e.name for e in load_engines()]


@pytest.mark.skipif(not _reference_ok("conformance.cases.registry"), reason="case registry not importable yet")
def test_run_end_to_end(tmp_path, capsys):
    code = main(["run", "--format", "delta", "--cases", "delta/basic-append", "--engines", "reference,duckdb",
                 "--out", str(tmp_path), "-q", "--in-process"])
    assert code in (0, 1)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert {r["reader"] for r in doc["results"]} == {"reference", "duckdb"}
    assert all(r["case"] == "delta/basic-append" for r in doc["results"])
    assert doc["store"] == "local" and doc["store_root"].startswith(str(tmp_path))
    assert set(doc["engine_startup_seconds"]) == {"reference", "duckdb"}
    assert code == (1 if any(r["status"] in ("fail", "error") for r in doc["results"]) else 0)
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert summary.startswith("lakeconf run (local, ") and "pass" in summary and "unexplained 0" in summary
    assert (tmp_path / "report.html").exists()
    assert main(["run", "--cases", "delta/no-such-case-*", "--engines", "duckdb", "--out", str(tmp_path)]) == 2
    assert "no cases" in capsys.readouterr().err


def test_console_entry_point_never_prints_a_traceback(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_secrets_are_redacted(capsys, monkeypatch):
    from conformance.cli import CliError
    from conformance.redact import redact

    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "sup3r-secret-value")
    assert "sup3r" not in redact("failed with key sup3r-secret-value")
    assert "hunter2" not in redact("options: aws_secret_access_key=hunter2, region=x")
    assert "sup3r" not in CliError("unreadable", "bad sup3r-secret-value").line()


@pytest.mark.skipif(not _reference_ok("conformance.cases.registry"), reason="case registry not importable yet")
def test_run_with_readers_only_builds_with_the_reference(tmp_path):
    code = main(["run", "--cases", "delta/basic-append", "--engines", "duckdb", "--out", str(tmp_path), "-q", "--in-process"])
    doc = json.loads((tmp_path / "results.json").read_text())
    assert {r["reader"] for r in doc["results"]} == {"duckdb"}
    assert {r["writer"] for r in doc["results"]} == {"reference"}
    assert {"name": "reference", "roles": ["writer"]}.items() <= [e for e in doc["engines"] if e["name"] == "reference"][0].items()
    assert code == (1 if any(r["status"] in ("fail", "error") for r in doc["results"]) else 0)


@pytest.mark.skipif(not _reference_ok("conformance.cases.registry"), reason="case registry not importable yet")
def test_cases_lists_ids(capsys):
    assert main(["cases", "--cases", "delta/basic-append", "--json"]) == 0
    (only,) = json.loads(capsys.readouterr().out)
    assert only["id"] == "delta/basic-append" and only["rules"]


def test_commands_of_a_checkout_say_so_elsewhere(capsys, monkeypatch):
    """In an installed package (no golden/ beside it) golden and coverage say what to do instead."""
    monkeypatch.setattr("conformance.project.checkout_root", lambda: None)
    assert main(["golden", "regenerate", "--check"]) == 2
    line = err_line(capsys)
    assert "works on a checkout" in line and "clone the repository" in line
    assert main(["coverage"]) == 2
    assert "clone the repository and run `lakeconf coverage` there" in err_line(capsys)


def test_a_missing_extra_is_named():
    from conformance.engines._common import missing_module

    reason = missing_module("no_such_module_lakeconf", "duckdb")
    assert reason.startswith("cannot import no_such_module_lakeconf") and "pip install 'lakeconf[duckdb]'" in reason
    assert missing_module("json", "duckdb") is None


def test_a_reader_that_goes_away_is_not_an_internal_error():
    """`lakeconf cases | head -1`: the closed pipe ends the command quietly (exit 141, as SIGPIPE would), no error line."""
    code = ("import sys; from conformance.cli import main; sys.exit(main(['cases']))")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    proc.stdout.close()  # the reader is gone before the command writes (it takes a while to import)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert err == "", err


def test_validate_masks_credentials_in_the_location_too(capsys, tmp_path, delta_table, monkeypatch):
    """`validate --json` prints the location with the same redaction as every message."""
    import shutil

    path, _v0, _v1 = delta_table
    secret_dir = tmp_path / "AKIAEXAMPLESECRET42"
    shutil.copytree(path, secret_dir)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "AKIAEXAMPLESECRET42")
    main(["validate", str(secret_dir), "--json"])
    out = capsys.readouterr().out
    assert "AKIAEXAMPLESECRET42" not in out and json.loads(out)["table"].endswith("/***")


def test_a_malformed_bucket_is_one_line(capsys):
    assert main(["validate", "s3://Bad_Bucket/t"]) == 2
    line = err_line(capsys)
    assert "is not a valid S3 bucket name" in line


def test_sigterm_ends_a_command_through_its_clean_up(monkeypatch, capsys):
    """SIGTERM runs a command's clean-up (the run's `finally` stops its MinIO) and exits 143."""
    import signal
    import time

    from conformance import cli

    cleaned = []

    def long_run(args):
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            return 0
        finally:
            cleaned.append(True)

    monkeypatch.setattr(cli, "cmd_run", long_run)
    before = signal.getsignal(signal.SIGTERM)
    began = time.monotonic()
    assert main(["run"]) == 143
    assert cleaned and time.monotonic() - began < 4
    assert "terminated (SIGTERM)" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGTERM) == before  # the caller's handler is back

"""``lakeconf`` run in-process as a user runs it on a table: argv in, exit code and output back.

For the suites that point the command line at peers' tables. On an S3 store the command line gets
its endpoint and keys from the AWS_* variables, as it would from a user's shell.
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq


@dataclass
class Outcome:
    code: int
    out: str
    err: str


class LakeconfCli:
    """``cli(*argv)`` -> Outcome; ``cli.read(location, *options)`` -> (rows, stderr);
    ``cli.validate(location)`` -> the violations ``--json`` lists."""

    def __init__(self, store: Any, monkeypatch: Any, workdir: Path) -> None:
        self.workdir = workdir
        self._reads = 0
        cfg = store.s3_config
        if cfg is not None:
            for name, value in (("AWS_ENDPOINT_URL", cfg.endpoint_url), ("AWS_ACCESS_KEY_ID", cfg.access_key_id),
                                ("AWS_SECRET_ACCESS_KEY", cfg.secret_access_key), ("AWS_REGION", cfg.region),
                                ("AWS_ALLOW_HTTP", "true" if cfg.allow_http else "false")):
                monkeypatch.setenv(name, value)

    def __call__(self, *argv: str) -> Outcome:
        from conformance.cli import main

        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(argv))
        return Outcome(code, out.getvalue(), err.getvalue())

    def read(self, location: str, *options: str) -> tuple[pa.Table, str]:
        self._reads += 1
        target = str(self.workdir / f"read-{self._reads}.parquet")
        done = self("read", location, *options, "--out", target)
        assert done.code == 0, done.err
        return pq.read_table(target), done.err

    def validate(self, location: str) -> list[dict]:
        done = self("validate", location, "--json")
        assert done.code in (0, 1), done.err
        return json.loads(done.out)["violations"]


def same_rows(a: pa.Table, b: pa.Table) -> bool:
    """Equal as multisets of rows (column order and row order aside)."""
    cols = sorted(a.column_names)
    if cols != sorted(b.column_names):
        return False
    key = lambda r: tuple((v is None, str(v)) for v in r)  # noqa: E731
    rows = lambda t: sorted((tuple(r[c] for c in cols) for r in t.select(cols).to_pylist()), key=key)  # noqa: E731
    return rows(a) == rows(b)

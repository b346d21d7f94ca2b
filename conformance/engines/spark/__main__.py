"""``python -m conformance.engines.spark setup|resolve``: set up a Spark line, fill the Ivy cache.

* ``setup --line 3.5``: create the line's own Python environment (``remote.setup``) when its
  pyspark is not the one installed here; prints the interpreter.
* ``resolve [--line L] [--formats F1,F2] [--no-s3] [--if-needed]``: start a session of the line once
  with Ivy resolution on (this records the resolved jars, so later sessions start offline), time it
  and a first job, print the figures as JSON. ``--if-needed``: do nothing when every jar of an
  earlier resolution is still there (a warm set-up then costs no JVM start: 8-10 s a line, measured).
  A line not installed here resolves in its environment.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Sequence

from conformance.engines.spark import lines, remote


def _resolve_here(line: lines.SparkLine, formats: list[str] | None, s3: bool, if_needed: bool) -> int:
    from conformance.engines.spark import session
    from conformance.engines.spark.adapter import SparkEngine

    reason = SparkEngine(line.name).available()
    if reason:
        print(f"spark {line.name}: not available: {reason}")
        return 1
    fmts = formats or list(session.env_formats(line))
    packages = session.packages(line, fmts, s3=s3)
    if if_needed and session.read_jar_manifest(packages) is not None:
        print(json.dumps({"resolved": "earlier", "packages": packages,
                          "jar_manifest": session.jar_manifest_path(packages)}, indent=2))
        return 0
    os.environ["LAKECONF_SPARK_RESOLVE"] = "1"  # always ask Ivy here: this is what refreshes the manifest
    spark = session.get(line=line.name, formats=fmts, s3=s3)
    began = time.monotonic()
    spark.range(4).count()  # the first job loads the executor side too
    stats = session.stats() | {"first_job_s": round(time.monotonic() - began, 2)}
    stats["first_start_s"] = round(stats["first_start_s"], 2)
    stats["packages"] = packages
    stats["jar_manifest"] = session.jar_manifest_path(packages)
    print(json.dumps(stats, indent=2))
    session.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.engines.spark")
    parser.add_argument("command", choices=["setup", "resolve"])
    parser.add_argument("--line", default=None, help=f"Spark line ({', '.join(lines.LINES)}; default: the installed one)")
    parser.add_argument("--formats", default=os.environ.get("LAKECONF_SPARK_FORMATS"),
                        help="runtimes to resolve (default: every format with one for the line)")
    parser.add_argument("--no-s3", action="store_true", help="leave hadoop-aws and the AWS SDK out")
    parser.add_argument("--if-needed", action="store_true",
                        help="skip when an earlier resolution's jars are all still there")
    args = parser.parse_args(argv)
    installed = lines.installed_pyspark()
    here = lines.line_for_pyspark(installed) if installed else None
    line = lines.line(args.line) if args.line else (here or lines.line())
    if args.command == "setup":
        if here is line:
            print(sys.executable)
            return 0
        print(remote.setup(line))
        return 0
    formats = [f.strip() for f in args.formats.split(",") if f.strip()] if args.formats else None
    if here is line:
        return _resolve_here(line, formats, not args.no_s3, args.if_needed)
    python = remote.interpreter(line)
    if python is None:
        print(f"spark {line.name}: no environment; run {remote.setup_hint(line)}", file=sys.stderr)
        return 1
    from conformance.isolation import source_path

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (source_path(), os.environ.get("PYTHONPATH", "")) if p)}
    cmd = [python, "-m", "conformance.engines.spark", "resolve", "--line", line.name]
    if args.formats:
        cmd += ["--formats", args.formats]
    if args.no_s3:
        cmd.append("--no-s3")
    if args.if_needed:
        cmd.append("--if-needed")
    return subprocess.run(cmd, env=env).returncode


if __name__ == "__main__":
    raise SystemExit(main())

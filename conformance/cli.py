"""The command line: ``lakeconf run | golden | validate | read | coverage | report | cases | engines | bench``.

Exit codes: 0 ok; 1 findings (``run``: a non-pass cell no registered finding or declared
capability explains, or a reference failure; ``validate``: a rule violation); 2 usage or
configuration error, or an input that cannot be read. Every error path prints one line, ``lakeconf: <kind>: <what>. <what to do>``,
never a traceback, and never a credential.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from conformance.redact import redact

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class CliError(Exception):
    """An error the CLI reports as one line and an exit code."""

    def __init__(self, kind: str, message: str, hint: str = "", code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.kind, self.message, self.hint, self.code = kind, message, hint, code

    def line(self) -> str:
        """The one line printed for this error."""
        text = f"lakeconf: {self.kind}: {self.message.rstrip('.')}"
        if self.hint:
            text += f". {self.hint}"
        return redact(" ".join(text.split()))  # one line, whatever a library's message held


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line and exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError("usage error", message, f"see `{self.prog} --help`")


# ----------------------------------------------------------------------------------------------
# Table locations
# ----------------------------------------------------------------------------------------------


def _open_location(location: str):
    """A reference Storage for a path or URI, or a CliError saying why not."""
    try:
        from reference_impl.storage import open_storage
    except Exception as exc:  # noqa: BLE001
        raise CliError("not available", f"reference storage cannot be imported ({exc})") from None
    try:
        return open_storage(location)
    except Exception as exc:  # noqa: BLE001
        raise CliError("unreadable", f"cannot open {location}: {getattr(exc, 'message', exc)}",
                       getattr(exc, "hint", None) or "pass a local path, file:// or s3:// URI") from None


def locate_table(location: str):
    """(format, Located) for a location: a table directory or URI, or a file that names a table by
    itself (a catalog's metadata file); a CliError when nothing is recognised."""
    from conformance.engines._common import local_path
    from reference_impl import formats

    path = local_path(location)
    if path is not None and not os.path.exists(path):
        raise CliError("unreadable", f"no such file or directory: {location}", "check the path")
    try:
        return formats.locate(location, _open_location)
    except CliError:
        raise
    except Exception as exc:  # noqa: BLE001
        if getattr(exc, "kind", None) == "invalid_table":
            wanted = "; ".join(f"{f.name}: *{', *'.join(f.files)}" for f in formats.all_formats() if f.files)
            raise CliError("unknown format", f"{location}: {getattr(exc, 'message', exc)}",
                           "point at a table's root directory" + (f" or a file that names a table ({wanted})" if wanted else "")) from None
        raise CliError("unreadable", f"cannot list {location}: {exc}", "check the location and credentials") from None


def _located(location: str):
    """``locate_table``, telling the user (on stderr) any choice the location left open."""
    fmt, located = locate_table(location)
    if located.note:
        print(f"lakeconf: note: {redact(located.note)}", file=sys.stderr)
    return fmt, located


def _entry_point(fmt: str, which: str):
    """The reference's reader or validator for ``fmt``, or a CliError saying it is missing."""
    from reference_impl import formats

    try:
        return formats.get(fmt).load(which)
    except Exception as exc:  # noqa: BLE001
        raise CliError("not available", f"the {fmt} {which} cannot be imported ({exc})") from None


def _lakeconf_error(exc: BaseException, what: str) -> CliError:
    kind = getattr(exc, "kind", None)
    label = {"invalid_table": "invalid table", "unsupported": "unsupported feature", "internal": "internal error"}.get(
        kind or "", "unreadable"
    )
    hint = {
        "invalid_table": "run `lakeconf validate` on it to list the broken rules",
        "unsupported": "the reference does not implement this feature yet",
        "internal": "this is a lakeconf bug: please report it with the table",
    }.get(kind or "", "")
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return CliError(label, f"{what}: {msg}", hint)


# ----------------------------------------------------------------------------------------------
# Commands
# ----------------------------------------------------------------------------------------------


def _open_run_store(kind: str, out: str):
    """The store of a run (a MinIO server is started here), or a CliError saying what to do."""
    from conformance.storage import MinioUnavailable, open_store, store_unavailable_reason
    from conformance.storage.minio import INSTALL_HINT

    reason = store_unavailable_reason(kind)
    if reason and reason.startswith("cannot import boto3"):
        from conformance.project import install_hint

        raise CliError("not available", f"--store {kind} needs boto3", f"install it: {install_hint('s3')}")
    if reason:
        if kind == "minio":
            raise CliError("store not available", "--store minio needs a MinIO server binary and none was found",
                           "build one with `bash .ci/install-minio` or set MINIO_BINARY to a MinIO server binary")
        raise CliError("store not configured", f"--store {kind}: {reason}",
                       "set LAKECONF_S3_BUCKET (an existing bucket) and AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, "
                       "AWS_SECRET_ACCESS_KEY, AWS_REGION for the endpoint")
    try:
        return open_store(kind, out)
    except MinioUnavailable as exc:
        raise CliError("store not available", str(exc), "" if "install-minio" in str(exc) else INSTALL_HINT) from None


def cmd_run(args: argparse.Namespace) -> int:
    from conformance.engines.registry import EngineConfigError, load_engines
    from conformance.report import write_report, write_results
    from conformance.runner import load_cases, run, verdict

    names = [n.strip() for n in args.engines.split(",") if n.strip()] if args.engines else None
    try:
        engines = load_engines(names, commands=args.engine_cmd or ())
    except EngineConfigError as exc:
        raise CliError("usage error", str(exc), "see `lakeconf engines`") from None
    out = os.path.abspath(args.out)
    try:
        cases = load_cases(args.format, args.cases)
    except ImportError as exc:
        raise CliError("not available", f"the case registry cannot be imported ({exc})", "conformance/cases/registry.py is needed") from None
    except Exception as exc:  # noqa: BLE001 - e.g. RegistryError: the corpus itself is inconsistent
        first = str(exc).strip().splitlines()
        raise CliError("invalid cases", f"{type(exc).__name__}: {' / '.join(l.strip() for l in first[:3])}",
                       "fix the case definitions (conformance/cases/)") from None
    if not cases:
        what = f"format {args.format!r}" if args.format else "any format"
        pattern = f" matching {args.cases!r}" if args.cases else ""
        raise CliError("usage error", f"no cases for {what}{pattern}", "list the case ids with `lakeconf cases`")
    # Engines chosen as readers still need tables: when none of them writes a case's format,
    # the reference builds the tables (as a writer only, so it gets no reader column).
    builders = []
    formats = {c.format for c in cases}
    if not any(formats & set(e.capabilities().write) for e in engines):
        builders = load_engines(["reference"])
    store = _open_run_store(args.store, out)
    try:
        outcome = run(
            cases, engines, store=store, progress=not args.quiet, isolate=not args.in_process,
            commands=args.engine_cmd or (), timeout=args.timeout, builders=builders, serial=args.serial,
            validate_apart=True,
        )
    finally:
        store.close()  # stops a MinIO started for the run (its data goes with it)
    results_path = write_results(outcome.document, out)
    md, html = write_report(outcome.document, out)
    v = verdict(outcome.document["results"], outcome.document.get("writer_checks", ()))
    print(f"wrote {results_path}, {md}, {html}")
    if args.junit_xml:
        print(f"wrote {_write_junit(outcome.document, args.junit_xml)}")
    print(f"lakeconf run ({outcome.document['store']}, {outcome.document['timing']['run_seconds']:.1f} s): {v.line()}")
    if not v.ok:
        _print_unexplained(v, results_path)
    return EXIT_OK if v.ok else EXIT_FINDINGS


def _print_unexplained(v, results_path: str, limit: int = 20) -> None:
    """Name what made the run fail (a CI log is often all one has), then where the rest is."""
    for line in v.problems[:limit]:
        print(f"  unexplained: {line[:400]}", file=sys.stderr)
    if len(v.problems) > limit:
        print(f"  ... and {len(v.problems) - limit} more", file=sys.stderr)
    print(f"  every entry is in the report and {results_path}; a finding in the registry explains a "
          "disagreement once the spec settles it (conformance/formats/<format>/findings.py)", file=sys.stderr)


def cmd_fuzz(args: argparse.Namespace) -> int:
    import tempfile

    from conformance.engines.registry import EngineConfigError, load_engines
    from conformance.hostile import formats_with_spec
    from conformance.hostile.fuzz import fuzz

    fmts = [args.format] if args.format else formats_with_spec()
    unknown = [f for f in fmts if f not in formats_with_spec()]
    if unknown:
        raise CliError("usage error", f"no hostile-input spec for format {unknown[0]!r}",
                       f"choose one of {', '.join(formats_with_spec())}")
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    try:
        engines = load_engines(names)
    except EngineConfigError as exc:
        raise CliError("usage error", str(exc), "see `lakeconf engines`") from None
    with tempfile.TemporaryDirectory(prefix="lakeconf-fuzz-") as work:
        report = fuzz(engines, fmts, args.mutants, work, os.path.abspath(args.out), seed=args.seed, timeout=args.timeout,
                      progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(report.render())
    print(f"wrote {os.path.join(os.path.abspath(args.out), 'findings.json')}")
    return EXIT_FINDINGS if report.findings else EXIT_OK


def _checkout_only(what: str, instead: str) -> None:
    """A CliError when not running from a checkout of the kit's repository."""
    from conformance.project import checkout_root

    if checkout_root() is None:
        raise CliError("not available", f"{what} works on a checkout of the lakeconf repository, and this is an "
                       "installed package", instead)


def cmd_golden(args: argparse.Namespace) -> int:
    _checkout_only("golden regenerate", "clone the repository and run `lakeconf golden regenerate` there "
                   "(the expectations themselves are in the installed cases: `lakeconf cases --json`)")
    try:
        from conformance.golden import regenerate
    except ImportError as exc:
        raise CliError("not available", f"golden regeneration is not installed ({exc})", "conformance/golden.py is needed") from None
    try:
        code = regenerate(check=args.check)
    except Exception as exc:  # noqa: BLE001
        raise _lakeconf_error(exc, "golden regeneration failed") from None
    return int(code or 0)


def cmd_validate(args: argparse.Namespace) -> int:
    fmt, located = _located(args.location)
    validate_table = _entry_point(fmt, "validator")
    try:
        violations = validate_table(_open_location(located.root), **located.options)
    except Exception as exc:  # noqa: BLE001
        raise _lakeconf_error(exc, f"cannot validate {args.location}") from None
    items = [{"rule": v.rule, "message": redact(v.message), "where": v.where} for v in violations]
    if args.json:
        print(json.dumps({"table": redact(args.location), "format": fmt, "violations": items}, indent=1))
    else:
        print(f"{redact(args.location)}: {fmt} table, {len(items)} violation(s)")
        for v in items:
            print(f"  {v['rule']}: {v['message']}" + (f" ({v['where']})" if v["where"] else ""))
    return EXIT_FINDINGS if items else EXIT_OK


def _selectors() -> dict[str, Any]:
    """flag -> (selector, [(format, what it names there)]) over every format's own ways to name a version."""
    out: dict[str, Any] = {}
    try:
        from reference_impl import formats

        for f in formats.all_formats():
            for sel in f.selectors:
                out.setdefault(sel.flag, (sel, []))[1].append((f.name, sel.help))
    except Exception:  # noqa: BLE001 - --help must work even with a broken format package
        pass
    return out


def _naming_files() -> str:
    """", or a file that names a table by itself (<format>: *<ending>, ...)" for --help."""
    try:
        from reference_impl import formats

        named = [f"{f.name}: *{', *'.join(f.files)}" for f in formats.all_formats() if f.files]
    except Exception:  # noqa: BLE001 - --help must work even with a broken format package
        named = []
    return f", or a file that names a table by itself ({'; '.join(named)}, as a catalog points at it)" if named else ""


def _dest(flag: str) -> str:
    return "select_" + flag.lstrip("-").replace("-", "_")


def _selection(args: argparse.Namespace, fmt: str) -> dict[str, Any]:
    """The reader's keyword arguments for the version the options name (at most one way)."""
    from reference_impl import formats

    mine = {sel.flag: sel for sel in formats.get(fmt).selectors}
    given = [flag for flag in _selectors() if getattr(args, _dest(flag), None) is not None]
    if args.at is not None:
        given.insert(0, "--at")
    if len(given) > 1:
        raise CliError("usage error", f"name the version one way ({', '.join(given)} given)", "keep one of them")
    if not given or given[0] == "--at":
        return {"version": args.at}
    flag = given[0]
    if flag not in mine:
        takes = ", ".join(["--at", *mine]) if mine else "--at"
        raise CliError("usage error", f"{flag} does not name a version of a {fmt} table", f"a {fmt} table takes {takes}")
    value = getattr(args, _dest(flag))
    if mine[flag].keyword == "timestamp" and value.strip().isascii() and value.strip().isdigit():
        value = int(value)  # epoch milliseconds
    return {mine[flag].keyword: value}


def cmd_read(args: argparse.Namespace) -> int:
    fmt, located = _located(args.location)
    selected = _selection(args, fmt)
    read_table = _entry_point(fmt, "reader")
    try:
        table = read_table(_open_location(located.root), **located.options, **selected)
    except Exception as exc:  # noqa: BLE001
        named = {k: v for k, v in selected.items() if v is not None}
        where = (", ".join(f"{k.replace('_', ' ')} {v}" for k, v in named.items()) + f" of {args.location}") if named \
            else args.location
        raise _lakeconf_error(exc, f"cannot read {where}") from None
    out = args.out
    try:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        if out.endswith((".arrow", ".feather", ".ipc")):
            import pyarrow as pa

            with pa.OSFile(out, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table)
        else:
            import pyarrow.parquet as pq

            pq.write_table(table, out)
    except OSError as exc:
        raise CliError("cannot write", f"{out}: {exc.strerror or exc}", "choose a writable --out path") from None
    print(f"wrote {table.num_rows} row(s) to {out}")
    return EXIT_OK


def cmd_coverage(args: argparse.Namespace) -> int:
    from conformance.engines._common import missing_module

    _checkout_only("coverage", "clone the repository and run `lakeconf coverage` there (it counts the repository's tests)")
    reason = missing_module("pytest", "test")
    if reason:
        from conformance.project import install_hint

        raise CliError("not available", "coverage collects the test suites with pytest, which is not installed",
                       f"install it: {install_hint('test')}")
    from conformance.coverage import compute, gather, render_text

    doc = compute(gather())
    print(json.dumps(doc, indent=1) if args.json else render_text(doc))
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from conformance.report import ResultsError, load_results, write_report

    try:
        doc = load_results(args.results)
    except ResultsError as exc:
        raise CliError("unreadable", str(exc), "pass the results.json a `lakeconf run` wrote") from None
    out = args.out or os.path.dirname(os.path.abspath(args.results))
    md, html = write_report(doc, out)
    print(f"wrote {md}, {html}")
    if args.junit_xml:
        print(f"wrote {_write_junit(doc, args.junit_xml)}")
    return EXIT_OK


def _write_junit(doc: dict, path: str) -> str:
    from conformance.report import write_junit

    try:
        return write_junit(doc, path)
    except OSError as exc:
        raise CliError("cannot write", f"{path}: {exc.strerror or exc}", "choose a writable --junit-xml path") from None


def _selected_findings(args: argparse.Namespace) -> list:
    """The registry entries ``--ids`` / ``--format`` select (all by default)."""
    from conformance.findings.verify import select

    ids = [x.strip() for x in args.ids.split(",") if x.strip()] if args.ids else None
    try:
        return select(ids, args.format)
    except KeyError as exc:
        raise CliError("usage error", str(exc.args[0]), "list the ids in conformance/formats/<format>/findings.py") from None


def cmd_findings_verify(args: argparse.Namespace) -> int:
    """Replay every registry entry's own cells (or judge a results.json) and say which still hold."""
    from conformance.findings import verify as V
    from conformance.report import ResultsError, load_results

    findings = _selected_findings(args)
    if args.results:
        try:
            doc = load_results(args.results)
        except ResultsError as exc:
            raise CliError("unreadable", str(exc), "pass the results.json a `lakeconf run` wrote") from None
    else:
        doc = _verification_run(args, findings, V)
    entries = {e["name"]: e for e in doc.get("engines", [])}
    verdicts = V.judge(findings, doc["results"], doc.get("store", "local"), entries, doc.get("writer_checks") or [])
    print(V.render(verdicts))
    return EXIT_OK if all(v.ok for v in verdicts) else EXIT_FINDINGS


def cmd_findings_export(args: argparse.Namespace) -> int:
    """A self-contained folder per engine-bug finding: the table, a public-API script, the spec clause."""
    from conformance.engines.registry import load_engines
    from conformance.findings.export import export
    from conformance.runner import load_cases

    findings = _selected_findings(args)
    # the adapters only write snippets here: no engine is started (Spark needs no JVM for it)
    engines = {e.name: e for e in load_engines(None, include_opt_in=True) if e.available() is None}
    out = os.path.abspath(args.dir)
    done = export(findings, out, engines, load_cases(args.format))
    for d in done:
        if d.folder is None:
            print(f"{d.finding}: {d.note}")
    print(f"findings export: {sum(1 for d in done if d.folder)} folder(s) under {out}, "
          f"{sum(1 for d in done if d.folder is None)} entr(ies) not exported (reasons above)")
    return EXIT_OK


def _verification_run(args: argparse.Namespace, findings: list, V) -> dict:
    """Run the cells the entries name. Writer-side violation entries need no reader: their cases are
    built by their writers only (as builders) and judged by the validator, so a glob over a
    format's cases costs builds, not every reader's reads."""
    from conformance.engines.registry import load_engines
    from conformance.findings import VIOLATION
    from conformance.report import write_results
    from conformance.runner import load_cases, run

    engines = load_engines(None)
    names = [e.name for e in engines]
    cells = [f for f in findings if f.status != VIOLATION]
    tables = [f for f in findings if f.status == VIOLATION]
    patterns, wanted = V.selection(cells, args.store, names)
    table_patterns, writers = V.selection(tables, args.store, names)
    cases = load_cases(None, ",".join(patterns)) if patterns else []
    seen_ids = {c.id for c in cases}
    cases += [c for c in (load_cases(None, ",".join(table_patterns)) if table_patterns else []) if c.id not in seen_ids]
    if not cases:
        return {"store": args.store, "results": [], "engines": [], "writer_checks": []}
    out = os.path.abspath(args.out)
    store = _open_run_store(args.store, out)
    try:
        # One run for both kinds of entry (each engine, each JVM, starts once): the readers the cell
        # entries name, and as writers only the engines whose tables a violation entry judges.
        doc = run(cases, [e for e in engines if e.name in wanted], store=store, progress=not args.quiet,
                  isolate=True, timeout=args.timeout,
                  builders=[e for e in engines if e.name in writers and e.name not in wanted],
                  cells_of=V.cells_needed(findings, args.store, names)).document
    finally:
        store.close()
    doc.setdefault("store", store.name)
    doc.setdefault("generated_at", "")
    print(f"wrote {write_results(doc, out)}")
    return doc


def cmd_cases(args: argparse.Namespace) -> int:
    from conformance.runner import load_cases

    try:
        cases = load_cases(args.format, args.cases)
    except Exception as exc:  # noqa: BLE001
        raise CliError("not available", f"the case registry cannot be loaded ({type(exc).__name__}: {exc})") from None
    if args.json:
        print(json.dumps([{"id": c.id, "description": c.description, "rules": list(c.rules),
                           "features": list(c.features), "versions": len(c.expected)} for c in cases], indent=1))
    else:
        for c in cases:
            print(f"{c.id:<48} {c.description.splitlines()[0][:90] if c.description else ''}")
    return EXIT_OK


def cmd_engines(args: argparse.Namespace) -> int:
    from conformance.engines.registry import EngineConfigError, load_engines

    try:
        engines = load_engines(None, commands=args.engine_cmd or (), include_opt_in=True)
    except EngineConfigError as exc:
        raise CliError("usage error", str(exc)) from None
    rows: list[dict[str, Any]] = []
    for e in engines:
        try:
            reason = e.available()
            caps = e.capabilities()
            rows.append({
                "name": e.name, "version": e.version() if not reason else "-", "available": reason is None,
                "reason": reason, "read": sorted(caps.read), "write": sorted(caps.write),
                "unsupported": {f: dict(g) for f, g in caps.unsupported.items() if g},
                # formats an engine of several formats does not offer here, and why (a missing extension)
                "unavailable_formats": e.driver_problems() if hasattr(e, "driver_problems") else {},
            })
        except Exception as exc:  # noqa: BLE001
            rows.append({"name": e.name, "available": False, "reason": f"{type(exc).__name__}: {exc}"})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            state = "ok" if r.get("available") else f"unavailable ({r.get('reason')})"
            print(f"{r['name']:<22} {r.get('version', '-'):<32} read={','.join(r.get('read', []))} "
                  f"write={','.join(r.get('write', [])) or '-'} {state}")
            for fmt, why in r.get("unavailable_formats", {}).items():
                print(f"{'':<22}   unavailable {fmt}: {why}")
            for fmt, gaps in r.get("unsupported", {}).items():
                for feature, why in gaps.items():
                    print(f"{'':<22}   unsupported {fmt} {feature}: {why}")
    return EXIT_OK


def _benches() -> dict[str, Any]:
    """format -> its plugin, for every format with a benchmark (``main(argv) -> exit code``)."""
    from conformance import formats

    return {name: p for name, p in formats.all_formats().items() if p.bench}


def cmd_bench(args: argparse.Namespace) -> int:
    try:
        bench = _benches()[args.bench_format].load("bench")
    except ImportError as exc:
        raise CliError("not available", f"the {args.bench_format} benchmark cannot be imported ({exc})") from None
    try:
        return int(bench.main(list(args.bench_args or [])) or 0)
    except (ValueError, TypeError) as exc:
        raise CliError("usage error", f"bench {args.bench_format}: {exc}", f"see `lakeconf bench {args.bench_format} --help`") from None


# ----------------------------------------------------------------------------------------------
# Parser and entry point
# ----------------------------------------------------------------------------------------------


def _format_names() -> list[str]:
    try:
        from conformance import formats

        return formats.names()
    except Exception:  # noqa: BLE001 - --help must work even with a broken format package
        return []


def _version_docs() -> dict[str, str]:
    try:
        from conformance import formats

        return {name: p.versions for name, p in formats.all_formats().items()}
    except Exception:  # noqa: BLE001
        return {}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``lakeconf``."""
    p = _Parser(prog="lakeconf", description="Conformance kit for open table formats.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    r = sub.add_parser("run", help="build every case, read it with every engine, write results and reports")
    r.add_argument("--format", help=f"only cases of this format ({', '.join(_format_names())})")
    r.add_argument("--engines", help="comma-separated engine names (default: all known except spark, which starts "
                                      "a JVM: name it, or set LAKECONF_SPARK=1; see `lakeconf engines`)")
    r.add_argument("--store", choices=("local", "minio", "s3"), default="local",
                   help="where tables are built: local disk, a MinIO started for the run, or an existing S3 "
                        "endpoint (LAKECONF_S3_BUCKET + AWS_*)")
    r.add_argument("--out", default="out", help="output directory (results.json, report.md, report.html)")
    r.add_argument("--cases", help="comma-separated glob(s) on case ids, e.g. '<format>/checkpoint-*'")
    r.add_argument("--junit-xml", metavar="FILE", help="also write the cells as JUnit XML (one test case per cell; "
                                                        "known findings skipped with their reason)")
    r.add_argument("--engine-cmd", action="append", metavar="NAME=COMMAND", help="add a command-contract engine (repeatable)")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    r.add_argument("--in-process", action="store_true",
                   help="read in this process (faster start; an engine crash then ends the run)")
    r.add_argument("--serial", action="store_true",
                   help="one engine at a time, in plan order (by default engines work side by side)")
    r.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                   help="per-cell time limit for an isolated engine (default 300)")
    r.set_defaults(func=cmd_run)

    fz = sub.add_parser("fuzz", help="send hostile-input mutants of the seed tables to engines: crashes, hangs and "
                                     "outside content become findings with their reproducers")
    fz.add_argument("--engines", required=True, help="comma-separated engine names (see `lakeconf engines`)")
    fz.add_argument("--format", help="only this format (default: every format with a hostile-input spec)")
    fz.add_argument("--mutants", type=int, default=200, help="mutants per format (default 200)")
    fz.add_argument("--seed", type=int, default=0)
    fz.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="per read (default 60)")
    fz.add_argument("--out", default="fuzz-out", help="findings.json and one reproducer directory per finding")
    fz.set_defaults(func=cmd_fuzz)

    g = sub.add_parser("golden", help="golden files")
    gsub = g.add_subparsers(dest="golden_command", metavar="ACTION", parser_class=_Parser)
    gr = gsub.add_parser("regenerate", help="rewrite golden/ from the case declarations")
    gr.add_argument("--check", action="store_true", help="write nothing; exit non-zero on any drift")
    gr.set_defaults(func=cmd_golden)

    v = sub.add_parser("validate", help="check one table against the spec rules")
    v.add_argument("location", metavar="PATH_OR_URI", help="a table's root" + _naming_files()
                   + "; a local path, file:// or s3:// URI")
    v.add_argument("--json", action="store_true", help="print {table, format, violations: [{rule, message, where}]}")
    v.set_defaults(func=cmd_validate)

    rd = sub.add_parser("read", help="read a table with the reference reader into a Parquet (or Arrow IPC) file")
    rd.add_argument("location", metavar="PATH_OR_URI", help="a table's root" + _naming_files()
                    + "; a local path, file:// or s3:// URI")
    rd.add_argument("--at", type=int, metavar="VERSION",
                    help="the kit's version number (default: latest); per format: "
                         + "; ".join(f"{n}: {v}" for n, v in _version_docs().items()))
    for flag, (sel, fmts) in _selectors().items():
        rd.add_argument(flag, dest=_dest(flag), type=sel.kind, metavar=sel.keyword.upper(),
                        help="; ".join(f"{fmt}: {text}" for fmt, text in fmts))
    rd.add_argument("--out", required=True, metavar="FILE.parquet", help="output file (.arrow/.feather/.ipc: Arrow IPC)")
    rd.set_defaults(func=cmd_read)

    fd = sub.add_parser("findings", help="the findings registry: verify that every entry still reproduces")
    fsub = fd.add_subparsers(dest="findings_cmd", required=True)
    fv = fsub.add_parser("verify", help="run each entry's own cells (its cases, engines, writers, on --store) and "
                                        "fail on an entry that no longer reproduces or no longer explains its cells")
    fv.add_argument("--format", help=f"only this format's entries ({', '.join(_format_names())})")
    fv.add_argument("--ids", help="comma-separated finding ids")
    fv.add_argument("--store", choices=("local", "minio", "s3"), default="local",
                    help="where to build the tables (entries for other stores are reported unreachable)")
    fv.add_argument("--results", metavar="FILE", help="judge this results.json instead of running the cells")
    fv.add_argument("--out", default="findings-out", help="where the verification run writes results.json")
    fv.add_argument("--timeout", type=float, default=None, help="per-cell time limit for an isolated engine")
    fv.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    fv.set_defaults(func=cmd_findings_verify)
    fe = fsub.add_parser("export", help="a self-contained folder per engine-bug finding (table, expected rows, a "
                                        "script using only the engine's public API, the spec clause) to file upstream")
    fe.add_argument("dir", help="output directory (one folder per finding)")
    fe.add_argument("--format", help=f"only this format's entries ({', '.join(_format_names())})")
    fe.add_argument("--ids", help="comma-separated finding ids")
    fe.set_defaults(func=cmd_findings_export)

    c = sub.add_parser("coverage", help="per format, how many catalogued rules have an executable check")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_coverage)

    rp = sub.add_parser("report", help="re-render report.md and report.html from a results.json")
    rp.add_argument("results", metavar="results.json")
    rp.add_argument("--out", help="output directory (default: next to results.json)")
    rp.add_argument("--junit-xml", metavar="FILE", help="also write the cells as JUnit XML")
    rp.set_defaults(func=cmd_report)

    cs = sub.add_parser("cases", help="list the registry's cases")
    cs.add_argument("--format", help="only cases of this format")
    cs.add_argument("--cases", help="comma-separated glob(s) on case ids")
    cs.add_argument("--json", action="store_true")
    cs.set_defaults(func=cmd_cases)

    e = sub.add_parser("engines", help="list the known engines, their versions and capabilities")
    e.add_argument("--json", action="store_true")
    e.add_argument("--engine-cmd", action="append", metavar="NAME=COMMAND")
    e.set_defaults(func=cmd_engines)

    b = sub.add_parser("bench", help="benchmarks")
    bsub = b.add_subparsers(dest="bench_format", metavar="FORMAT", parser_class=_Parser)
    for fmt, plugin in _benches().items():
        bd = bsub.add_parser(fmt, help=f"the {plugin.title} benchmark", add_help=False)
        bd.add_argument("bench_args", nargs=argparse.REMAINDER, help="the benchmark's own options (--help lists them)")
        bd.set_defaults(func=cmd_bench)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that the run's clean-up runs as on a Ctrl-C: without it
    Python ends at once, and a MinIO started for the run (a session of its own, so that a Ctrl-C
    meant for the run does not hit it first) outlives the run with its data."""


def _on_sigterm(signum, frame) -> None:  # noqa: ARG001 - the signal module's signature
    raise Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lakeconf`` console script; returns the exit code."""
    import signal
    import threading

    here = threading.current_thread() is threading.main_thread()  # only the main thread may set handlers
    previous = signal.signal(signal.SIGTERM, _on_sigterm) if here else None
    try:
        return _main(argv)
    finally:
        if here:
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        # argparse's REMAINDER cannot pass leading --options through a sub-command, so the
        # benchmark's own options (``bench <format> --files N``) are split off before parsing.
        if argv[:1] == ["bench"] and argv[1:2] and argv[1] in _benches() and len(argv) > 2:
            args = parser.parse_args(argv[:2])
            args.bench_args = argv[2:]
        else:
            args = parser.parse_args(argv)
        func = getattr(args, "func", None)
        if func is None:
            missing = {"golden": "regenerate", "bench": "FORMAT"}.get(getattr(args, "command", None) or "")
            raise CliError(
                "usage error",
                f"missing {'action ' + repr(missing) if missing else 'command'}",
                "see `lakeconf --help`",
            )
        return func(args)
    except CliError as exc:
        print(exc.line(), file=sys.stderr)
        return exc.code
    except Terminated:
        print("lakeconf: terminated (SIGTERM); what it had started is stopped", file=sys.stderr)
        return 128 + 15
    except KeyboardInterrupt:
        print("lakeconf: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (`lakeconf engines | head -1`): not an error of the
        # kit. Point stdout at /dev/null so that the interpreter's final flush stays quiet, and
        # end as a C tool killed by SIGPIPE would.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 128 + 13
    except SystemExit as exc:  # --help and friends
        return int(exc.code or 0) if isinstance(exc.code, int) else EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the promise: one line, never a traceback
        print(
            redact(f"lakeconf: internal error: {type(exc).__name__}: {' '.join(str(exc).split())}. "
                   "This is a lakeconf bug; set LAKECONF_DEBUG=1 for the traceback"),
            file=sys.stderr,
        )
        if os.environ.get("LAKECONF_DEBUG"):
            raise
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``lakeconf fuzz``: the hostile-input mutants sent to published readers, each engine in its worker.

An engine is not held to the kit's error kinds (it has its own), so what counts here is what no
reader should ever do with a damaged table:

* **crash**: the worker process died (a signal, an abort), taking the engine with it;
* **hang**: no answer within the timeout (the worker is killed and restarted);
* **outside content**: the answer holds rows from outside the table root. The copy the mutants'
  links and path attacks point at has its data files rewritten with marker values
  (``LAKECONF-OUTSIDE``, 424242), so a reader that follows them returns markers.

Every such outcome is a finding, written to ``<out>/findings.json`` with the mutant kept as its
reproducer (``<out>/<engine>-<format>-<n>/table``, put back at the path in ``mutant.json`` before
reading: some formats record absolute locations). Refusals and successful reads are counted only.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from conformance.hostile import build_seeds, make_mutant, spec_of

MARK_TEXT = "LAKECONF-OUTSIDE"
MARK_INT = 424242
TIMEOUT_S = 60.0


def _mark_parquet(path: str) -> bool:
    """Rewrite a Parquet data file in place with marker values (same schema, field ids kept)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # the file alone: read_table would add partition columns from a Hive-style directory name
        table = pq.ParquetFile(path).read()
    except Exception:  # noqa: BLE001 - not a data file the marker can go into: left as it is
        return False
    cols = []
    for f, col in zip(table.schema, table.columns):
        t = f.type
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            col = pa.array([MARK_TEXT] * len(col), t)
        elif pa.types.is_integer(t) and t.bit_width >= 32:
            col = pa.array([MARK_INT] * len(col), t)
        cols.append(col)
    pq.write_table(pa.Table.from_arrays(cols, schema=table.schema), path)
    return True


def _marked_copies(seeds: dict[str, tuple[str, str]], spec: Any, into: str) -> dict[str, str]:
    """Per seed, a copy of its pristine table whose data files hold marker values."""
    out = {}
    for case, (_root, pristine) in seeds.items():
        dest = os.path.join(into, case.replace("/", "__"))
        shutil.copytree(pristine, dest, symlinks=True)
        for dirpath, _dirs, names in os.walk(dest):
            for n in names:
                rel = os.path.relpath(os.path.join(dirpath, n), dest).replace(os.sep, "/")
                kind = spec.kind_of(rel)
                if kind is not None and kind.name == "data":
                    _mark_parquet(os.path.join(dirpath, n))
        out[case] = dest
    return out


def has_marker(table: Any) -> bool:
    """Whether an Arrow table holds a marker value anywhere (nested columns flattened)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def scan(arr: Any) -> bool:
        t = arr.type
        if pa.types.is_struct(t):
            return any(scan(arr.field(i)) for i in range(t.num_fields))
        if pa.types.is_list(t) or pa.types.is_large_list(t):
            return scan(arr.flatten())
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return bool(pc.any(pc.equal(arr, MARK_TEXT)).as_py())
        if pa.types.is_integer(t) and t.bit_width >= 32:
            return bool(pc.any(pc.equal(arr, MARK_INT)).as_py())
        return False

    for col in table.columns:
        chunked = col.combine_chunks() if hasattr(col, "combine_chunks") else col
        if len(chunked) and scan(chunked):
            return True
    return False


@dataclass(slots=True)
class FuzzReport:
    mutants: int = 0
    outcomes: Counter = field(default_factory=Counter)  # (engine, format, outcome) -> count
    findings: list[dict] = field(default_factory=list)
    seconds: float = 0.0

    def render(self) -> str:
        lines = [f"lakeconf fuzz: {self.mutants} mutants in {self.seconds:.0f}s, {len(self.findings)} finding(s)"]
        for (e, f, o), n in sorted(self.outcomes.items()):
            lines.append(f"  {e:22} {f:8} {o:16} {n:6}")
        for x in self.findings[:40]:
            lines.append(f"  FINDING {x['engine']} {x['format']} {x['outcome']}: {x['mutation']} of {x['target']} "
                         f"({x['what']}) -> {x['detail'][:200]}")
        return "\n".join(lines)


def fuzz(engines: Sequence[Any], formats: Sequence[str], mutants: int, work: str, out: str, *, seed: int = 0,
         timeout: float = TIMEOUT_S, progress: Callable[[str], None] | None = None) -> FuzzReport:
    """Send ``mutants`` mutants of each format to each engine (``Engine`` objects) that reads it."""
    from conformance.isolation import RemoteError, Worker, WorkerDied, engine_spec
    from conformance.model import TableRef

    workers = {}
    for e in engines:
        spec_ = engine_spec(e)
        if spec_ is None:
            raise ValueError(f"engine {e.name} cannot be rebuilt in a worker process (its class needs arguments)")
        workers[e.name] = Worker(e.name, spec_, timeout=timeout)
    report = FuzzReport()
    started = time.monotonic()
    os.makedirs(out, exist_ok=True)
    try:
        for fmt in formats:
            spec = spec_of(fmt)
            if spec is None:
                raise LookupError(f"format {fmt} declares no hostile-input spec")
            readers = [e for e in engines if fmt in e.capabilities().read and not e.available()]
            if not readers:
                continue
            seeds = build_seeds(fmt, spec, os.path.join(work, "seeds", fmt))
            marked = _marked_copies(seeds, spec, os.path.join(work, "marked", fmt))
            for i in range(mutants):
                m = make_mutant(fmt, spec, seeds, i, os.path.join(work, "mutant"), seed=seed, outside_source=marked)
                report.mutants += 1
                for e in readers:
                    try:
                        table = workers[e.name].call("read", TableRef(format=fmt, uri=m.root), timeout=timeout)
                        outcome, detail = ("outside content", "rows from outside the root") if has_marker(table) else ("read", "")
                    except WorkerDied as exc:
                        outcome = "hang" if "did not answer" in str(exc) else "crash"
                        detail = str(exc)
                    except RemoteError as exc:
                        outcome, detail = "refused", str(exc)
                    except Exception as exc:  # noqa: BLE001 - an error of the engine, raised in process
                        outcome, detail = "refused", f"{type(exc).__name__}: {exc}"
                    report.outcomes[(e.name, fmt, outcome)] += 1
                    if outcome in ("crash", "hang", "outside content"):
                        dest = os.path.join(out, f"{e.name}-{fmt}-{i:06d}")
                        shutil.rmtree(dest, ignore_errors=True)
                        shutil.copytree(m.root, os.path.join(dest, "table"), symlinks=True)
                        finding = {"engine": e.name, "version": e.version(), "format": fmt, "outcome": outcome,
                                   "detail": " ".join(detail.split())[:2000], "seed": m.seed_case, "target": m.target,
                                   "kind": m.kind, "mutation": m.mutation, "what": m.what, "root": m.root,
                                   "reproducer": dest}
                        with open(os.path.join(dest, "mutant.json"), "w") as fh:
                            json.dump({"mutant": {k: getattr(m, k) for k in m.__slots__}, "finding": finding}, fh, indent=1)
                        report.findings.append(finding)
                if progress and (i + 1) % 50 == 0:
                    progress(f"fuzz: {fmt} {i + 1}/{mutants} mutants, {len(report.findings)} finding(s), "
                             f"{time.monotonic() - started:.0f}s")
    finally:
        for w in workers.values():
            w.close()
    report.seconds = time.monotonic() - started
    with open(os.path.join(out, "findings.json"), "w") as fh:
        json.dump({"mutants": report.mutants, "seconds": round(report.seconds, 1),
                   "outcomes": [{"engine": e, "format": f, "outcome": o, "count": n} for (e, f, o), n in sorted(report.outcomes.items())],
                   "findings": report.findings}, fh, indent=1)
    return report

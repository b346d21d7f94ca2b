"""The benchmark harness every format's benchmark uses: fresh-process timing, memory, ratios.

A format's benchmark (its plugin's ``bench`` module) builds a table, then asks each engine to do
the same work ``repeat`` times, each time in a fresh subprocess (``python -m <module> _measure
ENGINE PATH``), so one engine's caches and allocator never help or hurt the other and the peak
resident set size is that process's own. Runs are interleaved so that drift hits every engine
alike, and the first engine alternates, since the first big process of a run pays for memory the
(virtual) machine has not handed out yet. ``aggregate`` turns the runs into medians and peaks,
``compare`` into ratios. Measure here, never in timed tests.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Sequence

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def say(msg: str) -> None:
    """Progress on stderr (the result goes to stdout)."""
    print(msg, file=sys.stderr, flush=True)


def maxrss_mb() -> float:
    """Peak resident set size of this process in MB.

    Linux keeps ru_maxrss across fork+exec (it starts at the parent's peak), so a child spawned by
    a big parent would report the parent's figure; VmHWM belongs to this process's own memory map.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def loadavg() -> list[float] | None:
    """The machine's load averages when timing began (a busy machine skews wall times)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float, float]:
    """``fn()``'s result, wall seconds, CPU seconds, and the RSS before it ran (imports done)."""
    baseline = maxrss_mb()
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c, baseline


def measure_in_child(module: str, engine: str, path: str, *, profile: bool = False) -> dict:
    """Run ``python -m <module> _measure <engine> <path>`` in a fresh process and return its figures
    (the last stdout line, JSON; a profile before it)."""
    args = [sys.executable, "-m", module, "_measure", engine, path] + (["--profile"] if profile else [])
    proc = subprocess.run(args, capture_output=True, text=True, cwd=PROJECT_ROOT)
    if proc.returncode != 0:
        return {"engine": engine, "error": (proc.stderr or proc.stdout).strip()[-2000:]}
    lines = proc.stdout.strip().splitlines()
    out = json.loads(lines[-1])
    if profile:
        out["profile"] = "\n".join(lines[:-1])
    return out


def profile_call(fn: Callable[[str], Any], path: str) -> str:
    """cProfile of ``fn(path)``: the 25 costliest calls by cumulative and 20 by own time."""
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    fn(path)
    prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(25)
    stats.sort_stats("tottime").print_stats(20)
    return buf.getvalue()


def interleaved(engines: Sequence[str], repeat: int, child: Callable[[str], dict],
                show: Callable[[dict], str]) -> dict[str, list[dict]]:
    """``repeat`` rounds of one child run per engine, the first engine alternating each round."""
    runs: dict[str, list[dict]] = {e: [] for e in engines}
    for i in range(repeat):
        order = list(engines) if i % 2 == 0 else list(reversed(engines))
        for engine in order:
            r = child(engine)
            runs[engine].append(r)
            say(f"  run {i + 1}/{repeat} {engine}: " + (show(r) if "error" not in r else "ERROR " + r["error"][-300:]))
    return runs


def aggregate(rs: list[dict], keep: Sequence[str] = ()) -> dict:
    """Medians, all wall times and peaks of one engine's runs (``keep``: fields copied from the first run)."""
    ok = [r for r in rs if "error" not in r]
    if not ok:
        return {"error": rs[0]["error"] if rs else "no runs"}
    out = {
        "median_seconds": round(statistics.median(r["seconds"] for r in ok), 4),
        # CPU time over all threads: less sensitive to a busy machine, but an engine may use several threads.
        "median_cpu_seconds": round(statistics.median(r["cpu_seconds"] for r in ok), 4),
        "all_seconds": [round(r["seconds"], 4) for r in ok],
        "peak_rss_mb": max(r["maxrss_mb"] for r in ok),
        "baseline_rss_mb": max(r["baseline_rss_mb"] for r in ok),
    }
    for key in keep:
        out[key] = ok[0][key]
    return out


def ratios(ours: dict, peer: dict) -> dict:
    """``ratio`` (wall) and ``cpu_ratio`` of the reference over the peer (None when a side failed)."""
    if "median_seconds" not in ours or "median_seconds" not in peer:
        return {"ratio": None, "cpu_ratio": None}
    return {
        "ratio": round(ours["median_seconds"] / peer["median_seconds"], 2) if peer["median_seconds"] else None,
        "cpu_ratio": round(ours["median_cpu_seconds"] / peer["median_cpu_seconds"], 2) if peer["median_cpu_seconds"] else None,
    }


def verdict_lines(result: dict, peer: str, *, agree: str, work: str) -> list[str]:
    """The summary's end: the ratio against the target, the findings (or ``agree``), the profile of
    one reference ``work`` when it was taken."""
    lines = []
    if result.get("ratio") is not None:
        verdict = "within" if result["ratio"] <= result["target_ratio"] else "OVER"
        lines.append(f"  ratio reference/{peer}: {result['ratio']}x wall ({verdict} the {result['target_ratio']}x target), "
                     f"{result.get('cpu_ratio')}x CPU")
    lines += [f"  FINDING: {f}" for f in result["findings"]] or [f"  {agree}"]
    if result.get("profile"):
        lines.append(f"  cProfile of one reference {work}:")
        lines.extend("    " + ln for ln in result["profile"].splitlines())
    return lines


def engine_line(name: str, r: dict, extra: str = "") -> str:
    """One summary line for an engine's aggregated runs."""
    if "error" in r:
        return f"  {name:9}: ERROR {r['error'][-300:]}"
    return (f"  {name:9}: median {r['median_seconds']:.3f}s wall, {r['median_cpu_seconds']:.3f}s CPU (runs {r['all_seconds']}), "
            f"peak RSS {r['peak_rss_mb']} MB (after imports {r['baseline_rss_mb']} MB){extra}")


def validation_in_child(fmt: str, path: str) -> dict:
    """The reference validator of ``fmt`` on the table at ``path``, timed in a fresh process:
    wall and CPU seconds, peak RSS (VmHWM) and the RSS after imports, and the violation count."""
    code = (
        "import json, sys\n"
        "from conformance.bench import maxrss_mb, timed\n"
        "from reference_impl import formats\n"
        "from reference_impl.storage import open_storage\n"
        "validate = formats.get(sys.argv[1]).load('validator')\n"
        "found, wall, cpu, base = timed(lambda: validate(open_storage(sys.argv[2])))\n"
        "print(json.dumps({'wall': wall, 'cpu': cpu, 'peak_mb': maxrss_mb(), 'baseline_mb': base, 'violations': len(found)}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, fmt, path], capture_output=True, text=True, cwd=PROJECT_ROOT)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip()[-2000:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def validation_line(what: str, figures: dict) -> str:
    """One line of a validation benchmark."""
    if "error" in figures:
        return f"{what}: validation failed: {figures['error'].splitlines()[-1]}"
    return (f"{what}: validated in {figures['wall']:.2f}s wall, {figures['cpu']:.2f}s CPU, peak {figures['peak_mb']:.0f} MB "
            f"({figures['baseline_mb']:.0f} MB after imports), {figures['violations']} violation(s)")


def fit_exponent(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """The least-squares slope of log(y) over log(x): y ~ x^k (None with fewer than two usable points)."""
    import math

    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if not sxx:
        return None
    return round(sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx, 2)


def growth(xs: Sequence[float], rows: Sequence[dict]) -> dict[str, float | None]:
    """The fitted growth exponents of one engine over sizes ``xs``: median wall time, CPU time, and peak RSS
    above the post-import baseline (``rows``: the engine's aggregate at each size)."""
    return {
        "wall": fit_exponent(xs, [r.get("median_seconds") for r in rows]),
        "cpu": fit_exponent(xs, [r.get("median_cpu_seconds") for r in rows]),
        "rss_above_baseline": fit_exponent(xs, [(r["peak_rss_mb"] - r["baseline_rss_mb"]) if "peak_rss_mb" in r
                                                else None for r in rows]),
    }


def parse_sizes(text: str) -> list[int]:
    """A benchmark's list of sizes from the command line: ``10000,100_000,1000000``."""
    return [int(x.replace("_", "")) for x in text.split(",") if x.strip()]


def scaled(totals: Sequence[int], run_at: Callable[[int], tuple[int, dict, dict]], engines: Sequence[str], unit: str) -> dict:
    """A format's benchmark at several sizes and the fitted growth of each engine's cost.

    ``run_at(total)`` builds and measures the table of about ``total`` ``unit`` and returns (the size
    actually built, the benchmark's result, extra columns for the size's row). The result has one row
    per size (each engine's medians and peaks), the growth exponents per engine, and the findings.
    """
    points = []
    for total in totals:
        say(f"size {total:,} {unit}")
        points.append(run_at(total))
    out: dict[str, Any] = {"unit": unit, "engines": list(engines), "sizes": [], "exponents": {}, "findings": []}
    for size, r, extra in points:
        row = {"size": size, **extra, "build_seconds": r["built"].get("build_seconds"), "ratio": r.get("ratio"),
               "cpu_ratio": r.get("cpu_ratio"), "load_average": r.get("load_average")}
        for engine in engines:
            e = r.get(engine, {})
            row[engine] = {k: e[k] for k in ("median_seconds", "median_cpu_seconds", "peak_rss_mb", "baseline_rss_mb", "error")
                           if e.get(k) is not None}
        out["sizes"].append(row)
        out["findings"] += [f"{size:,} {unit}: {f}" for f in r["findings"]]
    xs = [row["size"] for row in out["sizes"]]
    for engine in engines:
        out["exponents"][engine] = growth(xs, [row[engine] for row in out["sizes"]])
    return out


def scale_summary(out: dict, title: str, *, agree: str, detail: Callable[[dict], str] = lambda row: "") -> str:
    """The printable table of ``scaled``'s result: per size, each engine's median wall and CPU time, peak RSS
    (and above the post-import baseline), the ratio of the first engine over the second, then the growth exponents."""
    unit = out["unit"]
    lines = [f"{title} by size ({unit}): median wall / CPU, peak RSS (+ above the RSS after imports)"]
    for row in out["sizes"]:
        parts = []
        for engine in out["engines"]:
            e = row[engine]
            if "median_seconds" in e:
                parts.append(f"{engine} {e['median_seconds']:.3f}s / {e['median_cpu_seconds']:.3f}s CPU, "
                             f"{e['peak_rss_mb']:.0f} MB (+{e['peak_rss_mb'] - e['baseline_rss_mb']:.0f})")
            else:
                parts.append(f"{engine} ERROR")
        lines.append(f"  {row['size']:>9,} {unit}{detail(row)}: " + "; ".join(parts)
                     + f"; ratio {row['ratio']}x wall, {row['cpu_ratio']}x CPU, load {row['load_average']}")
    for engine, ex in out["exponents"].items():
        lines.append(f"  growth exponent {engine}: wall {ex['wall']}, CPU {ex['cpu']}, RSS above baseline {ex['rss_above_baseline']} "
                     f"(cost ~ {unit}^k; 1 is linear)")
    lines += [f"  FINDING: {f}" for f in out["findings"]] or [f"  {agree} at every size"]
    return "\n".join(lines)

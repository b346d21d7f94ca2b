"""results.json: its shape (one place), loading with a clear error, and writing."""

from __future__ import annotations

import json
import os
from typing import Any

from conformance.model import STATUSES
from conformance.writer_checks import CHECK_STATUSES

TOP_KEYS = {"generated_at": str, "store": str, "engines": list, "results": list}
ENGINE_KEYS = {"name": str, "version": str, "roles": list}
RESULT_KEYS = {
    "case": str, "format": str, "writer": str, "reader": str, "version": (int, type(None)),
    "status": str, "message": str, "seconds": (int, float), "rules": list,
}


class ResultsError(Exception):
    """results.json is missing, not JSON, or not the documented shape."""


def problems(doc: Any) -> list[str]:
    """Every way ``doc`` departs from the results.json schema (empty list: valid)."""
    out: list[str] = []
    if not isinstance(doc, dict):
        return ["top level is not a JSON object"]
    for key, typ in TOP_KEYS.items():
        if not isinstance(doc.get(key), typ):
            out.append(f"top-level key {key!r} missing or not {typ.__name__}")
    engines = doc.get("engines") if isinstance(doc.get("engines"), list) else []
    results = doc.get("results") if isinstance(doc.get("results"), list) else []
    for i, e in enumerate(engines):
        for key, typ in ENGINE_KEYS.items():
            if not isinstance(e, dict) or not isinstance(e.get(key), typ):
                out.append(f"engines[{i}].{key} missing or wrong type")
    for i, r in enumerate(results):
        if not isinstance(r, dict):
            out.append(f"results[{i}] is not an object")
            continue
        for key, typ in RESULT_KEYS.items():
            if key not in r or not isinstance(r[key], typ) or (key == "version" and isinstance(r[key], bool)):
                out.append(f"results[{i}].{key} missing or wrong type")
        found = r.get("finding")
        if found is not None and not (
            isinstance(found, dict) and isinstance(found.get("cause"), str) and isinstance(found.get("spec"), str)
        ):
            out.append(f"results[{i}].finding is not an object with 'cause' and 'spec' strings")
        if r.get("status") not in STATUSES:
            out.append(f"results[{i}].status {r.get('status')!r} is not one of {', '.join(STATUSES)}")
        if len(out) > 20:
            out.append("...")
            break
    checks = doc.get("writer_checks", [])  # absent in files written before writers were judged
    if not isinstance(checks, list):
        out.append("top-level key 'writer_checks' is not a list")
        checks = []
    for i, e in enumerate(checks):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("case", "writer", "status")) \
                or not isinstance(e.get("violations"), list):
            out.append(f"writer_checks[{i}] lacks case/writer/status strings or a violations list")
        elif e["status"] not in CHECK_STATUSES:
            out.append(f"writer_checks[{i}].status {e['status']!r} is not one of {', '.join(CHECK_STATUSES)}")
        if len(out) > 20:
            out.append("...")
            break
    return out


def load_results(path: str) -> dict[str, Any]:
    """Read and check a results.json; ``ResultsError`` says what is wrong."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        raise ResultsError(f"{path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path} is not JSON (line {exc.lineno}: {exc.msg})") from None
    found = problems(doc)
    if found:
        raise ResultsError(f"{path} is not a lakeconf results file: {'; '.join(found[:3])}")
    return doc


def write_results(doc: dict[str, Any], out_dir: str) -> str:
    """Write ``results.json`` in ``out_dir`` (sorted keys, stable for diffs); return its path."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "results.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True, default=str)
        fh.write("\n")
    return path

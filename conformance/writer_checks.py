"""Writer conformance: the reference validator judges every table a writer builds.

A reader cell says whether an engine read a table right; nothing there says whether the table was
written right, and a writer that breaks a MUST rule goes unseen until some reader chokes on it.
So after each build, the format's reference validator checks the table, and each (case, writer,
store) gets one entry in results.json (``writer_checks``) with the violations by rule id and the
validator's time.

Each violation is accounted for in one of two ways, or it is *unexplained*:

* the case declares it (``Case.violates``: a negative case, a layout readers must still read): the
  rule is broken by design, whoever built the table;
* a writer-side finding of the registry explains it (``status="violation"``, the writer's name in
  ``writers``, the rule in ``rules``, its ``pattern`` in the validator's message), seen with this
  version of the writer.

The reference writer is held to more: on its tables the validator must flag exactly the rules the
case declares (no more: a reference writer bug or a validator mistake; no fewer: a check that no
longer fires). An unexplained violation fails the run and the suites exactly as an unexplained
reader cell does.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Iterable, Mapping

from conformance.model import Case, TableRef

REFERENCE = "reference"
# clean: no violation; violations: some, each listed; error: the validator could not judge the table
CHECK_STATUSES = ("clean", "violations", "error")
_MESSAGE_MAX = 400


def validate(table: TableRef) -> list[dict[str, str]]:
    """The reference validator's violations of the table at ``table`` (``rule``, ``message``, ``where``).

    A table the validator refuses as a whole (not a table of its format at all) is one violation
    with the rule the refusal names; any other error propagates (the caller records it).
    """
    from conformance.engines.reference import storage_for
    from reference_impl import formats
    from reference_impl.errors import InvalidTable

    validator = formats.get(table.format).load("validator")  # known: the caller asked ``judged``
    try:
        found = validator(storage_for(table))
    except InvalidTable as exc:
        return [{"rule": getattr(exc, "rule", None) or "", "message": _short(str(exc)), "where": ""}]
    return [{"rule": v.rule, "message": _short(v.message), "where": v.where or ""} for v in found]


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MESSAGE_MAX else text[: _MESSAGE_MAX - 1] + "\u2026"


def explain_violation(
    case_id: str, writer: str, rule: str, message: str, *, store: str = "local", writer_version: str | None = None,
    registry: Iterable[Any] | None = None,
) -> Any | None:
    """The registry's writer-side finding for one violation of ``writer``'s table, or None."""
    from conformance.findings import violation_findings

    for f in violation_findings(registry):
        if rule not in f.rules or not f.covers(case_id, "*", writer, store):
            continue
        if not f.matches(f"{rule}: {message}"):
            continue
        if writer_version is not None and not f.seen_with(writer, writer_version):
            continue
        return f
    return None


def judge(case: Case, writer: str, violations: list[dict[str, str]], *, store: str, writer_version: str | None,
          registry: Iterable[Any] | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Each violation with what accounts for it (``declared`` or ``finding``), and the declared
    rules the reference writer's table should have broken but did not (``missing``)."""
    declared = set(case.violates)
    out = []
    for v in violations:
        v = dict(v)
        if v["rule"] in declared:
            v["declared"] = True
        else:
            f = explain_violation(case.id, writer, v["rule"], v["message"], store=store, writer_version=writer_version,
                                  registry=registry)
            if f is not None:
                v["finding"] = f.to_dict()
        out.append(v)
    missing = sorted(declared - {v["rule"] for v in violations}) if writer == REFERENCE else []
    return out, missing


def judged(fmt: str) -> bool:
    """Whether the reference validates tables of ``fmt`` (a format a plugin adds may have no reference)."""
    from reference_impl import formats

    return any(f.name == fmt for f in formats.all_formats())


def check(case: Case, writer: str, table: TableRef, *, store: str, writer_version: str | None = None,
          validate_fn: Callable[[TableRef], list[dict[str, str]]] | None = None) -> dict[str, Any] | None:
    """The results.json ``writer_checks`` entry of ``writer``'s build of ``case`` (None: no reference
    validator for the format, nothing to judge). ``validate_fn`` runs ``validate`` elsewhere (the run's
    validator process)."""
    if not judged(case.format):
        return None
    entry: dict[str, Any] = {"case": case.id, "format": case.format, "writer": writer, "store": store}
    started = time.perf_counter()
    try:
        found = (validate_fn or validate)(table)
    except Exception as exc:  # noqa: BLE001 - a validator that cannot judge is recorded, never fatal to the run
        entry |= {"status": "error", "seconds": round(time.perf_counter() - started, 3),
                  "message": _short(f"{type(exc).__name__}: {exc}"), "violations": [], "missing": []}
        return entry
    seconds = round(time.perf_counter() - started, 3)
    violations, missing = judge(case, writer, found, store=store, writer_version=writer_version)
    entry |= {"status": "violations" if violations else "clean", "seconds": seconds,
              "violations": violations, "missing": missing}
    return entry


def unexplained(entry: Mapping[str, Any]) -> list[str]:
    """What in one entry nothing accounts for, one line each (empty: the entry is fine)."""
    out = []
    if entry.get("status") == "error":
        out.append(f"the validator failed: {entry.get('message', '')}")
    for v in entry.get("violations", ()):
        if entry.get("writer") == REFERENCE and not v.get("declared"):
            # The reference's own table: only what the case declares may be broken.
            out.append(f"{v['rule']}: {v['message']}" + (f" ({v['where']})" if v.get("where") else ""))
        elif not v.get("declared") and not isinstance(v.get("finding"), Mapping):
            out.append(f"{v['rule']}: {v['message']}" + (f" ({v['where']})" if v.get("where") else ""))
    for rule in entry.get("missing", ()):
        out.append(f"{rule}: declared by the case but not flagged on the reference writer's table")
    return out


def rules_by_writer(entries: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """writer -> rule -> {cases, message, findings, declared, unexplained}: the writers x rules view."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for e in entries:
        for v in e.get("violations", ()):
            row = out.setdefault(e["writer"], {}).setdefault(v["rule"], {
                "cases": [], "message": v["message"], "findings": [], "declared": 0, "unexplained": 0})
            if e["case"] not in row["cases"]:
                row["cases"].append(e["case"])
            f = v.get("finding")
            if isinstance(f, Mapping) and f.get("id") not in row["findings"]:
                row["findings"].append(f["id"])
            if v.get("declared"):
                row["declared"] += 1
            elif not isinstance(f, Mapping) or e["writer"] == REFERENCE:
                row["unexplained"] += 1
    return out

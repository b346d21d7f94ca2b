"""Check registry: which named check function reports which Iceberg rule ids."""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from reference_impl.iceberg.types import Violation

RULE_PREFIX = "ICEBERG-"

CheckFn = Callable[..., Iterable[Violation]]
CHECK_FUNCTIONS: list[CheckFn] = []
CHECKS: dict[str, CheckFn] = {}


def rid(rule: str) -> str:
    """The full rule id of a short one ('META-001' -> 'ICEBERG-META-001')."""
    return rule if rule.startswith(RULE_PREFIX) else RULE_PREFIX + rule


def check(*rules: str, blocker: bool = False, relay: bool = False) -> Callable[[CheckFn], CheckFn]:
    """Register a check as the executable check of ``rules`` (short ids ok).

    A check may report only the rules it declares, except a ``relay`` check, which passes on what
    a shared reader or validator found (a parse error names whatever rule the parser tripped on;
    those rules stay unclaimed unless listed). ``blocker`` checks say why a file could not be
    read at all; their findings are dropped for a file that another check already explained.
    """
    ids = tuple(rid(r) for r in rules)

    def deco(fn: CheckFn) -> CheckFn:
        def run(ctx) -> Iterator[Violation]:
            for v in fn(ctx):
                if v.rule not in ids and not relay:
                    raise AssertionError(f"{fn.__name__} reported undeclared rule {v.rule}")
                yield v

        run.__name__ = fn.__name__
        run.__doc__ = fn.__doc__
        run.rules = ids  # type: ignore[attr-defined]
        run.blocker = blocker  # type: ignore[attr-defined]
        CHECK_FUNCTIONS.append(run)
        for r in ids:
            CHECKS.setdefault(r, run)
        return run

    return deco


def V(rule: str, message: str, where: str) -> Violation:
    """Shorthand constructor taking a short rule id."""
    return Violation(rule=rid(rule), message=message, where=where)


def at(path: str, detail: str = "") -> str:
    """The ``where`` of a finding: the file (root-relative when inside the table), then the spot in it."""
    return f"{path}: {detail}" if detail else path

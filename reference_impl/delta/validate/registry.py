"""Check registry: which named check function reports which rule ids."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Iterator

RULE_PREFIX = "DELTA-"


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: its id, what is wrong, and where (file:line field)."""

    rule: str
    message: str
    where: str

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form (for ``lakeconf validate --json``)."""
        return {"rule": self.rule, "message": self.message, "where": self.where}


CheckFn = Callable[..., Iterable[Violation]]
CHECK_FUNCTIONS: list[CheckFn] = []
CHECKS: dict[str, CheckFn] = {}


def check(*rules: str) -> Callable[[CheckFn], CheckFn]:
    """Register a check function as the executable check of ``rules`` (short ids ok: 'LOG-001')."""
    ids = tuple(r if r.startswith(RULE_PREFIX) else RULE_PREFIX + r for r in rules)

    def deco(fn: CheckFn) -> CheckFn:
        def run(ctx) -> Iterator[Violation]:
            for v in fn(ctx):
                if v.rule not in ids:  # a check may only report the rules it declares
                    raise AssertionError(f"{fn.__name__} reported undeclared rule {v.rule}")
                yield v

        run.__name__ = fn.__name__
        run.__doc__ = fn.__doc__
        run.rules = ids  # type: ignore[attr-defined]
        CHECK_FUNCTIONS.append(run)
        for r in ids:
            CHECKS.setdefault(r, run)
        return run

    return deco


def V(rule: str, message: str, where: str) -> Violation:
    """Shorthand constructor taking a short rule id."""
    return Violation(rule if rule.startswith(RULE_PREFIX) else RULE_PREFIX + rule, message, where)

"""The validation framework every format's validator uses: violations, a registry of named checks, the runner.

A check is a named pure function over a format's parsed context that yields ``Violation``s; it is
registered as the executable check of the rule ids it may report (``CheckRegistry.check``), which
is also how ``lakeconf coverage`` counts rules with a check. The runner runs every check once,
keeps the first occurrence of each violation. A check that crashes is the kit's bug, never a
rule the table breaks: the runner finishes the other checks, then raises ``Internal`` naming
every check that crashed (the command line exits 2 for it, not 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from reference_impl.errors import Internal, LakeconfError

def at(path: str, detail: str = "") -> str:
    """The ``where`` of a violation: the file (root-relative when inside the table), then the spot in it."""
    return f"{path}: {detail}" if detail else path


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: its id, what is wrong, and where (the file and the spot in it)."""

    rule: str
    message: str
    where: str = ""

    def to_dict(self) -> dict[str, str]:
        """JSON-ready form (for ``lakeconf validate --json``)."""
        return {"rule": self.rule, "message": self.message, "where": self.where}


CheckFn = Callable[..., Iterable[Violation]]


class CheckRegistry:
    """The checks of one format, keyed by the rule ids they report (ids carry the format's prefix)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.functions: list[CheckFn] = []  # in registration order: the order they run in
        self.checks: dict[str, CheckFn] = {}  # rule id -> the first check that reports it

    def rid(self, rule: str) -> str:
        """The full rule id of a short one (``LOG-001`` -> ``<PREFIX>LOG-001``)."""
        return rule if rule.startswith(self.prefix) else self.prefix + rule

    def violation(self, rule: str, message: str, where: str = "") -> Violation:
        """A violation of ``rule`` (short ids accepted)."""
        return Violation(self.rid(rule), message, where)

    def check(self, *rules: str, blocker: bool = False, relay: bool = False) -> Callable[[CheckFn], CheckFn]:
        """Register a check as the executable check of ``rules`` (short ids accepted).

        A check may report only the rules it declares (reporting another is a bug, raised), except
        a ``relay`` check, which passes on what a shared parser found. ``blocker`` checks say why a
        file could not be read at all; the runner drops their findings for a file another check
        already explained.
        """
        ids = tuple(self.rid(r) for r in rules)

        def deco(fn: CheckFn) -> CheckFn:
            def run(ctx: Any) -> Iterator[Violation]:
                for v in fn(ctx):
                    if v.rule not in ids and not relay:
                        raise AssertionError(f"{fn.__name__} reported undeclared rule {v.rule}")
                    yield v

            run.__name__ = fn.__name__
            run.__doc__ = fn.__doc__
            run.rules = ids  # type: ignore[attr-defined]
            run.blocker = blocker  # type: ignore[attr-defined]
            self.functions.append(run)
            for r in ids:
                self.checks.setdefault(r, run)
            return run

        return deco

    def run(self, ctx: Any, *, explains: frozenset[str] = frozenset(), file_of: Callable[[str], str] | None = None) -> list[Violation]:
        """Every violation the checks find in ``ctx``, each once, in a stable order.

        Blocker checks run last; a blocker's finding about a file is dropped when a non-blocker
        already reported one of the ``explains`` rules for that file (``file_of(where)`` names it).
        """
        file_of = file_of or (lambda where: where)
        ordered = [fn for fn in self.functions if not getattr(fn, "blocker", False)]
        ordered += [fn for fn in self.functions if getattr(fn, "blocker", False)]
        out: list[Violation] = []
        seen: set[Violation] = set()
        explained: set[str] = set()
        crashed: list[str] = []
        first: Exception | None = None
        for fn in ordered:
            blocker = getattr(fn, "blocker", False)
            try:
                found = list(fn(ctx))
            except LakeconfError:
                raise  # the table cannot be examined at all (e.g. a link out of its root): a refusal, not a crash
            except Exception as exc:  # noqa: BLE001 - the kit's bug: finish the others, then say so
                crashed.append(f"{fn.__name__} ({type(exc).__name__}: {exc})")
                first = first or exc
                continue
            for v in found:
                if blocker and file_of(v.where) in explained:
                    continue
                if v not in seen:
                    seen.add(v)
                    out.append(v)
                    if not blocker and v.rule in explains:
                        explained.add(file_of(v.where))
        if crashed:
            raise Internal(f"{len(crashed)} validator check(s) crashed: {'; '.join(crashed)}",
                           violations_found=len(out)) from first
        return out

"""The kit's pytest plugin: the ``rule`` marker, and which rule ids the collected tests carry.

Loaded for every run through ``addopts = "-p conformance.suites.plugin"`` in pyproject.toml.
``--lakeconf-rules-out=FILE`` writes ``{"tests": {nodeid: [rule ids]}, "unknown": [...]}``
after collection; ``lakeconf coverage`` runs ``pytest --collect-only`` with it, which counts what
pytest itself would run (parametrised cases, skips by condition) without importing test modules
into the CLI's own process.
"""

from __future__ import annotations

import json

import pytest

MARKER = "rule"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("lakeconf")
    group.addoption(
        "--lakeconf-rules-out",
        action="store",
        default=None,
        metavar="FILE",
        help="after collection, write the rule ids each collected test carries to FILE (JSON)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(*ids): the spec rule ids (see conformance/rules/) this test exercises")


def rule_ids(item: pytest.Item) -> list[str]:
    """The rule ids on every ``rule`` marker of ``item`` (function, class and module level)."""
    ids: list[str] = []
    for mark in item.iter_markers(name=MARKER):
        for arg in mark.args:
            values = [arg] if isinstance(arg, str) else list(arg)
            ids.extend(v for v in values if isinstance(v, str) and v not in ids)
    return ids


_UNKNOWN_KEY = pytest.StashKey[list]()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    from conformance.rules import all_rules

    known = all_rules()
    tests = {item.nodeid: rule_ids(item) for item in items}
    unknown = sorted({r for ids in tests.values() for r in ids if r not in known})
    config.stash[_UNKNOWN_KEY] = unknown
    out = config.getoption("--lakeconf-rules-out", default=None)
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"tests": tests, "unknown": unknown}, fh, indent=1, sort_keys=True)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    unknown = config.stash.get(_UNKNOWN_KEY, [])
    if unknown:
        terminalreporter.write_line(
            f"lakeconf: {len(unknown)} rule id(s) on tests are in no catalog (typos?): {', '.join(unknown[:10])}",
            yellow=True,
        )

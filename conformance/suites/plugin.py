"""The kit's pytest plugin: the ``rule`` marker, and which rule ids the collected tests carry.

Loaded for every run through ``addopts = "-p conformance.suites.plugin"`` in pyproject.toml.
``--lakeconf-rules-out=FILE`` writes ``{"tests": {nodeid: [rule ids]}, "unknown": [...]}``
after collection; ``lakeconf coverage`` runs ``pytest --collect-only`` with it, which counts what
pytest itself would run (parametrised cases, skips by condition) without importing test modules
into the CLI's own process.
"""

from __future__ import annotations

import json
from typing import Any

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
    group.addoption(
        "--lakeconf-engines",
        action="store",
        default=None,
        metavar="A,B",
        help="the readers the cross-engine suite checks (default: every built-in engine but Spark); a vendor "
             "names its own engine here (an entry point, or a command given with --lakeconf-engine-cmd)",
    )
    group.addoption(
        "--lakeconf-engine-cmd",
        action="append",
        default=[],
        metavar="NAME=COMMAND",
        help="a command-contract engine for the suites (repeatable; conformance/engines/VENDORS.md)",
    )


def pytest_configure(config: pytest.Config) -> None:
    import os

    config.addinivalue_line("markers", f"{MARKER}(*ids): the spec rule ids (see conformance/rules/) this test exercises")
    # The suites read their engines from the environment, so that worker processes see them too.
    engines = config.getoption("--lakeconf-engines", default=None)
    if engines:
        os.environ["LAKECONF_ENGINES"] = engines
    commands = config.getoption("--lakeconf-engine-cmd", default=[]) or []
    if commands:
        known = [c for c in os.environ.get("LAKECONF_ENGINE_CMDS", "").split(";") if c.strip()]
        os.environ["LAKECONF_ENGINE_CMDS"] = ";".join(known + list(commands))


def rule_ids(item: pytest.Item) -> list[str]:
    """The rule ids on every ``rule`` marker of ``item`` (function, class and module level)."""
    ids: list[str] = []
    for mark in item.iter_markers(name=MARKER):
        for arg in mark.args:
            values = [arg] if isinstance(arg, str) else list(arg)
            ids.extend(v for v in values if isinstance(v, str) and v not in ids)
    return ids


_UNKNOWN_KEY = pytest.StashKey[list]()
_ASSERTING = {"raises", "warns", "deprecated_call", "fail", "approx"}  # pytest helpers that check something


def _is_assertion(exc: Any, fn: Any) -> bool:
    """Whether a ``raise`` raises an AssertionError (or a subclass the function's module names)."""
    import ast

    target = exc.func if isinstance(exc, ast.Call) else exc
    name = target.id if isinstance(target, ast.Name) else None
    if name is None:
        return False
    cls = getattr(fn, "__globals__", {}).get(name, getattr(__builtins__, name, None) if not isinstance(__builtins__, dict)
                                            else __builtins__.get(name))
    return isinstance(cls, type) and issubclass(cls, AssertionError)


def asserts(fn: Any, depth: int = 3, _seen: set | None = None) -> bool:
    """Whether a test function checks something: an ``assert``, ``pytest.raises``/``warns``/``fail``,
    or a call to a project function that does (followed ``depth`` calls deep). A test that only
    runs code carries no rule id: a rule counts as covered only by a test that can fail on it."""
    import ast
    import inspect
    import textwrap

    fn = getattr(fn, "__func__", fn)
    fn = getattr(getattr(fn, "hypothesis", None), "inner_test", fn)  # a @given test's own body
    fn = inspect.unwrap(fn)
    seen = _seen if _seen is not None else set()
    if id(fn) in seen or not inspect.isfunction(fn):
        return False
    seen.add(id(fn))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    callees = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Raise) and node.exc is not None and _is_assertion(node.exc, fn):
            return True
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in _ASSERTING:
                return True
            if isinstance(f, ast.Name):
                callees.append(f.id)
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                callees.append((f.value.id, f.attr))
    if depth <= 0:
        return False
    scope = getattr(fn, "__globals__", {})
    for name in callees:
        if isinstance(name, tuple):
            target = getattr(scope.get(name[0]), name[1], None)
        else:
            target = scope.get(name)
        module = getattr(target, "__module__", "") or ""
        if module.startswith(("conformance", "reference_impl")) and asserts(target, depth - 1, seen):
            return True
    return False


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    from conformance.rules import all_rules

    known = all_rules()
    tests = {item.nodeid: rule_ids(item) for item in items}
    unknown = sorted({r for ids in tests.values() for r in ids if r not in known})
    config.stash[_UNKNOWN_KEY] = unknown
    out = config.getoption("--lakeconf-rules-out", default=None)
    if out:
        checking = {}
        for item in items:
            if tests[item.nodeid]:
                fn = getattr(item, "function", None)
                key = id(fn)
                if key not in checking:
                    checking[key] = fn is not None and asserts(fn)
        idle = sorted(item.nodeid for item in items if tests[item.nodeid] and not checking[id(getattr(item, "function", None))])
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"tests": tests, "unknown": unknown, "unasserting": idle}, fh, indent=1, sort_keys=True)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    unknown = config.stash.get(_UNKNOWN_KEY, [])
    if unknown:
        terminalreporter.write_line(
            f"lakeconf: {len(unknown)} rule id(s) on tests are in no catalog (typos?): {', '.join(unknown[:10])}",
            yellow=True,
        )

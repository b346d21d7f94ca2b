"""Hudi timeline file names (reference_impl.hudi.timeline): print/parse round trips and order independence.

* Every printable instant (each action in each state, both layouts, 14- and 17-digit requested times, layout-2
  completion times) prints to a name that parses back to the same instant; names of completed compactions,
  log compactions and (layout 2) clusterings print under the action they complete as, a ``commit`` inflight
  prints as ``<T>.inflight`` (HUDI-TIMELINE-010), layout-1 clustering plans print as ``replacecommit``.
* A timeline built from the names of a random history (each instant's requested/inflight/completed files) is the
  same whatever order the directory listing gives them in: same files, same current instants, same commit order.
"""

from __future__ import annotations

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from conformance.suites.property.delta._support import examples
from reference_impl.hudi import timeline as T

# legal clock times: month 01-12, day 01-28, hour 00-23, minute/second 00-59 (the parser checks only digits,
# but times that are clock times are what writers issue)
_CLOCK = r"20[0-9]{2}(0[1-9]|1[0-2])(0[1-9]|1[0-9]|2[0-8])([01][0-9]|2[0-3])[0-5][0-9][0-5][0-9]"
TIMES17 = st.from_regex(_CLOCK + r"[0-9]{3}", fullmatch=True)
TIMES = st.one_of(TIMES17, st.from_regex(_CLOCK, fullmatch=True))


def _states(action: str) -> tuple[str, ...]:
    return (T.INFLIGHT, T.COMPLETED) if action == T.SAVEPOINT else T.STATES


@st.composite
def instants(draw, layout: int, requested: str | None = None) -> T.Instant:
    action = draw(st.sampled_from(T.ACTIONS))
    state = draw(st.sampled_from(_states(action)))
    completion = draw(TIMES) if layout >= 2 and state == T.COMPLETED else None
    return T.Instant(requested_time=requested or draw(TIMES), action=action, state=state, completion_time=completion)


def _expected(inst: T.Instant, layout: int) -> T.Instant:
    """What a printed instant parses back to: completed actions under the name they complete as, a layout-1
    clustering plan as a replacecommit plan."""
    action = inst.action
    if inst.state == T.COMPLETED:
        action = T.COMPLETES_AS.get(action, action)
    elif action == T.CLUSTERING and layout < 2:
        action = T.REPLACE_COMMIT
    return T.Instant(requested_time=inst.requested_time, action=action, state=inst.state,
                     completion_time=inst.completion_time)


@pytest.mark.rule("HUDI-TIMELINE-001", "HUDI-TIMELINE-002", "HUDI-TIMELINE-006", "HUDI-TIMELINE-009",
                  "HUDI-TIMELINE-010", "HUDI-TIMELINE-011", "HUDI-TIMELINE-013")
@examples(1)
@given(st.sampled_from([1, 2]).flatmap(lambda layout: st.tuples(st.just(layout), instants(layout))))
def test_instant_file_names_round_trip(case):
    layout, inst = case
    name = T.instant_file_name(inst, layout)
    note(name)
    got = T.parse_instant_file(name, layout)
    want = _expected(inst, layout)
    assert got is not None and got.file_name == name
    assert (got.requested_time, got.action, got.state, got.completion_time) == \
        (want.requested_time, want.action, want.state, want.completion_time)
    if inst.action == T.COMMIT and inst.state == T.INFLIGHT:
        assert name == f"{inst.requested_time}.inflight"  # kept for backward compatibility, both layouts
    assert T.instant_file_name(got, layout) == name  # printing what was parsed gives the same name


@pytest.mark.rule("HUDI-TIMELINE-006")
@pytest.mark.parametrize("layout", [1, 2])
def test_every_action_and_state_prints_and_parses(layout):
    """The exhaustive companion of the round trip: every action x state x time length, once."""
    for t in ("20240101000000", "20240101000000123"):
        for action in T.ACTIONS:
            for state in _states(action):
                inst = T.Instant(requested_time=t, action=action, state=state,
                                 completion_time="20240101000001456" if layout == 2 and state == T.COMPLETED else None)
                got = T.parse_instant_file(T.instant_file_name(inst, layout), layout)
                want = _expected(inst, layout)
                assert (got.requested_time, got.action, got.state, got.completion_time) == \
                    (want.requested_time, want.action, want.state, want.completion_time)


@st.composite
def histories(draw) -> tuple[int, list[str]]:
    """(layout, the timeline file names of a history of distinct requested times, each instant with its files up
    to its current state)."""
    layout = draw(st.sampled_from([1, 2]))
    times = sorted(draw(st.sets(TIMES17, min_size=1, max_size=6)))
    names = []
    for t in times:
        inst = draw(instants(layout, requested=t))
        for state in T.STATES[: T.STATES.index(inst.state) + 1]:
            if state not in _states(inst.action):
                continue
            names.append(T.instant_file_name(T.Instant(
                requested_time=t, action=inst.action, state=state,
                completion_time=inst.completion_time if state == T.COMPLETED else None), layout))
    return layout, names


@pytest.mark.rule("HUDI-TIMELINE-002", "HUDI-TIMELINE-015", "HUDI-TIMELINE-019")
@examples(1)
@given(histories(), st.randoms(use_true_random=False))
def test_timeline_order_does_not_depend_on_listing_order(history, rnd):
    layout, names = history
    shuffled = list(names)
    rnd.shuffle(shuffled)
    a, b = T.build_timeline(names, layout), T.build_timeline(shuffled, layout)
    assert [f.file_name for f in a.files] == [f.file_name for f in b.files]
    assert a.instants == b.instants
    assert a.completed_in_commit_order() == b.completed_in_commit_order()
    # one current instant per requested time, at its highest state, in requested-time order
    assert [i.requested_time for i in a.instants] == sorted({f.requested_time for f in a.files})
    for i in a.instants:
        assert i.state == max((f.state for f in a.files_of(i.requested_time)), key=T.STATES.index)
    order = [i.ordering_time for i in a.completed_in_commit_order()]
    assert order == sorted(order)

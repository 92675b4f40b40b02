"""Validly signed lies: at any step of a round, a seat signs a mutated body in place of its
real envelope. A receiver answers with a typed error or a fault of that seat only, and its
game state is what it was before the lie.
"""

from __future__ import annotations

import copy
import random
from functools import cache
from typing import Any

import pytest
from helpers import Net, make_table, table_sessions
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from belote_p2p.errors import LocalProtocolError, RemoteProtocolError
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.wire import Envelope

VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**64 - 1),
    st.integers(-2, 40),
    st.binary(max_size=40),
    st.binary(min_size=32, max_size=32),
    st.text(max_size=12),
    st.lists(st.integers(0, 40), max_size=3),
    st.dictionaries(st.text(max_size=6), st.integers(0, 9), max_size=2),
)


@cache
def recorded(variant: str) -> tuple[list[Identity], list[Envelope], list[TableSession]]:
    """One seeded game of ``variant`` (its first round at least), seat 0's acceptance order,
    and an observer's session before each of its envelopes."""
    definition, ids = make_table(variant, target=1, seed=7)
    sessions = table_sessions(definition, ids, deal_seed=7)
    Net(sessions, random.Random(7)).run()
    envelopes = list(sessions[0].transcript)
    observer = TableSession(definition, None, None)
    observer.start()
    before = []
    for envelope in envelopes:
        before.append(copy.deepcopy(observer))
        observer.receive(envelope.raw)
    assert observer.completed
    return ids, envelopes, before


def paths(value: object, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a body that a liar may change."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            out += paths(item, (*prefix, index))
    return out


def mutated(body: dict[str, Any], path: tuple[Any, ...], op: str, value: object) -> Any:
    body = copy.deepcopy(body)
    *parents, last = path
    holder: Any = body
    for step in parents:
        holder = holder[step]
    if op == "delete" and isinstance(holder, dict):
        del holder[last]
    elif op == "add" and isinstance(holder, dict):
        holder[f"{last}-extra"] = value
    else:
        holder[last] = value
    return body


# Four-seat rule sets: the deck protocol and the session for two and three seats are the
# few-deck branch's.
@pytest.mark.parametrize("variant", sorted(n for n, r in RULE_SETS.items() if r.seats == 4))
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_signed_lie_is_a_fault_of_its_signer_only(variant: str, data: st.DataObject) -> None:
    ids, envelopes, before = recorded(variant)
    index = data.draw(st.integers(0, len(envelopes) - 1), label="index")
    original = envelopes[index]
    path = data.draw(st.sampled_from(paths(original.body)), label="path")
    op = data.draw(st.sampled_from(["replace", "delete", "add"]), label="op")
    body = mutated(original.body, path, op, data.draw(VALUES, label="value"))
    seat = before[index].tracker.seat_of(original.sender)
    try:
        lie = Envelope.create(
            ids[seat], original.table, original.seq, original.prev, original.seen, body
        )
    except LocalProtocolError:
        return  # not even encodable: no peer could sign it
    if lie.raw == original.raw:
        return
    session = copy.deepcopy(before[index])
    state, digest = session.state, session._digest
    try:
        session.receive(lie.raw)
    except RemoteProtocolError:
        return  # refused as bytes: counted against the connection, nobody blamed
    if session.fault is not None:
        assert session.fault.seat == seat, session.fault
        assert session.state is state and session._digest == digest

"""The table session's phases: the path each seat takes through a game, and the table of
transitions that every change of phase goes through."""

from __future__ import annotations

import random
import re

import pytest
from cheaters import OutOfTurn, Table
from helpers import Net, make_table

from belote_p2p.protocol.session import _TRANSITIONS, SessionPhase, TableSession

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")
# One round: dealt, bid, then either played out or redealt after four passes.
ROUND = r"DEALING BIDDING (COMPLETING PLAYING )?ROUND_OVER REVEALING "
GAME = rf"SIGNING BETWEEN_ROUNDS ({ROUND}BETWEEN_ROUNDS )*{ROUND}GAME_OVER "


def record_phases(monkeypatch: pytest.MonkeyPatch) -> dict[int, list[str]]:
    """Every phase each session enters (by id), in order."""
    paths: dict[int, list[str]] = {}
    transition = TableSession._transition

    def recording(session: TableSession, phase: SessionPhase) -> None:
        paths.setdefault(id(session), [session.phase.name])
        transition(session, phase)
        paths[id(session)].append(phase.name)

    monkeypatch.setattr(TableSession, "_transition", recording)
    return paths


def test_every_phase_has_its_transitions_and_may_stop() -> None:
    assert set(_TRANSITIONS) == set(SessionPhase)
    for phase, following in _TRANSITIONS.items():
        assert following <= set(SessionPhase)
        assert phase is SessionPhase.STOPPED or SessionPhase.STOPPED in following
    assert not _TRANSITIONS[SessionPhase.STOPPED]


@pytest.mark.parametrize("variant", ["classic", "coinche"])
def test_each_seat_and_an_observer_go_through_the_game_in_order(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = record_phases(monkeypatch)
    definition, ids = make_table(variant, target=151)
    proposal = definition.propose(ids[0])
    sessions = [TableSession(definition, i, ids[i], proposal=proposal) for i in range(4)]
    Net(sessions, random.Random(5)).run()
    for session in sessions:
        assert session.phase is SessionPhase.CLOSED and session.finished and session.closed
        assert re.fullmatch(GAME + "FINISHED CLOSED", " ".join(paths[id(session)]))
    observer = TableSession(definition, None, None)
    observer.start()
    for envelope in sessions[0].transcript:
        observer.receive(envelope.encode())
    assert observer.phase is SessionPhase.CLOSED
    assert re.fullmatch(GAME + "CLOSED", " ".join(paths[id(observer)]))


def test_a_fault_stops_the_game() -> None:
    t = Table(OutOfTurn())
    t.run()
    while t.deliver_one():  # the others' fault reports, which close a stopped game
        pass
    for seat in t.honest:
        session = t.sessions[seat]
        assert session.fault is not None and session.phase is SessionPhase.STOPPED
        assert session.finished and session.closed and not session.waiting_for()

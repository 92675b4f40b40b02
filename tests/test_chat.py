"""Chat at the table: a signed ``chat`` envelope, shown to every seat, kept in the record,
bounded per game, and never part of the game (state, digest, turn)."""

from __future__ import annotations

import random

import pytest
from cheaters import sign_next
from helpers import Net, make_table, table_sessions

from belote_p2p.protocol.bodies import MAX_CHAT_CHARS
from belote_p2p.protocol.events import ChatMessage, DecisionNeeded, GameOver, PeerFault
from belote_p2p.protocol.session import GAME_CAPS, SessionError, TableSession
from belote_p2p.protocol.verify import verify_record
from belote_p2p.protocol.wire import Envelope


class ChattyNet(Net):
    """A table whose seats say something now and then (before some of their decisions, and
    after the game), from their own seeded generators."""

    def __init__(self, sessions: list[TableSession], rng: random.Random, chatty: bool) -> None:
        super().__init__(sessions, rng)
        self.chatty = chatty
        self.talk = [random.Random(seat) for seat in range(4)]
        self.said = 0

    def flush(self, seat: int) -> None:
        s = self.sessions[seat]
        if self.chatty and s.ready and not s.finished and self.talk[seat].random() < 0.1:
            self.said += 1
            s.chat(f"seat {seat} says {self.said} ♥")
        super().flush(seat)


def play(seed: int, chatty: bool) -> tuple[list[TableSession], ChattyNet]:
    definition, ids = make_table("classic", target=151, seed=seed)
    sessions = table_sessions(definition, ids, deal_seed=seed)
    net = ChattyNet(sessions, random.Random(seed), chatty)
    net.run()
    return sessions, net


@pytest.mark.parametrize("seed", [3, 5])
def test_chat_is_shown_everywhere_kept_in_the_record_and_changes_nothing(seed: int) -> None:
    quiet, _ = play(seed, chatty=False)
    chatty, net = play(seed, chatty=True)
    assert net.said >= 10
    for q, c in zip(quiet, chatty, strict=True):
        assert c.state.scores == q.state.scores
        assert [(r.actions, r.tricks, r.score) for r in c.state.history] == [
            (r.actions, r.tricks, r.score) for r in q.state.history
        ]
        assert c._digest == q._digest
        assert c.completed
    said = [
        [(e.seat, e.text) for e in net.events[seat] if isinstance(e, ChatMessage)]
        for seat in range(4)
    ]
    assert len(said[0]) == net.said
    # Every seat saw every line, each seat's lines in the order it said them.
    for seat in range(4):
        assert sorted(said[seat]) == sorted(said[0])
        for who in range(4):
            assert [t for s, t in said[seat] if s == who] == [t for s, t in said[0] if s == who]
    verdict = verify_record(chatty[0].definition, [e.encode() for e in chatty[0].transcript])
    assert verdict.ok and verdict.finished
    assert sorted((c.seat, c.text) for c in verdict.chats) == sorted(said[0])


def test_a_seat_resumes_a_game_in_which_it_chatted() -> None:
    sessions, _net = play(5, chatty=True)
    seat = 1
    s = sessions[seat]
    mine = [e for e in s.tracker.chain(seat) if e.type == "chat"]
    assert mine
    # Cut the record after our second chat line and a few envelopes more.
    cut = s.transcript.index(mine[min(1, len(mine) - 1)]) + 7
    record = [e.encode() for e in s.transcript[:cut]]
    again = TableSession.resume(
        s.definition,
        seat,
        s.identity,
        record,
        s.secrets,  # type: ignore[arg-type]
    )
    ours = [e for e in s.transcript[:cut] if e.sender == s.identity.public_key_bytes]  # type: ignore[union-attr]
    assert [Envelope.decode(d).hash for d in again.take_outbox()] == [e.hash for e in ours]


def test_chat_opens_with_the_table_and_is_bounded() -> None:
    definition, ids = make_table("classic", seed=2)
    sessions = table_sessions(definition, ids)
    with pytest.raises(SessionError, match="once the table is signed"):
        sessions[0].chat("hello")
    net = Net(sessions, random.Random(2))
    net.start()
    while not all(s.ready for s in sessions):
        net.step()
    with pytest.raises(SessionError, match="1 to 200 characters"):
        sessions[0].chat("")
    with pytest.raises(SessionError, match="1 to 200 characters"):
        sessions[0].chat("x" * (MAX_CHAT_CHARS + 1))
    sessions[0].chat("🂡" * MAX_CHAT_CHARS)  # the longest line fits its envelope's cap
    net.flush(0)
    for _ in range(GAME_CAPS["chat"]):
        sessions[2].chat("gg")
    with pytest.raises(SessionError, match="at most 200 chat lines"):
        sessions[2].chat("one more")
    # A seat that signs more anyway, or a malformed line, is at fault on every receiver.
    flood = sign_next(sessions[2], {"type": "chat", "text": "one more"})
    net.flush(2)
    while net.in_flight():
        net.step()
    for seat in (0, 1, 3):
        faults = [e for e in net.events[seat] if isinstance(e, PeerFault)]
        assert faults and faults[0].seat == 2, seat
        assert "more than 200 chat messages" in faults[0].reason
        assert flood.encode() in faults[0].evidence


def test_a_malformed_chat_line_is_its_signers_fault() -> None:
    definition, ids = make_table("coinche", seed=4)
    sessions = table_sessions(definition, ids)
    net = Net(sessions, random.Random(4))
    net.start()
    while not all(s.ready for s in sessions):
        net.step()
    sign_next(sessions[1], {"type": "chat", "text": 42})
    net.flush(1)
    while net.in_flight():
        net.step()
    for seat in (0, 2, 3):
        faults = [e for e in net.events[seat] if isinstance(e, PeerFault)]
        assert faults and faults[0].seat == 1 and "malformed chat" in faults[0].reason
    assert not any(isinstance(e, DecisionNeeded | GameOver) for e in net.events[1][-1:])

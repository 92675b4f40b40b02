"""The deal's overlap (DECK.md §4): a peer whose shuffle comes next makes and sends it as soon
as the previous shuffle arrives, and checks that one's proof after sending.

What must still hold: every peer checks every other seat's shuffle before it sends a share
(before any card depends on the deck), and a bad shuffle found after the next one was built
on it names its shuffler at every honest peer and in ``verify``. The deck-level tests log, in
one timeline, each peer's checks of shuffle proofs and the messages it sends; the session
tests play tables with ``TableSession.overlap`` through the cheaters' harness.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from cheaters import Outcome, StackedDeck, Table, assert_finished_cleanly, assert_same_verdict
from helpers import TABLE_ID, deck_peers

from belote_p2p.game.rules import CLASSIC, COINCHE, THREE_HANDED, TWO_HANDED, RuleSet
from belote_p2p.protocol import deck as deck_module
from belote_p2p.protocol.deck import (
    BadPoint,
    BadShuffle,
    Ciphertext,
    DeckError,
    DeckMessage,
    DeckObserver,
    DeckPeer,
    SharesMessage,
    ShuffleMessage,
    shuffle_order,
)

Event = tuple[str, int, int]
"""("check", peer, shuffler): a peer verified a shuffle's proof; ("send", seat, shuffler)
for a shuffle a peer sent, ("shares", seat, -1) for its deal shares."""


class OverlapTable:
    """The peers of one round, made with ``overlap``: each sends what it made, then does
    its work put off (as the session's driver, when no input waits), then takes the next
    message. Every proof check and every message sent goes into :attr:`timeline`."""

    def __init__(
        self,
        rules: RuleSet,
        dealer: int,
        corrupt: int | None,
        monkeypatch: pytest.MonkeyPatch,
        *,
        invalid: bool = False,
    ) -> None:
        self.peers = deck_peers(rules, dealer=dealer, overlap=True)
        self.observer = DeckObserver(rules, dealer=dealer, table_id=TABLE_ID, round_number=1)
        self.corrupt = corrupt
        self.invalid = invalid
        self.timeline: list[Event] = []
        self.errors: dict[int | None, DeckError] = {}
        self.queue: deque[DeckMessage] = deque()
        self._checking: int | None = None
        check = deck_module._DeckRound._check_shuffle

        def logged(peer: deck_module._DeckRound, index: int, msg: ShuffleMessage) -> None:
            if peer.seat is not None:
                self.timeline.append(("check", peer.seat, msg.seat))
            check(peer, index, msg)

        monkeypatch.setattr(deck_module._DeckRound, "_check_shuffle", logged)

    def send(self, peer: DeckPeer) -> None:
        for msg in peer.next_messages():
            if isinstance(msg, ShuffleMessage):
                self.timeline.append(("send", msg.seat, msg.seat))
                if msg.seat == self.corrupt:
                    deck = list(msg.deck)
                    if self.invalid:  # bytes that are no point
                        deck[1] = Ciphertext(deck[1].c1, b"\xff" * 32)
                    else:  # two positions swapped: the proof fails
                        deck[0], deck[1] = deck[1], deck[0]
                    msg = ShuffleMessage(msg.seat, msg.commitment, tuple(deck), msg.proof)
            elif isinstance(msg, SharesMessage):
                self.timeline.append(("shares", msg.seat, -1))
            self.queue.append(msg)

    def step(self, peer: DeckPeer, action: Callable[[], object] | None = None) -> None:
        """Run one call of ``peer``, send what it made, then do its work until none is left."""
        try:
            if action is not None:
                action()
            self.send(peer)
            while peer.has_work and peer.seat not in self.errors:
                peer.work()
                self.send(peer)
        except DeckError as exc:
            self.errors.setdefault(peer.seat, exc)
            self.send(peer)

    def deal(self) -> None:
        for peer in self.peers:
            self.queue.append(peer.start())
            self.step(peer)  # its split, and its shuffle if it is first
        while self.queue:
            msg = self.queue.popleft()
            try:
                self.observer.receive(msg)
            except DeckError as exc:
                self.errors.setdefault(None, exc)
            for peer in self.peers:
                if peer.seat != msg.seat and peer.seat not in self.errors:
                    self.step(peer, partial(peer.receive, msg))

    def first(self, event: Event) -> int:
        return self.timeline.index(event)


RULES = [(CLASSIC, 0), (COINCHE, 2), (THREE_HANDED, 1), (TWO_HANDED, 1)]


@pytest.mark.parametrize(("rules", "dealer"), RULES)
def test_each_shuffle_leaves_before_the_one_it_builds_on_is_checked(
    rules: RuleSet, dealer: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shuffler i+1 sends its shuffle before checking shuffle i; every peer checks every
    other seat's shuffle, each once, before it sends a share; the hands are those of a deal
    without the overlap."""
    table = OverlapTable(rules, dealer, None, monkeypatch)
    table.deal()
    assert not table.errors
    order = shuffle_order(dealer, len(table.peers))
    for before, after in itertools.pairwise(order):
        assert table.first(("send", after, after)) < table.first(("check", after, before))
    for peer in table.peers:
        checks = [e for e in table.timeline if e[:2] == ("check", peer.seat)]
        assert sorted(e[2] for e in checks) == sorted(s for s in order if s != peer.seat)
        shares = table.first(("shares", peer.seat, -1))
        assert all(table.timeline.index(e) < shares for e in checks)
        assert not peer.has_work
    plain = deck_peers(rules, dealer=dealer)
    queue: deque[DeckMessage] = deque(p.start() for p in plain)
    while queue:
        msg = queue.popleft()
        for p in plain:
            if p.seat != msg.seat:
                p.receive(msg)
                queue.extend(p.next_messages())
    assert [p.hand() for p in table.peers] == [p.hand() for p in plain]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_a_bad_shuffle_found_after_the_next_was_made_names_its_shuffler(
    index: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shuffle ``index`` does not verify. Its successor was built on it and sent before the
    check; then every honest peer and the observer name its shuffler, and no share is sent."""
    dealer = 0
    order = shuffle_order(dealer, 4)
    cheater, successor = order[index], order[index + 1]
    table = OverlapTable(CLASSIC, dealer, cheater, monkeypatch)
    table.deal()
    assert table.first(("send", successor, successor)) < table.first(("check", successor, cheater))
    named = {seat: exc for seat, exc in table.errors.items() if seat != cheater}
    assert set(named) == {*(s for s in range(4) if s != cheater), None}
    assert all(isinstance(e, BadShuffle) and e.seat == cheater for e in named.values())
    assert not [e for e in table.timeline if e[0] == "shares"]
    honest = table.peers[successor]
    assert honest.phase.name == "SHUFFLE" and not honest.has_work
    assert len(honest._decks) == index  # the deck built on the bad one is dropped too


@pytest.mark.parametrize("cheater", [1, 2])
def test_at_a_table_that_overlaps_a_bad_shuffle_is_the_same_fault_everywhere(
    cheater: int, tmp_path: Path
) -> None:
    """Seat ``cheater`` (first or second shuffler) stacks its deck; the next shuffler built
    on it and sent its shuffle before its check. Every honest session and every verified
    transcript blame the cheater; no card was dealt."""
    t = Table(StackedDeck(cheater), overlap=True)
    t.run()
    assert_same_verdict(t, tmp_path, Outcome("fault", cheater))
    successor = cheater + 1
    own = t.sessions[successor].tracker.chain(successor)
    assert any(e.type == "deck" and e.body["msg"]["type"] == "deck.shuffle" for e in own)
    for seat in t.honest:
        (fault,) = t.faults(seat)
        assert "proof of shuffle" in fault.reason, fault.reason
        assert t.sessions[seat].state.phase.name == "DEAL"


def test_a_table_that_overlaps_plays_to_the_end_and_shares_follow_every_shuffle(
    tmp_path: Path,
) -> None:
    """A whole game with the overlap ends as any game; in the transcripts, every seat's deal
    shares of each round name in their ``seen`` (what their sender had processed) every
    other seat's shuffle of the round, or a later envelope of that seat."""
    t = Table(variant="classic", target=301, overlap=True)
    t.run()
    assert_finished_cleanly(t, tmp_path)
    roster = t.definition.roster
    chains = [t.sessions[0].tracker.chain(s) for s in range(t.seats)]
    seq_of = {e.hash: e.seq for chain in chains for e in chain}
    checked = 0
    for seat, chain in enumerate(chains):
        for envelope in chain:
            msg = envelope.body.get("msg", {}) if envelope.type == "deck" else {}
            if msg.get("type") != "deck.shares" or msg.get("step") != 0:
                continue
            number = envelope.body["round"]
            for other in range(t.seats):
                if other == seat:
                    continue
                (shuffle,) = [
                    e
                    for e in chains[other]
                    if e.type == "deck"
                    and e.body["round"] == number
                    and e.body["msg"]["type"] == "deck.shuffle"
                ]
                assert roster.index(shuffle.sender) == other
                assert seq_of[envelope.seen[other]] >= shuffle.seq, (seat, number, other)
                checked += 1
    assert checked >= 3 * 4 * 2  # at least two rounds


def test_a_shuffle_with_bytes_that_are_no_point_is_checked_before_anything_is_built_on_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The next shuffler cannot add to what does not decode: it checks the shuffle at once
    (no shuffle of its own is made) and names its shuffler, as every other peer does."""
    cheater, successor = shuffle_order(0, 4)[:2]
    table = OverlapTable(CLASSIC, 0, cheater, monkeypatch, invalid=True)
    table.deal()
    assert ("send", successor, successor) not in table.timeline
    named = {seat: exc for seat, exc in table.errors.items() if seat != cheater}
    assert set(named) == {*(s for s in range(4) if s != cheater), None}
    assert all(isinstance(e, BadPoint) and e.seat == cheater for e in named.values())

"""The recorded games of ``protocol/vectors/``: each verifies as ``conformance.json`` says,
and the code still writes it byte for byte; the handshake and lobby vectors; the deck
vector's layout.

Every game is played by its table's sessions in memory (four, or three or two as its variant
seats). Identities, deck secrets, the
players' choices and the delivery order all come from the game's recorded seed, and Ed25519
signatures and the deck protocol's proof nonces are deterministic, so one seed gives one
file. A seed was found by ``--search``, which plays seeds 0, 1, 2... with the rules engine
alone (the deck protocol's cards follow from the shuffle seeds without any group
operation) until the game holds the events the vector is for.

    PYTHONPATH=. python tests/test_vectors.py --search NAME    # the first seed that fits
    PYTHONPATH=. python tests/test_vectors.py --write [NAME]   # regenerate (and the manifest)

Regenerate only after a deliberate change to the wire, the session or the deck protocol,
and say so in the commit.
"""

from __future__ import annotations

import json
import random
import re
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from cheaters import Cheat, FalseClaim, OverClaim, Revoke, resign
from helpers import (
    ROOT,
    RelayClient,
    SeededSecrets,
    check_turn_ups,
    identities,
    make_table,
    table_sessions,
    write_transcript,
)

from belote_p2p.app import conformance
from belote_p2p.game.announcements import find_announcements
from belote_p2p.game.audit import audit_round
from belote_p2p.game.cards import Card, mask_of
from belote_p2p.game.engine import Action, Bid, Phase, RoundRecord, State
from belote_p2p.game.observation import Observation, observe
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.game.scoring import Outcome
from belote_p2p.net.lobby import (
    JoinChallenge,
    JoinRefused,
    JoinRequest,
    KeyNotProven,
    Lobby,
    ReadyCheck,
    ReadySeat,
    proof_statement,
    prove,
    ready_message,
)
from belote_p2p.protocol.bodies import abandon_body
from belote_p2p.protocol.deck import shuffle_order, shuffle_permutation
from belote_p2p.protocol.directory import (
    AD_LABEL,
    AdPlayer,
    Advertisement,
    Directory,
    Query,
    ad_statement,
    advertise_message,
    listed_message,
    parse_tables,
    withdraw_message,
)
from belote_p2p.protocol.events import DecisionNeeded
from belote_p2p.protocol.identity import Identity, verify
from belote_p2p.protocol.relay import RelayLimits, RelayServer, hello_message
from belote_p2p.protocol.secretstore import MemorySecrets
from belote_p2p.protocol.session import (
    ENVELOPE_CAPS,
    GAME_CAPS,
    ROUND_CAPS,
    TWO_HANDED_ROUND_CAPS,
    TableSession,
)
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.transcript import TranscriptError, read_transcript
from belote_p2p.protocol.verify import Verdict, verify_record, verify_transcript
from belote_p2p.protocol.wire import (
    HELLO_LABEL,
    Envelope,
    Handshake,
    HandshakeError,
    decode,
    encode,
)

VECTORS = ROOT / "protocol" / "vectors"
MANIFEST = VECTORS / conformance.MANIFEST

# A game's record and its tampered copies, verified one after the other, and the sessions that
# play it hold the same proofs byte for byte; this module is not about checking them.
pytestmark = pytest.mark.usefixtures("proofs_checked_once")


# -- the games ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Game:
    """One recorded game: its table, its seed, the bids it scripts, what it must hold."""

    name: str
    """The file is ``protocol/vectors/<name>.transcript``."""
    description: str
    variant: str
    target: int
    seed: int
    """Deck secrets, choices and delivery order (found by ``--search``)."""
    keys: int
    """The seed of the seats' identities (``helpers.identities``)."""
    rules: Mapping[str, Any] = field(default_factory=dict)
    """Rule-set fields other than the variant's and ``target``."""
    bids: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    """Round -> the bids of that round in bidding order (from dealer+1), as wire text;
    every other decision is a seeded random legal one."""
    wanted: Callable[[State], bool] | None = None
    """What the game played by the engine alone must hold (``--search``)."""
    silent_seat: int | None = None
    """This seat stops answering at its first card after two tricks; the others sign it
    gone (``abandon``)."""
    silent_at_reveal: bool = False
    """The silent seat instead plays round 0 to its last card and falls silent there: its
    reveal of the round is never sent; once nothing moves, the others sign it gone."""
    silent_after: int = 2
    """The tricks of round 0 after which the silent seat stops answering."""
    late_to: int | None = None
    """The silent seat's next card is on its way as it falls silent, once the others signed
    their votes: this seat gets it (after its own vote, before any other's), nobody else."""
    resigns: bool = False
    """The silent seat resigns instead, as soon as the table is signed (its key out, its
    split and shuffle not: the round is dealt again with it face up)."""
    then_silent: int | None = None
    """Once the silent seat is gone, this seat stops answering too, after two tricks of a
    later round; the two others sign it gone (at four seats: the game ends)."""
    equivocating_seat: int | None = None
    """This seat signs its first bid twice, differently: one version to seat 0, the other
    to the others."""
    cheat: Callable[[], Cheat] | None = None
    """A cheat of ``tests/cheaters.py`` (its seat given) that takes its seat's decisions
    where it applies: a revoke or a false claim, which only the round audit finds."""
    audit_fault: str | None = None
    """The kind of audit fault (``FaultKind``) the game's record must hold (``--search``
    plays the whole table for it: the engine alone does not cheat)."""


def rounds(state: State) -> tuple[RoundRecord, ...]:
    return state.history


def outcomes(state: State) -> list[Outcome | None]:
    return [r.score.outcome if r.score is not None else None for r in rounds(state)]


def classic_wanted(state: State) -> bool:
    """A redeal, a litige whose pot a later round wins, an announcement and a belote (not
    in the last round: the game earns no challenge, so that a profile of the first schema,
    which had none, reads it as the current one does)."""
    history = rounds(state)
    if not state.is_over or len(history) > 5 or history[0].score is not None:
        return False
    litiges = [i for i, r in enumerate(history) if r.score and r.score.outcome is Outcome.LITIGE]
    if len(litiges) != 1 or litiges[0] == len(history) - 1:
        return False
    won_pot = history[litiges[0] + 1]
    assert won_pot.score is not None
    return (
        won_pot.score.pending == 0
        and won_pot.score.outcome is not Outcome.LITIGE
        and any(r.announcements_team is not None for r in history)
        and any(r.belote for r in history)
        and not history[-1].belote
    )


def held_announcements(record: RoundRecord) -> bool:
    """Some hand of the round holds an announcement (that the rule set does not score)."""
    hands = audit_round(record).hands
    return any(find_announcements(mask_of(hand), record.trump) for hand in hands)


def no_announcements_wanted(state: State) -> bool:
    """One round, a belote, and a hand whose announcement does not count."""
    history = rounds(state)
    return (
        state.is_over
        and len(history) == 1
        and bool(history[0].belote)
        and held_announcements(history[0])
        and not any(history[0].declared)
    )


def coinche_wanted(state: State) -> bool:
    """Two rounds: the scripted auctions, both contracts played out."""
    return state.is_over and len(rounds(state)) == 2


def three_handed_wanted(state: State) -> bool:
    """A redeal, a contract made and one failed, an announcement and a belote, in at most
    five rounds."""
    history = rounds(state)
    found = outcomes(state)
    return (
        state.is_over
        and len(history) <= 5
        and history[0].score is None
        and Outcome.MADE in found
        and Outcome.FAILED in found
        and any(r.announcements_team is not None for r in history)
        and any(r.belote for r in history)
    )


def two_handed_wanted(state: State) -> bool:
    """A dealer who scored more deals again, the other player deals after a round it won,
    and a belote, in at most four rounds."""
    history = rounds(state)
    dealers = [r.dealer for r in history]
    again = any(a == b for a, b in pairwise(dealers))
    moved = any(a != b for a, b in pairwise(dealers))
    return (
        state.is_over and len(history) <= 4 and again and moved and any(r.belote for r in history)
    )


GAMES = (
    Game(
        "game-classic",
        "Classic belote to 200: round 0 is redealt (everybody passes twice), a litige sets "
        "points aside, a later round wins the pot; announcements and a belote score.",
        "classic",
        target=200,
        seed=1196,
        keys=11,
        bids={0: ("pass",) * 8},
        wanted=classic_wanted,
    ),
    Game(
        "game-coinche",
        "Belote coinchée to 501 with sans-atout and tout-atout bids: round 0 goes 80 NT, "
        "90 AT, coinche, then three passes; round 1 goes pass, 110 NT, coinche, surcoinche.",
        "coinche",
        target=501,
        seed=0,
        keys=12,
        rules={"sans_atout": True, "tout_atout": True},
        bids={
            0: ("80 NT", "90 AT", "coinche", "pass", "pass", "pass"),
            1: ("pass", "110 NT", "coinche", "surcoinche"),
        },
        wanted=coinche_wanted,
    ),
    Game(
        "game-no-announcements",
        "Classic belote without announcements, to 100: one round; a hand holds a sequence "
        "that does not count, and a belote that does.",
        "classic-no-announcements",
        target=100,
        seed=7,
        keys=13,
        wanted=no_announcements_wanted,
    ),
    Game(
        "game-abandoned",
        "Three-handed belote: in round 0, after two tricks, seat 2 stops answering; the two "
        "others sign it gone and the game ends, abandoned by seat 2 (at three seats nobody can "
        "play a leaver's cards: PROTOCOL.md §6.7).",
        "three-handed",
        target=501,
        seed=0,
        keys=14,
        silent_seat=2,
    ),
    Game(
        "game-left",
        "Classic belote: in round 0, after two tricks, seat 3 stops answering; the three "
        "others sign it gone, its cards are released, and its partner, seat 1, plays its open "
        "hand to the end of the game (PROTOCOL.md §6.7); later rounds deal it face up.",
        "classic",
        target=151,
        seed=0,
        keys=15,
        silent_seat=3,
    ),
    Game(
        "game-left-late",
        "Classic belote: seat 2 plays round 0 to its last card, then stops answering before "
        "its reveal; the three others sign it gone, nothing is released (no card is left to "
        "play), the round is audited with seat 2's key rebuilt from the pieces the three "
        "reveals carry (DECK.md §17.11), and its partner, seat 0, plays its open hand in the "
        "later rounds (PROTOCOL.md §6.7).",
        "classic",
        target=301,
        seed=0,
        keys=16,
        silent_seat=2,
        silent_at_reveal=True,
    ),
    Game(
        "game-left-deal",
        "Classic belote: seat 1 resigns as soon as the table is signed, its round key out "
        "but not its split or shuffle: its cards cannot be opened, so the round is dealt "
        "again with seat 1 a public seat (its deck secrets derived from public values), the "
        "same round number, and its partner, seat 3, plays its open hand to the end "
        "(PROTOCOL.md §6.7). The deck messages of the deal given up that do not know the "
        "leave belong to it.",
        "classic",
        target=151,
        seed=0,
        keys=23,
        silent_seat=1,
        resigns=True,
    ),
    Game(
        "game-abandoned-late",
        "Three-handed belote: seat 2 stops answering at its last card of round 0; the two "
        "others sign it gone at that point, and that card and its reveal, on their way, "
        "reach seat 0 after seat 0's vote and before seat 1's: seat 0 plays on from them (the "
        "round's last trick, its own reveal), then takes seat 1's vote in. The game is cut at "
        "the deciding vote, seat 0's (the lowest voter), whose past holds neither that card "
        "nor what followed it: round 1 at 0-0-0, not the round scored (PROTOCOL.md §6.6).",
        "three-handed",
        target=501,
        seed=0,
        keys=24,
        silent_seat=2,
        silent_after=7,
        late_to=0,
    ),
    Game(
        "game-left-held",
        "Classic belote: seat 3 stops answering after two tricks, and the three others sign "
        "it gone at that point; its next cards, on their way (the last card of trick 2, "
        "and its lead of trick 3, which it won), reach seat 0 right after seat 0's own vote "
        "(and the others through seat 0's sync answers). Every receiver holds them while a "
        "vote against seat 3 that they come after is accepted (PROTOCOL.md §6.7), so they "
        "are processed only after the leave and count for nothing (they are in seat 3's "
        "chain after the leave): seat 1 plays seat 3's open hand from the point the votes "
        "saw. The conformance case late-before-votes moves them before the votes in the file: "
        "the same verdict.",
        "classic",
        target=151,
        seed=0,
        keys=26,
        silent_seat=3,
        late_to=0,
    ),
    Game(
        "game-left-twice",
        "Classic belote: seat 3 stops answering after two tricks, the three others sign it "
        "gone and its partner, seat 1, plays its open hand; in a later round seat 1 stops "
        "answering too, and seats 0 and 2, the only live seats left beside it, sign it gone: "
        "two votes are enough once a seat is gone (PROTOCOL.md §6.6), and a second leave "
        "ends the game, abandoned by seat 1.",
        "classic",
        target=501,
        seed=0,
        keys=25,
        silent_seat=3,
        then_silent=1,
    ),
    Game(
        "game-fault",
        "Classic belote: seat 1 signs two different first bids at one seq, one to seat 0 and "
        "the other to seats 2 and 3. The peers find the equivocation and report it with both "
        "envelopes as evidence; the game stops, seat 1 at fault.",
        "classic",
        target=501,
        seed=0,
        keys=15,
        equivocating_seat=1,
    ),
    Game(
        "game-three-handed",
        "Three-handed belote (24 cards, each for himself) to 200: round 0 is redealt "
        "(everybody passes twice); a contract is made and one fails; an announcement and a "
        "belote score.",
        "three-handed",
        target=200,
        seed=0,
        keys=17,
        bids={0: ("pass",) * 6},
        wanted=three_handed_wanted,
    ),
    Game(
        "game-two-handed",
        "Two-handed belote (belote découverte) to 200: each face-down card opened when it "
        "is turned up; a player who scored more deals again, the other deals after it "
        "scores more; a belote scores.",
        "two-handed",
        target=200,
        seed=6,
        keys=18,
        wanted=two_handed_wanted,
    ),
)


def audit_game(
    name: str,
    description: str,
    variant: str,
    keys: int,
    cheat: Callable[[], Cheat],
    fault: str,
    seed: int = 0,
) -> Game:
    """A game to 1 point (its first scored round ends it) with a cheat that only the round
    audit finds, of kind ``fault``."""
    return Game(
        name, description, variant, target=1, seed=seed, keys=keys, cheat=cheat, audit_fault=fault
    )


AUDIT_GAMES = (
    audit_game(
        "game-revoke",
        "Classic belote to 1 (the first round scored ends it): seat 3 plays a card the rules "
        "forbid it where nobody can tell yet (its shown voids allow it); the round audit "
        "finds the revoke and rescores the round against seat 3's team.",
        "classic",
        19,
        lambda: Revoke(3),
        "illegal-play",
    ),
    audit_game(
        "game-false-announcement",
        "Classic belote to 1: with its first card seat 1 claims a quinte and a tierce of one "
        "suit, eight cards its hand cannot hold; nothing refuses it on receipt, the round "
        "audit finds it and rescores the round with the announcements the hands held.",
        "classic",
        20,
        lambda: OverClaim(1),
        "false-announcement",
    ),
    audit_game(
        "game-three-false-belote",
        "Three-handed belote to 1: seat 2 claims a belote with a king or queen of trump "
        "whose other card another player holds; the round audit finds it and rescores the "
        "round at three seats.",
        "three-handed",
        21,
        lambda: FalseClaim(belote=True, seat=2),
        "false-belote",
        seed=11,
    ),
    audit_game(
        "game-three-revoke",
        "Three-handed belote to 1: seat 1 plays a card the rules forbid it where nobody can "
        "tell yet; the round audit finds the revoke and rescores the round at three seats.",
        "three-handed",
        22,
        lambda: Revoke(1),
        "illegal-play",
        seed=1,
    ),
)
"""Games whose record holds a round the audit rescores (a revoke, a false claim): seeds
found by ``--search``, which plays the table itself."""
GAMES = GAMES + AUDIT_GAMES
BY_NAME = {g.name: g for g in GAMES}


def definition_of(game: Game) -> tuple[TableDefinition, list[Identity]]:
    definition, ids = make_table(game.variant, game.target, game.keys)
    rules = definition.rules.with_(**game.rules)
    rules.validate()
    return replace(definition, rules=rules), ids


class Player:
    """A seat's choices: the scripted bids of the game, else a seeded random legal action."""

    def __init__(self, game: Game, seat: int) -> None:
        self.bids = game.bids
        self.rng = random.Random(f"{game.seed}/player/{seat}")

    def decide(self, observation: Observation) -> Action:
        script = self.bids.get(observation.number, ())
        if observation.phase is not Phase.PLAY and len(observation.bids) < len(script):
            bid = Bid.parse(script[len(observation.bids)])
            assert bid in observation.legal, (observation.number, bid, observation.legal)
            return bid
        return self.rng.choice(observation.legal)


# -- the engine alone (for --search) -----------------------------------------------------


def predicted_deck(definition: TableDefinition, seed: int, state: State) -> list[Card]:
    """The cards the deck protocol deals in ``state``'s round, from the seeded shuffle seeds:
    each shuffle moves card ``perm[j]`` to position ``j`` (``protocol/DECK.md`` §4, §10),
    starting from the rule set's deck in card order (24 cards in three-handed)."""
    rules = definition.rules
    size = rules.deck_size
    cards = list(range(size))
    for seat in shuffle_order(state.dealer, rules.seats):
        loaded = SeededSecrets(seed, seat).load(state.number)
        assert loaded is not None
        perm = shuffle_permutation(definition.table_id, state.number, seat, loaded[1], size)
        cards = [cards[perm[j]] for j in range(size)]
    return [rules.deck_cards[c] for c in cards]


def simulate(game: Game) -> State:
    """The game as the engine plays it with every hand known: the same cards and choices as
    the recorded game (a game without a twist)."""
    definition, _ = definition_of(game)
    players = [Player(game, seat) for seat in range(definition.rules.seats)]
    state = State.new_game(definition.rules)
    while not state.is_over and state.number < 12:
        state = state.deal(predicted_deck(definition, game.seed, state))
        while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
            state = state.apply(players[state.to_act].decide(observe(state, state.to_act)))
    return state


def audit_faults(verdict: Verdict) -> list[str]:
    """The kinds of audit fault of the record's rounds, in order."""
    return [r.report.fault.kind.value for r in verdict.rounds if r.report.fault is not None]


def search(game: Game, start: int = 0, count: int = 100_000) -> int:
    if game.audit_fault is not None:  # the table itself: the engine alone does not cheat
        with tempfile.TemporaryDirectory() as tmp:
            for seed in range(start, start + count):
                path = Path(tmp) / "game.transcript"
                record(replace(game, seed=seed), path)
                verdict = verify_transcript(path)
                if verdict.ok and audit_faults(verdict) == [game.audit_fault]:
                    return seed
        raise LookupError(f"no seed in {start}..{start + count - 1} gives {game.name}")
    assert game.wanted is not None
    for seed in range(start, start + count):
        if game.wanted(simulate(replace(game, seed=seed))):
            return seed
    raise LookupError(f"no seed in {start}..{start + count - 1} gives {game.name}")


# -- the game played by four sessions ----------------------------------------------------


class Table:
    """The table's sessions, one FIFO queue per ordered pair, a seeded delivery order."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.definition, self.ids = definition_of(game)
        self.sessions = table_sessions(self.definition, self.ids, deal_seed=game.seed)
        n = self.n = self.definition.rules.seats
        self.players = [Player(game, seat) for seat in range(n)]
        self.rng = random.Random(f"{game.seed}/delivery")
        self.queues = {(a, b): deque[bytes]() for a in range(n) for b in range(n) if a != b}
        self.quiet: set[int] = set()
        """The seats that stopped answering (or resigned): what they send is lost."""
        self.equivocated = False
        self.cheat = game.cheat() if game.cheat is not None else None

    @property
    def silent(self) -> bool:
        return self.game.silent_seat in self.quiet

    @property
    def honest(self) -> tuple[int, ...]:
        bad = {self.game.silent_seat, self.game.then_silent, self.game.equivocating_seat}
        return tuple(s for s in range(self.n) if s not in bad)

    def send(self, seat: int, data: bytes) -> None:
        if seat == self.game.silent_seat and self.game.silent_at_reveal and not self.silent:
            body = Envelope.decode(data).body
            if body.get("type") == "deck" and body["msg"]["type"] == "deck.reveal":
                self.quiet.add(seat)  # its round's cards are all played: it stops here
        if seat in self.quiet:
            return
        twin = self._twin(seat, data)
        for other in range(self.n):
            if other != seat:
                self.queues[seat, other].append(twin if twin and other == 0 else data)

    def _twin(self, seat: int, data: bytes) -> bytes | None:
        """The other version of the equivocating seat's first bid."""
        if seat != self.game.equivocating_seat or self.equivocated:
            return None
        envelope = Envelope.decode(data)
        if envelope.type != "bid":
            return None
        self.equivocated = True
        body = dict(envelope.body)
        body["bid"] = "take" if body["bid"] == "pass" else "pass"
        return resign(self.ids[seat], envelope, body).encode()

    def flush(self, seat: int) -> None:
        session = self.sessions[seat]
        for data in session.take_outbox():
            self.send(seat, data)
        if seat == self.game.silent_seat and self.game.resigns and session.ready:
            if seat not in self.quiet:
                session.abandon(seat)  # its key may be out; its split and shuffle are not
                for data in session.take_outbox():
                    self.send(seat, data)
                self.quiet.add(seat)
            return
        for event in session.take_events():
            if not isinstance(event, DecisionNeeded):
                continue
            observation = event.observation
            if seat in (self.game.silent_seat, self.game.then_silent) and self._falls_silent(
                seat, observation
            ):
                continue
            cheat = self.cheat
            if cheat is not None and seat == cheat.seat and cheat.decide(self, observation):  # type: ignore[arg-type]
                self.flush(seat)
                continue
            session.act(self.players[seat].decide(observation))
            self.flush(seat)

    def _falls_silent(self, seat: int, observation: Observation) -> bool:
        """Whether ``seat`` does not answer this decision (it is silent, or falls silent
        now: the others then sign it gone, as they would once its deadline passed)."""
        if seat in self.quiet:
            return True
        if seat == self.game.then_silent:
            first = self.game.silent_seat
            due = (
                self.sessions[seat].dummy == first
                and observation.number >= 1
                and observation.phase is Phase.PLAY
                and len(observation.tricks) >= 2
            )
        elif self.game.silent_at_reveal:
            return False
        else:
            due = (
                observation.phase is Phase.PLAY
                and len(observation.tricks) >= self.game.silent_after
            )
        if not due:
            return False
        self.quiet.add(seat)
        for other in range(self.n):  # in a real game: once its deadline and grace passed
            if other not in self.quiet:
                self.sessions[other].abandon(seat)
                self.flush(other)
        late = self.game.late_to
        if late is not None and seat == self.game.silent_seat:
            # Its card was on its way: one seat gets it, after its own vote.
            session = self.sessions[seat]
            session.act(self.players[seat].decide(observation))
            for data in session.take_outbox():
                self.sessions[late].receive(data)
            self.flush(late)
        return True

    def run(self, limit: int = 100_000) -> None:
        for seat in range(self.n):
            self.sessions[seat].start()
            self.flush(seat)
        synced = False
        for _ in range(limit):
            if all(self.sessions[s].closed for s in self.honest):
                return
            busy = [k for k, q in self.queues.items() if q]
            if not busy and self.game.silent_at_reveal and self.silent:
                # Its deadline and grace passed at every other seat: they sign it gone.
                assert self.game.silent_seat is not None
                voted = [self.sessions[o].abandon(self.game.silent_seat) for o in self.honest]
                for other in self.honest:
                    self.flush(other)
                if any(voted):
                    synced = False
                    continue
            if not busy:
                assert not synced, "nothing moves, even after a sync"
                for a in self.honest:
                    for b in range(self.n):
                        if a != b:
                            self.queues[a, b].append(self.sessions[a].sync_request())
                synced = True
                continue
            synced = False
            a, b = self.rng.choice(busy)
            replies = self.sessions[b].receive(self.queues[a, b].popleft())
            if b not in self.quiet:
                self.queues[b, a].extend(replies)  # a sync answer goes back on its connection
            self.flush(b)
        raise AssertionError("the game does not end")


def record(game: Game, path: Path) -> TableSession:
    """Play ``game``; seat 0's transcript goes to ``path``."""
    table = Table(game)
    table.run()
    path.unlink(missing_ok=True)
    write_transcript(path, table.sessions[0])
    return table.sessions[0]


def vector_path(game: Game) -> Path:
    return VECTORS / f"{game.name}.transcript"


# -- the manifest: what a verifier answers for each game and each tampered copy -------------


def private_keys(game: Game) -> list[bytes]:
    """The RFC 8032 private keys of the game's seats (``helpers.identities``)."""
    seats = RULE_SETS[game.variant].seats
    keys = [bytes([game.keys, seat]) * 16 for seat in range(seats)]
    assert [Identity.from_seed(k).public_key_bytes for k in keys] == [
        i.public_key_bytes for i in identities(game.keys, seats)
    ]
    return keys


def round_secrets(game: Game) -> dict[str, list[dict[str, str]]]:
    """Per round of the record, each seat's deck secrets (``SeededSecrets``): its secret key
    and its shuffle seed (DECK.md §3, §4)."""
    envelopes = map(Envelope.decode, read_transcript(vector_path(game)).envelopes)
    rounds = sorted({e.body["round"] for e in envelopes if e.type == "deck"})
    out = {}
    for number in rounds:
        entries = []
        for seat in range(RULE_SETS[game.variant].seats):
            loaded = SeededSecrets(game.seed, seat).load(number)
            assert loaded is not None
            entries.append({"secret_key": loaded[0].hex(), "shuffle_seed": loaded[1].hex()})
        out[str(number)] = entries
    return out


def reference_answer(data: bytes, folder: Path) -> conformance.Answer:
    """What ``belote-p2p verify`` answers for a transcript file holding ``data``."""
    path = folder / "case.transcript"
    path.write_bytes(data)
    try:
        verdict = verify_transcript(path)
    except TranscriptError:
        return conformance.Answer(conformance.EXIT_UNREADABLE)
    status = conformance.EXIT_VALID if verdict.ok else conformance.EXIT_NOT_VALID
    return conformance.parse_verdict(status, verdict.summary())


def vector_entry(game: Game, folder: Path) -> dict[str, Any]:
    """The manifest's entry for ``game``: every case of it verified (the costly part)."""
    keys = private_keys(game)
    made = conformance.copies(vector_path(game).read_bytes(), keys)
    return {
        "file": vector_path(game).name,
        "description": game.description,
        "rules": definition_of(game)[0].rules.to_dict(),
        "seed": game.seed,
        "keys": [k.hex() for k in keys],
        "secrets": round_secrets(game),
        "expected": {t: reference_answer(d, folder).to_json() for t, d in made.items()},
    }


def manifest(folder: Path, vectors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The manifest; ``vectors`` its games' entries if they are known already."""
    if vectors is None:
        vectors = [vector_entry(game, folder) for game in GAMES]
    return {
        "description": "The recorded games of this folder and what a verifier answers for "
        "each, as it is and tampered (protocol/README.md, 'The conformance kit'). 'keys' are "
        "the seats' RFC 8032 private keys (test identities), with which the kit signs its "
        "lies again. 'expected' maps a case ('original' or a tamper) to the verifier's exit "
        "status and verdict; 'seat' is the seat at fault or gone, 'scores' the final scores "
        "of OK and where an ABANDONED or INCOMPLETE game stood, 'round' the rounds of OK "
        "(after N rounds) and the round an ABANDONED or INCOMPLETE game stood in (in round "
        "R). 'secrets' are each seat's deck secrets of each round (its "
        "secret key and shuffle seed, DECK.md sections 3 and 4), so that a table session can "
        "replay any seat.",
        "verifier": {
            "command": "CMD FILE",
            "exit": {
                "0": "OK or ABANDONED: a valid and complete record",
                "1": "FAULT, INCOMPLETE, INVALID or NO GAME",
                "2": "FILE is not a transcript (its header or framing is wrong)",
            },
            "verdicts": list(conformance.KINDS),
        },
        "tampers": {name: conformance.describe(t) for name, t in conformance.TAMPERS.items()},
        "vectors": vectors,
    }


def manifest_text(folder: Path, vectors: list[dict[str, Any]] | None = None) -> str:
    return json_text(manifest(folder, vectors))


def json_text(data: object) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def write(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for game in GAMES:
            if not names or game.name in names:
                record(game, vector_path(game))
                print(f"wrote {vector_path(game)}")
        MANIFEST.write_text(manifest_text(Path(tmp)), encoding="utf-8")
        print(f"wrote {MANIFEST}")
    HANDSHAKE.write_text(handshake_text(), encoding="utf-8")
    print(f"wrote {HANDSHAKE}")
    LOBBY.write_text(lobby_text(), encoding="utf-8")
    print(f"wrote {LOBBY}")
    DIRECTORY.write_text(directory_text(), encoding="utf-8")
    print(f"wrote {DIRECTORY}")


# -- the tests -----------------------------------------------------------------------------


def expected(game: Game) -> conformance.Answer:
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    entry = next(v for v in data["vectors"] if v["file"] == vector_path(game).name)
    return conformance.Answer.from_json(entry["expected"]["original"])


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_code_still_writes_the_game_byte_for_byte(game: Game, tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.transcript"
    session = record(game, fresh)
    assert fresh.read_bytes() == vector_path(game).read_bytes()
    if game.wanted is not None:  # the engine alone plays the same game, which is as wanted
        alone = simulate(game)
        assert game.wanted(alone)
        assert outcomes(session.state) == outcomes(alone)
        assert session.state.scores == alone.scores
    if game.audit_fault is not None:  # the audit rescored one round, for the cheat
        assert audit_faults(verify_transcript(fresh)) == [game.audit_fault]
    assert reference_answer(fresh.read_bytes(), tmp_path) == expected(game)


def test_the_games_hold_what_they_are_for() -> None:
    answers = {g.name: expected(g) for g in GAMES}
    assert {a.kind for a in answers.values()} == {"OK", "ABANDONED", "FAULT"}
    assert answers["game-abandoned"].seat == 2 and answers["game-fault"].seat == 1
    assert answers["game-left"].kind == "OK"  # the open hand played on to the end
    assert answers["game-left-late"].kind == "OK"  # left before its reveal, audited all the same
    assert_the_leave_games_hold_what_they_are_for(answers)
    # Without teams, a score per player: three, and two.
    three, two = answers["game-three-handed"], answers["game-two-handed"]
    assert three.scores is not None and len(three.scores) == 3
    assert two.scores is not None and len(two.scores) == 2
    transcript = read_transcript(vector_path(BY_NAME["game-two-handed"]))
    envelopes = [Envelope.decode(e) for e in transcript.envelopes]
    assert check_turn_ups(transcript.definition, envelopes) > 0  # face-down cards opened
    coinche = [str(b) for r in simulate(BY_NAME["game-coinche"]).history for _, b in r.bids]
    assert {"80 NT", "90 AT", "coinche", "surcoinche", "110 NT"} <= set(coinche)
    # Two-handed: a card turned up later may be of a suit the player did not follow, so a
    # verifier that checked plays against "shown voids" refuses this honest game.
    assert plays_of_a_suit_not_followed(verify_transcript(vector_path(BY_NAME["game-two-handed"])))
    # Two-handed belote: claimed with the card that completes the pair (PROTOCOL.md §6.2.3).
    belotes = [p for r in rounds(simulate(BY_NAME["game-two-handed"])) for p in r.belote]
    assert belotes
    # The audit games: one round rescored each, the game played on to its end.
    for game in AUDIT_GAMES:
        verdict = verify_transcript(vector_path(game))
        assert verdict.ok and audit_faults(verdict) == [game.audit_fault]
        audited = next(r for r in verdict.rounds if r.report.fault is not None)
        assert audited.report.fault is not None and game.cheat is not None
        assert audited.report.fault.seat == game.cheat().seat


def envelopes_of(name: str) -> list[Envelope]:
    return [Envelope.decode(e) for e in read_transcript(vector_path(BY_NAME[name])).envelopes]


def assert_the_leave_games_hold_what_they_are_for(answers: dict[str, conformance.Answer]) -> None:
    roster = {name: read_transcript(vector_path(BY_NAME[name])).definition.roster
              for name in ("game-left", "game-left-deal", "game-abandoned-late",
                           "game-left-twice", "game-left-held")}  # fmt: skip

    def seat(name: str, envelope: Envelope) -> int:
        return roster[name].index(envelope.sender)

    # The partner of a dummy signs more plays in a round than a seat plays (PROTOCOL.md §6.5).
    plays: dict[tuple[int, int], int] = {}
    for e in envelopes_of("game-left"):
        if e.type == "play":
            key = (seat("game-left", e), e.body["round"])
            plays[key] = plays.get(key, 0) + 1
    assert max(plays.values()) > 8
    # Dealt again: each live seat signed two keys in round 0, the leaver one.
    keys: dict[int, int] = {}
    for e in envelopes_of("game-left-deal"):
        if e.type == "deck" and e.body["round"] == 0 and e.body["msg"]["type"] == "deck.key":
            keys[seat("game-left-deal", e)] = keys.get(seat("game-left-deal", e), 0) + 1
    assert keys == {0: 2, 1: 1, 2: 2, 3: 2}
    assert answers["game-left-deal"].kind == "OK"
    # The deciding vote (seat 0's) comes before the late card in seat 0's chain, the last
    # vote (seat 1's) after it: the cut is round 1, though the record plays on to round 2.
    late = envelopes_of("game-abandoned-late")
    kinds = [(seat("game-abandoned-late", e), e.type) for e in late]
    first_vote, last_vote = kinds.index((0, "abandon")), kinds.index((1, "abandon"))
    late_play = max(i for i, k in enumerate(kinds) if k == (2, "play"))
    assert first_vote < late_play < last_vote
    assert answers["game-abandoned-late"].round == 1
    assert answers["game-abandoned-late"].seat == 2
    # The second leave: two votes (seats 0 and 2) against seat 1, the game abandoned by it.
    votes = {(seat("game-left-twice", e), e.body["seat"])
             for e in envelopes_of("game-left-twice") if e.type == "abandon"}  # fmt: skip
    assert {(0, 1), (2, 1)} <= votes and (3, 1) not in votes
    assert answers["game-left-twice"].kind == "ABANDONED" and answers["game-left-twice"].seat == 1
    # Held: seat 3's chain goes on past what every vote against it names (two plays), and
    # they count for nothing: the same deal as game-left, the same game (PROTOCOL.md §6.7).
    held = envelopes_of("game-left-held")
    named = {e.seen[3] for e in held if e.type == "abandon" and e.body["seat"] == 3}
    last_named = max(e.seq for e in held if e.hash in named)
    late = [e for e in held if seat("game-left-held", e) == 3 and e.seq > last_named]
    assert [e.type for e in late] == ["play", "play"]
    assert answers["game-left-held"] == answers["game-left"]
    # The records' order is not causal: late envelopes before the votes, the same answer.
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    moved = [v for v in data["vectors"] if "late-before-votes" in v["expected"]]
    assert {v["file"] for v in moved} >= {
        "game-left-held.transcript",
        "game-abandoned-late.transcript",
    }
    for v in moved:
        assert v["expected"]["late-before-votes"] == v["expected"]["original"]


def documented_caps() -> dict[str, tuple[int, int, int | None]]:
    """PROTOCOL.md §6.5's table of caps: body type -> (largest envelope in bytes, most per
    seat, two-handed's most per round where the row names one)."""
    text = (ROOT / "protocol" / "PROTOCOL.md").read_text(encoding="utf-8")
    section = text.split("### 6.5 Limits")[1].split("### 6.6")[0]
    caps = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        kinds, size, most = line.split("|")[1:4]
        number, unit = size.split()
        limit = int(number) * {"bytes": 1, "KiB": 1024}[unit]
        counts = [int(n) for n in re.findall(r"\d+", most)]
        for kind in re.findall(r"`([a-z]+)`", kinds):
            caps[kind] = (limit, counts[0], counts[1] if len(counts) > 1 else None)
    return caps


def test_the_table_of_caps_is_the_code_s() -> None:
    """One table of every cap (PROTOCOL.md §6.5), the code's own numbers; and the leave
    games stay within them where a seat signs more than at a full table: the partner of a
    dummy its plays and the dummy's, a round dealt again two keys."""
    caps = documented_caps()
    assert caps.keys() == ENVELOPE_CAPS.keys()
    for kind, (size, most, two_handed) in caps.items():
        assert size == ENVELOPE_CAPS[kind]
        if kind in ROUND_CAPS:
            assert most == ROUND_CAPS[kind]
            assert two_handed in (None, TWO_HANDED_ROUND_CAPS[kind])
            assert two_handed is not None or TWO_HANDED_ROUND_CAPS[kind] == most
        else:
            assert most == GAME_CAPS[kind]
    most_signed: dict[tuple[str, str], int] = {}
    for name in ("game-left", "game-left-deal", "game-left-held", "game-left-twice"):
        counts: dict[tuple[bytes, str, int], int] = {}
        for e in envelopes_of(name):
            if e.type in ROUND_CAPS:
                key = (e.sender, e.type, e.body["round"])
                counts[key] = counts.get(key, 0) + 1
        for (_, kind, _), n in counts.items():
            most_signed[name, kind] = max(most_signed.get((name, kind), 0), n)
    assert most_signed["game-left", "play"] == 16  # the partner: its 8 and the dummy's 8
    assert most_signed["game-left-deal", "deck"] > 6  # the deal given up and the new one
    assert all(n <= ROUND_CAPS[kind] for (_, kind), n in most_signed.items())


def plays_of_a_suit_not_followed(verdict: Verdict) -> int:
    """Two-handed: the plays of a suit that the same player failed to follow earlier in the
    round."""
    count = 0
    for audited in verdict.rounds:
        failed: dict[int, set[int]] = {0: set(), 1: set()}
        for trick in audited.record.tricks:
            led = trick.cards[0] >> 3
            seats = (trick.leader, 1 - trick.leader)
            count += sum(c >> 3 in failed[seat] for seat, c in zip(seats, trick.cards, strict=True))
            if trick.cards[1] >> 3 != led:
                failed[seats[1]].add(led)
    return count


def test_the_manifest_is_what_its_generator_writes(tmp_path: Path) -> None:
    """``conformance.json`` byte for byte, its games' entries as they are in it (the next
    test checks each against the generator's, one game a test so that workers share them)."""
    stored = json.loads(MANIFEST.read_text(encoding="utf-8"))["vectors"]
    assert manifest_text(tmp_path, stored) == MANIFEST.read_text(encoding="utf-8")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_manifest_answers_each_game_as_its_generator_does(game: Game, tmp_path: Path) -> None:
    """The game's entry, text for text (the order of its keys too): its cases and the
    reference's answers."""
    stored = json.loads(MANIFEST.read_text(encoding="utf-8"))["vectors"]
    (entry,) = (v for v in stored if v["file"] == vector_path(game).name)
    assert json_text(vector_entry(game, tmp_path)) == json_text(entry)


def test_the_manifest_lists_every_game_its_seed_keys_and_cases() -> None:
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    assert [v["file"] for v in data["vectors"]] == [vector_path(g).name for g in GAMES]
    assert sorted(p.name for p in VECTORS.glob("*.transcript")) == sorted(
        vector_path(g).name for g in GAMES
    )
    for game, entry in zip(GAMES, data["vectors"], strict=True):
        assert entry["seed"] == game.seed
        assert entry["keys"] == [k.hex() for k in private_keys(game)]
        assert entry["rules"] == definition_of(game)[0].rules.to_dict()
        assert entry["secrets"] == round_secrets(game)
    assert data["tampers"] == {n: conformance.describe(t) for n, t in conformance.TAMPERS.items()}
    # The cases the kit makes are the ones the manifest answers (it refuses to run otherwise).
    assert len(conformance.cases(VECTORS)) == sum(len(v["expected"]) for v in data["vectors"])


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.name)
def test_the_record_order_is_not_causal(game: Game) -> None:
    """Each game of three or four seats has a record that comes before an envelope its
    ``seen`` names: a verifier that processes the records in file order, without holding
    any, fails on each of them. (With two seats the record is in causal order: seat 0
    records its own envelopes as it signs them, and the other seat's in the order it sent
    them, each naming only envelopes sent before it.)"""
    envelopes = [Envelope.decode(e) for e in read_transcript(vector_path(game)).envelopes]
    position = {e.hash: i for i, e in enumerate(envelopes)}
    ahead = any(position.get(h, -1) > i for i, e in enumerate(envelopes) for h in e.seen)
    assert ahead == (RULE_SETS[game.variant].seats > 2)


def test_the_fault_is_proven_by_the_evidence_of_a_fault_report() -> None:
    """The equivocation of game-fault is seen only in the evidence of the fault reports: the
    chain of seat 1 in seat 0's record holds one of the two bids."""
    transcript = read_transcript(vector_path(BY_NAME["game-fault"]))
    envelopes = [Envelope.decode(e) for e in transcript.envelopes]
    reports = [e for e in envelopes if e.type == "fault"]
    assert len(reports) == 3 and {e.body["seat"] for e in reports} == {1}
    without = [e.raw for e in envelopes if e.type != "fault"]
    assert verify_record(transcript.definition, without).fault is None


@pytest.mark.parametrize("game", [g for g in GAMES if g.wanted], ids=lambda g: g.name)
def test_seat_0_signs_its_record_again_from_the_manifest(game: Game) -> None:
    """From the manifest's keys and secrets, a session of seat 0 fed the others' envelopes
    derives every body seat 0 recorded (``TableSession.resume`` checks each one). Not in
    the games where seat 0 signed what no session derives: an abandonment (its driver's
    decision, on a deadline) or a fault report (whose evidence depends on what came first)."""
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    entry = next(v for v in data["vectors"] if v["file"] == vector_path(game).name)
    secrets = MemorySecrets()
    for number, seats in entry["secrets"].items():
        secrets.save(
            int(number), *(bytes.fromhex(seats[0][k]) for k in ("secret_key", "shuffle_seed"))
        )
    transcript = read_transcript(vector_path(game))
    identity = Identity.from_seed(bytes.fromhex(entry["keys"][0]))
    session = TableSession.resume(transcript.definition, 0, identity, transcript.envelopes, secrets)
    ours = [
        e for e in transcript.envelopes if Envelope.decode(e).sender == identity.public_key_bytes
    ]
    assert session.take_outbox() == ours


def signed_after(game: Game, seat: int, body: dict[str, Any], path: Path) -> Verdict:
    """The verdict on ``game``'s record with one more envelope of ``seat`` at its end."""
    frames = conformance.split_frames(vector_path(game).read_bytes())
    signer = Identity.from_seed(private_keys(game)[seat])
    last = [e for e in map(Envelope.decode, frames[1:]) if e.sender == signer.public_key_bytes][-1]
    seen = list(last.seen)
    seen[seat] = last.hash
    more = Envelope.create(signer, last.table, last.seq + 1, last.hash, seen, body)
    path.write_bytes(conformance.join_frames([*frames, more.encode()]))
    return verify_transcript(path)


def test_a_resignation_after_the_four_done_changes_nothing(tmp_path: Path) -> None:
    verdict = signed_after(BY_NAME["game-classic"], 1, abandon_body(1), tmp_path / "late")
    assert verdict.ok and verdict.finished and verdict.abandoned is None
    assert verdict.summary().startswith("OK: ")


def test_the_first_abandonment_stands(tmp_path: Path) -> None:
    verdict = signed_after(BY_NAME["game-abandoned"], 0, abandon_body(0), tmp_path / "again")
    assert verdict.abandoned == 2


# -- the hello handshake --------------------------------------------------------------------

HANDSHAKE = VECTORS / "handshake.json"
HANDSHAKE_KEYS = 16
"""The seed of the four identities of the handshake vector."""


def handshake_vector() -> dict[str, Any]:
    """Seat 2 dials seat 1: both hellos, both signed statements and both proofs; then what
    each side refuses: a hello from a lower seat, and a recorded proof on a new connection."""
    ids = identities(HANDSHAKE_KEYS)
    roster = [i.public_key_bytes for i in ids]
    table = bytes(range(0x10, 0x20))
    nonces = {1: bytes([0x11]) * 32, 2: bytes([0x22]) * 32}
    listener = Handshake(ids[1], table, 1, roster, peer_seat=None, nonce=nonces[1])
    dialler = Handshake(ids[2], table, 2, roster, peer_seat=1, nonce=nonces[2])
    hellos = {1: listener.hello(), 2: dialler.hello()}
    proofs = {2: dialler.receive_hello(hellos[1]), 1: listener.receive_hello(hellos[2])}
    assert listener.receive_proof(proofs[2]) == 2 and dialler.receive_proof(proofs[1]) == 1
    statements = {
        1: listener._statement(1, 2, nonces[1], nonces[2]),
        2: dialler._statement(2, 1, nonces[2], nonces[1]),
    }
    # A second connection: the listener draws a fresh nonce, the dialler's old proof fails.
    fresh = bytes([0x33]) * 32
    again = Handshake(ids[1], table, 1, roster, peer_seat=None, nonce=fresh)
    again.receive_hello(hellos[2])
    with pytest.raises(HandshakeError):
        again.receive_proof(proofs[2])
    lower = Handshake(ids[0], table, 0, roster, peer_seat=None, nonce=bytes([0x44]) * 32)
    with pytest.raises(HandshakeError):
        Handshake(ids[1], table, 1, roster, peer_seat=None, nonce=nonces[1]).receive_hello(
            lower.hello()
        )

    def side(seat: int) -> dict[str, Any]:
        return {
            "seat": seat,
            "private_key": (bytes([HANDSHAKE_KEYS, seat]) * 16).hex(),
            "nonce": nonces[seat].hex(),
            "hello": hellos[seat].hex(),
            "statement": statements[seat].hex(),
            "proof": proofs[seat].hex(),
        }

    return {
        "description": "The hello handshake of PROTOCOL.md section 4.2 between seat 2, which "
        "dials, and seat 1, which listens. Bytes are hex; every message is canonical msgpack "
        "(one frame payload). 'statement' is what the side signs: the label and the "
        "canonical map of section 4.2 built from its own point of view; 'proof' is its "
        "hello-proof. Each side checks the other's hello, then its proof. 'refused' lists "
        "frames a side must refuse (close the connection).",
        "table": table.hex(),
        "roster": [k.hex() for k in roster],
        "listener": side(1),
        "dialler": side(2),
        "refused": [
            {
                "case": "a recorded proof on a new connection",
                "receiver": 1,
                "receiver_nonce": fresh.hex(),
                "hello": hellos[2].hex(),
                "proof": proofs[2].hex(),
                "why": "the proof signs the listener nonce of the first connection",
            },
            {
                "case": "a hello from a lower seat",
                "receiver": 1,
                "receiver_nonce": nonces[1].hex(),
                "hello": lower.hello().hex(),
                "why": "higher seats dial lower ones: seat 1 listens only to seats 2 and 3",
            },
        ],
    }


def handshake_text() -> str:
    return json.dumps(handshake_vector(), indent=1) + "\n"


def test_the_handshake_vector_is_what_the_code_sends() -> None:
    assert HANDSHAKE.read_text(encoding="utf-8") == handshake_text()


def test_the_handshake_vector_checks_out_from_its_own_data() -> None:
    data = json.loads(HANDSHAKE.read_text(encoding="utf-8"))
    roster = [bytes.fromhex(k) for k in data["roster"]]
    for me, peer in (("listener", "dialler"), ("dialler", "listener")):
        mine, theirs = data[me], data[peer]
        assert decode(bytes.fromhex(mine["hello"])) == {
            "type": "hello",
            "table": bytes.fromhex(data["table"]),
            "seat": mine["seat"],
            "key": roster[mine["seat"]],
            "nonce": bytes.fromhex(mine["nonce"]),
        }
        statement = bytes.fromhex(mine["statement"])
        assert statement.startswith(HELLO_LABEL)
        assert decode(statement[len(HELLO_LABEL) :]) == {
            "table": bytes.fromhex(data["table"]),
            "signer_seat": mine["seat"],
            "signer_key": roster[mine["seat"]],
            "peer_seat": theirs["seat"],
            "peer_key": roster[theirs["seat"]],
            "signer_nonce": bytes.fromhex(mine["nonce"]),
            "peer_nonce": bytes.fromhex(theirs["nonce"]),
        }
        proof = decode(bytes.fromhex(mine["proof"]))
        assert proof["type"] == "hello-proof"
        assert verify(roster[mine["seat"]], proof["sig"], statement)
        assert (
            Identity.from_seed(bytes.fromhex(mine["private_key"])).sign(statement) == proof["sig"]
        )


# -- the lobby's proof of key -------------------------------------------------------------

LOBBY = VECTORS / "lobby-join.json"
LOBBY_KEYS = 17
"""The seed of the identities of the lobby vector."""


def lobby_vector() -> dict[str, Any]:
    """A joiner proves its key to the host's lobby (PROTOCOL.md §6.0): its join request, the
    host's challenge, the statement it signs and its proof; then proofs a host refuses."""
    joiner, other = identities(LOBBY_KEYS, 2)
    table, nonce = bytes(range(0x20, 0x30)), bytes([0x55]) * 32
    # Version 2's join (a version 3 host takes it still): the claims of §12.5 are in
    # directory.json.
    request = JoinRequest("Bob", joiner.public_key_bytes, 6001, seat=3, version=2)
    challenge = JoinChallenge(table, nonce)
    proof = prove(joiner, request, challenge)
    lobby = Lobby(JoinRequest("Alice", other.public_key_bytes, 7777), RULE_SETS["classic"],
                  table_id=table)  # fmt: skip
    lobby._nonces.add(nonce)
    sig = decode(proof)["sig"]
    assert lobby.join(request, "10.0.0.9", "10.0.0.1", nonce=nonce, signature=sig) == 3
    elsewhere = prove(joiner, request, JoinChallenge(bytes(16), nonce))
    stale = prove(joiner, request, JoinChallenge(table, bytes([0x66]) * 32))
    made_up = JoinRequest("Mallory", bytes([0xEE]) * 32, 6002, version=2)
    forged = encode({"type": "join-proof",
                     "sig": other.sign(proof_statement(table, nonce, made_up))})  # fmt: skip
    v1 = {k: v for k, v in request.to_wire().items() if k != "version"}
    for join, frame in ((request, elsewhere), (request, stale), (made_up, forged)):
        again = Lobby(lobby.host, lobby.rules, table_id=table)
        again._nonces.add(nonce)
        with pytest.raises(KeyNotProven):
            again.join(join, "10.0.0.9", "10.0.0.1", nonce=nonce, signature=decode(frame)["sig"])
    with pytest.raises(JoinRefused):
        JoinRequest.from_wire(v1)
    return {
        "description": "A joiner proves its key to the host's lobby, PROTOCOL.md section 6.0. "
        "Bytes are hex; every message is canonical msgpack (one frame payload). 'join' is the "
        "joiner's request, 'challenge' the host's answer, 'statement' what the joiner signs "
        "(the label and the canonical map of its request as sent, the nonce and the table "
        "id), 'proof' its join-proof. 'refused' lists what a host holding this table and "
        "nonce must refuse (an error; no seat).",
        "private_key": (bytes([LOBBY_KEYS, 0]) * 16).hex(),
        "key": joiner.public_key_bytes.hex(),
        "table": table.hex(),
        "nonce": nonce.hex(),
        "join": encode(request.to_wire()).hex(),
        "challenge": encode(challenge.to_wire()).hex(),
        "statement": proof_statement(table, nonce, request).hex(),
        "proof": proof.hex(),
        "refused": [
            {
                "case": "a proof made for another table",
                "join": encode(request.to_wire()).hex(),
                "proof": elsewhere.hex(),
                "why": "its statement names table 00..00",
            },
            {
                "case": "a proof over another nonce",
                "join": encode(request.to_wire()).hex(),
                "proof": stale.hex(),
                "why": "its statement signs the nonce 66..66 of another connection",
            },
            {
                "case": "a made-up key",
                "join": encode(made_up.to_wire()).hex(),
                "proof": forged.hex(),
                "why": "the signature is by another key than the one announced",
            },
            {
                "case": "a join of lobby version 1",
                "join": encode(v1).hex(),
                "why": "no version: a version 1 joiner, which proves no key",
            },
        ],
    }


def lobby_text() -> str:
    return json.dumps(lobby_vector(), indent=1) + "\n"


def test_the_lobby_vector_is_what_the_code_sends() -> None:
    assert LOBBY.read_text(encoding="utf-8") == lobby_text()


def test_the_lobby_vector_checks_out_from_its_own_data() -> None:
    data = json.loads(LOBBY.read_text(encoding="utf-8"))
    key, table, nonce = (bytes.fromhex(data[k]) for k in ("key", "table", "nonce"))
    join = decode(bytes.fromhex(data["join"]))
    assert join["key"] == key and join["version"] == 2
    assert decode(bytes.fromhex(data["challenge"])) == {
        "type": "challenge",
        "table": table,
        "nonce": nonce,
    }
    statement = bytes.fromhex(data["statement"])
    label = b"belote-p2p/join-proof/v1\x00"
    assert statement == label + encode({"join": join, "nonce": nonce, "table": table})
    proof = decode(bytes.fromhex(data["proof"]))
    assert set(proof) == {"type", "sig"} and proof["type"] == "join-proof"
    assert verify(key, proof["sig"], statement)
    assert Identity.from_seed(bytes.fromhex(data["private_key"])).sign(statement) == proof["sig"]
    for case in data["refused"]:
        request = decode(bytes.fromhex(case["join"]))
        if "proof" in case:
            sig = decode(bytes.fromhex(case["proof"]))["sig"]
            statement = label + encode({"join": request, "nonce": nonce, "table": table})
            assert not verify(request["key"], sig, statement), case["case"]
        else:
            assert "version" not in request


# -- the deck vector's layout -----------------------------------------------------------------

DECK_VECTOR = VECTORS / "deck-classic.json"


def documented_layout() -> dict[str, set[str]]:
    """The keys of DECK.md §12's table: top-level key -> the field names its row lists."""
    text = (ROOT / "protocol" / "DECK.md").read_text(encoding="utf-8")
    section = text.split("## 12. Test vectors")[1].split("`events` is one sequence")[0]
    rows = [line.split("|")[1:3] for line in section.splitlines() if line.startswith("| `")]
    layout = {}
    for keys, content in rows:
        names = set(re.findall(r"`([a-z_]+)`", content))
        for key in re.findall(r"`([a-z_]+)`", keys):
            layout[key] = names
    return layout


def test_the_deck_vector_is_laid_out_as_deck_md_says() -> None:
    data = json.loads(DECK_VECTOR.read_text(encoding="utf-8"))
    layout = documented_layout()
    assert set(data) == set(layout)
    for key in ("secrets", "derived"):
        assert [set(entry) for entry in data[key]] == [layout[key]] * 4
        assert [entry["seat"] for entry in data[key]] == [0, 1, 2, 3]
    assert set(data["hands"]) == {"0", "1", "2", "3"}
    local = {"start": set(), "reveal": set(), "set_taker": {"taker"}, "play": {"position"}}
    for event in data["events"]:
        if event["event"] == "message":
            assert set(event) == {"event", "from", "canonical_msgpack", "fields"}
            raw = bytes.fromhex(event["canonical_msgpack"])
            assert encode(decode(raw)) == raw  # canonical: decode refuses anything else
        else:
            assert set(event) == {"event", "seat"} | local[event["event"]]


# -- the public directory (PROTOCOL.md §12) -----------------------------------------------------

DIRECTORY = VECTORS / "directory.json"
DIRECTORY_KEYS = 23
"""The seed of the identities of the directory vector."""


def directory_vector() -> dict[str, Any]:
    """A host lists its table at a relay and a stranger finds it (PROTOCOL.md §12): the
    ad, what it signs, the messages both ways; ads a relay refuses; a version 3 join with
    its claims and the ready check."""
    host, joiner, mallory = identities(DIRECTORY_KEYS, 3)
    nonce, table = bytes([0x5A]) * 32, bytes(range(0x40, 0x50))
    ad = Advertisement(
        host_key=host.public_key_bytes, table_id=table, nonce=nonce, seq=0, ttl=60,
        name="Alice", variant="coinche", target=1000, seats=4, free=2,
        players=(AdPlayer("Bob", joiner.public_key_bytes, 4),), langs=("fr", "es"), level=7,
        addresses=("198.51.100.7:7777", "[2001:db8::7]:7777"), relay="198.51.100.1:7779",
    )  # fmt: skip
    signed = ad.sign(host)
    nonces = (bytes([0xA0 + k]) * 32 for k in range(16))
    relay = RelayServer(RelayLimits(), nonce=lambda: next(nonces), directory=Directory())
    client = RelayClient(relay, 0.0, "198.51.100.7")
    client.send(hello_message())
    relay_nonce = decode(client.inbox.pop())["nonce"]
    live = replace(ad, nonce=relay_nonce).sign(host)
    client.send(advertise_message(live))
    assert decode(client.inbox.pop()) == {"type": "dir-listed", "seq": 0, "expires": 60}
    query = Query(variant="coinche", lang="es", limit=10)
    lister = RelayClient(relay, 0.0, "203.0.113.9")
    lister.send(encode(query.to_wire()))
    answer = lister.inbox.pop()
    assert parse_tables(answer).ads == (live,)

    def refused_by_the_relay(frame: bytes) -> str:
        flooder = RelayClient(relay, 0.0, "192.0.2.66")
        flooder.send(hello_message())
        flooder.inbox.pop()
        flooder.send(frame)
        reason = decode(flooder.inbox.pop())
        assert reason["type"] == "relay-error" and flooder.closed is not None
        return str(reason["reason"])

    forged = {
        "type": "dir-advertise",
        "ad": ad.to_wire(),
        "sig": mallory.sign(AD_LABEL + ad.encode()),
    }
    big = {**ad.to_wire(), "addresses": ["a" * 250 + ":1"] * 8}
    oversized = {"type": "dir-advertise", "ad": big, "sig": host.sign(AD_LABEL + encode(big))}
    refused = [
        ("an ad signed by another key than the one it names", encode(forged)),
        ("an ad over 2048 bytes", encode(oversized)),
        ("an ad signed over another connection's nonce", advertise_message(signed)),
    ]
    cases = []
    for case, frame in refused:
        reason = refused_by_the_relay(frame)
        cases.append({"case": case, "message": frame.hex(), "relay_says": reason})
    claims = JoinRequest("Bob", joiner.public_key_bytes, 6001, lang="fr", level=4)
    check = ReadyCheck((ReadySeat("Alice", host.public_key_bytes, 7, "fr"), ReadySeat.of(claims),
                        ReadySeat("Carol", mallory.public_key_bytes, None, "es"),
                        ReadySeat("Dan", bytes(32), None, None)))  # fmt: skip
    return {
        "description": "The public directory, PROTOCOL.md section 12. Bytes are hex; every "
        "message is canonical msgpack (one frame payload). 'ad' is a host's advertisement "
        "(its nonce here a fixed one), 'statement' what the host signs, 'signed_ad' the "
        "{ad, sig} entry; 'exchange' a host listing it over a relay nonce and a stranger's "
        "query and the relay's answer; 'refused' what a relay must refuse (a relay-error, "
        "the connection closed, nothing listed); 'lobby' a version 3 join with its claims, "
        "a ready check and the answer.",
        "private_key": (bytes([DIRECTORY_KEYS, 0]) * 16).hex(),
        "key": host.public_key_bytes.hex(),
        "ad": ad.encode().hex(),
        "statement": ad_statement(ad).hex(),
        "sig": signed.sig.hex(),
        "signed_ad": encode(signed.to_wire()).hex(),
        "exchange": {
            "relay_nonce": relay_nonce.hex(),
            "advertise": advertise_message(live).hex(),
            "listed": listed_message(0, 60).hex(),
            "query": encode(query.to_wire()).hex(),
            "tables": answer.hex(),
            "withdraw": withdraw_message().hex(),
        },
        "refused": cases,
        "lobby": {
            "join": encode(claims.to_wire()).hex(),
            "ready_check": encode(check.to_wire()).hex(),
            "ready": ready_message(True).hex(),
        },
    }


def directory_text() -> str:
    return json.dumps(directory_vector(), indent=1) + "\n"


def test_the_directory_vector_is_what_the_code_sends() -> None:
    assert DIRECTORY.read_text(encoding="utf-8") == directory_text()


def test_the_directory_vector_checks_out_from_its_own_data() -> None:
    """What a second implementer checks from the file alone: the statement is the label
    and the canonical ad, the signature verifies under the ad's key, the listing holds the
    ad signed over the relay's nonce, and each refused ad fails a rule of §12.1."""
    data = json.loads(DIRECTORY.read_text(encoding="utf-8"))
    key = bytes.fromhex(data["key"])
    ad = decode(bytes.fromhex(data["ad"]))
    label = b"belote-p2p/table-ad/v1\x00"
    assert set(ad) == {
        "type", "version", "key", "table", "nonce", "seq", "ttl", "name", "variant", "target",
        "seats", "free", "players", "langs", "level", "addresses", "relay",
    }  # fmt: skip
    assert ad["key"] == key and encode(ad) == bytes.fromhex(data["ad"])
    statement = bytes.fromhex(data["statement"])
    assert statement == label + encode(ad)
    sig = bytes.fromhex(data["sig"])
    assert verify(key, sig, statement)
    assert Identity.from_seed(bytes.fromhex(data["private_key"])).sign(statement) == sig
    assert decode(bytes.fromhex(data["signed_ad"])) == {"ad": ad, "sig": sig}
    exchange = data["exchange"]
    advertise = decode(bytes.fromhex(exchange["advertise"]))
    assert advertise["type"] == "dir-advertise"
    assert advertise["ad"]["nonce"] == bytes.fromhex(exchange["relay_nonce"])
    assert verify(key, advertise["sig"], label + encode(advertise["ad"]))
    tables = decode(bytes.fromhex(exchange["tables"]))
    assert tables == {"type": "dir-tables", "more": False,
                      "tables": [{"ad": advertise["ad"], "sig": advertise["sig"]}]}  # fmt: skip
    query = decode(bytes.fromhex(exchange["query"]))
    assert query == {"type": "dir-query", "version": 1, "variant": "coinche", "lang": "es",
                     "limit": 10}  # fmt: skip
    assert decode(bytes.fromhex(exchange["withdraw"])) == {"type": "dir-withdraw"}
    forged, oversized, elsewhere = (decode(bytes.fromhex(c["message"])) for c in data["refused"])
    assert not verify(forged["ad"]["key"], forged["sig"], label + encode(forged["ad"]))
    assert len(encode(oversized["ad"])) > 2048
    assert verify(oversized["ad"]["key"], oversized["sig"], label + encode(oversized["ad"]))
    assert elsewhere["ad"]["nonce"] != bytes.fromhex(exchange["relay_nonce"])
    join = decode(bytes.fromhex(data["lobby"]["join"]))
    assert join["version"] == 3 and join["lang"] == "fr" and join["level"] == 4
    check = decode(bytes.fromhex(data["lobby"]["ready_check"]))
    assert check["type"] == "ready-check" and len(check["seats"]) == 4
    assert all(set(s) == {"name", "key", "level", "lang"} for s in check["seats"])
    assert decode(bytes.fromhex(data["lobby"]["ready"])) == {"type": "ready", "ready": True}


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--search"]:
        searched = [g.name for g in GAMES if g.wanted is not None or g.audit_fault is not None]
        for name in args[1:] or searched:
            print(name, search(BY_NAME[name]))
    elif args[:1] == ["--write"]:
        write(args[1:])
    else:
        print("usage: PYTHONPATH=. python tests/test_vectors.py --search|--write [NAME...]")

"""The dummy (``PROTOCOL.md`` §6.7) at a table whose every link goes through a standalone
relay process: four real peers over loopback TCP, none of which listens (``--no-listen``),
one of which resigns, or is killed and never comes back."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
from helpers import (
    LOOPBACK,
    TABLE,
    TIMEOUT,
    StoppingPlayer,
    check_agreement,
    check_played_on,
    identities,
    start_relay_process,
)

from belote_p2p.game.engine import Phase
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.peer import PeerConfig, PeerResult, run_peer
from belote_p2p.players.player import BotPlayer, Player, Resigned
from belote_p2p.protocol.events import ActionTaken, SeatLeft
from belote_p2p.protocol.secretstore import FileSecrets
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import Envelope

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")

QUICK = PeerConfig(person_deadline=2.0, grace=2.0)
"""A silent seat is signed gone 4 s after its turn (the bots decide at once)."""


async def play_relayed(
    tmp_path: Path,
    *,
    players: dict[int, Player] | None = None,
    config: PeerConfig | None = None,
    kill: tuple[int, int] | None = None,
    target: int = 301,
) -> tuple[list[PeerResult | None], list[list[object]]]:
    """Four peers that do not listen play a classic game to ``target`` through a
    ``belote-p2p relay`` process; ``kill`` (seat, envelopes): that seat is cancelled, as a
    killed process is, once its record holds that many envelopes and it holds four cards
    or more in a trick's play (so that its partner has some of them to play in that round,
    whatever the scores), and never comes back. The results (None for a killed seat) and
    each seat's events."""
    ids = identities(52)
    seats = tuple(Seat(f"p{s}", ids[s].public_key_bytes, "") for s in range(4))
    definition = TableDefinition(TABLE, RULE_SETS["classic"].with_(target=target), seats)
    proposal = definition.propose(ids[0])
    results: list[PeerResult | None] = [None] * 4
    events: list[list[object]] = [[] for _ in range(4)]

    async def one(seat: int, relay: tuple[str, int]) -> None:
        gone = trio.CancelScope()
        recorded = 0

        def step(envelopes: Sequence[Envelope]) -> None:
            nonlocal recorded
            recorded += len(envelopes)
            if kill is not None and kill[0] == seat and recorded >= kill[1] and in_play():
                gone.cancel()

        def in_play() -> bool:
            taken = [e for e in events[seat] if isinstance(e, ActionTaken)]
            state = taken[-1].state if taken else None
            return (
                state is not None
                and state.phase is Phase.PLAY
                and state.hands[seat].bit_count() >= 4
            )

        with gone:
            results[seat] = await run_peer(
                definition, seat, ids[seat],
                (players or {}).get(seat) or BotPlayer("random", seed=seat),
                transcript=tmp_path / f"seat{seat}.transcript", listeners=[],
                secrets=FileSecrets(tmp_path / "secrets", definition.table_id, seat),
                proposal=proposal, relay=relay, config=config,
                on_event=events[seat].append, on_step=step,
            )  # fmt: skip

    with trio.fail_after(TIMEOUT * 3):
        async with trio.open_nursery() as nursery:
            relay, port = await start_relay_process(nursery, tmp_path)
            async with trio.open_nursery() as table:
                for seat in range(4):
                    table.start_soon(one, seat, (LOOPBACK, port))
            relay.process.kill()
            nursery.cancel_scope.cancel()
    return results, events


async def test_a_seat_that_resigns_in_round_2_leaves_a_dummy_played_through_the_relay(
    tmp_path: Path,
) -> None:
    """Seat 1 resigns in round 2: its partner plays its open hand, every card of it through
    relayed links; the game finishes, the three live records verify alike with the dummy's
    plays checked, and the leaver's own record says LEFT."""
    resigning = StoppingPlayer(12, Resigned("the player resigned"))
    # To 501: a round 1 can reach 301 (the deals are random), ending the game before round 2.
    results, events = await play_relayed(tmp_path, players={1: resigning}, target=501)
    done = [r for r in results if r is not None]
    assert len(done) == 4
    assert all(r.relayed == 3 for r in done), [r.relayed for r in done]
    assert done[1].resigned and done[1].error is None
    check_played_on(done, events, 1)
    left = next(e for e in events[0] if isinstance(e, SeatLeft))
    assert left.round >= 1 and left.by == 3


async def test_a_no_listen_seat_killed_and_never_resumed_leaves_a_dummy(tmp_path: Path) -> None:
    """Seat 2 (it does not listen: only the relay reaches it) is killed mid-game and never
    comes back: the others wait for it past its deadline and grace, sign it gone, and its
    partner plays its open hand to the end; the three live records verify alike, naming
    the leave and the open hand, and hold the dummy's plays."""
    # Killed while it holds four cards or more in a trick's play: its partner plays some of
    # them in that round, even if the round ends the game (the deals are random).
    results, events = await play_relayed(tmp_path, config=QUICK, kill=(2, 60), target=501)
    assert results[2] is None
    live = [r for r in results if r is not None]
    check_agreement(live)
    assert all(r.left == 2 and r.abandoned is None and r.relayed == 3 for r in live)
    verdicts = {verify_transcript(r.transcript).summary() for r in live}
    assert len(verdicts) == 1, verdicts
    verdict = verdicts.pop()
    assert verdict.startswith("OK: ") and "left in round" in verdict, verdict
    assert "played its open hand" in verdict, verdict
    seen = events[0]
    left = next(i for i, e in enumerate(seen) if isinstance(e, SeatLeft))
    assert any(isinstance(e, ActionTaken) and e.seat == 2 for e in seen[left:])

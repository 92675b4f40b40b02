"""Four real peers on loopback: a seat resigns as the round's last card is played.

Its resignation races the round's last card and the others' reveals (``PROTOCOL.md`` §6.7):
some peers take it in with a card still to play and release the leaver's cards, others
once the round is closed and they revealed; none waits for the leaver's reveal, whose key
the audit rebuilds from the pieces the three reveals carry (``DECK.md`` §8, §17.11).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trio
from helpers import TIMEOUT, check_played_on, play_table

from belote_p2p.game.cards import Card
from belote_p2p.net.peer import PeerControl
from belote_p2p.protocol.events import ActionTaken, RoundAudited
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.wire import Envelope

# Not about the deck's proof checks: each runs once per exact input in a worker (once.py).
pytestmark = pytest.mark.usefixtures("proofs_checked_once")

LEAVER = 1


async def test_a_seat_that_resigns_as_the_last_card_is_played_leaves_a_dummy(
    tmp_path: Path,
) -> None:
    """Seat 1 resigns the moment another seat plays a round's last card (that seat's peer
    asks it to, in the same process: the resignation is signed before the card reaches
    seat 1, which never reveals that round). The seat that played the card revealed
    before it learnt of the leave; the two others take the leave and the card in either
    order."""
    control = PeerControl()
    left_in: list[int] = []

    def watch_of(seat: int) -> Callable[[object], None]:
        def watch(event: object) -> None:
            if left_in or not isinstance(event, ActionTaken) or event.seat != seat:
                return
            if isinstance(event.action, Card) and event.state.played == 0:  # the last card
                left_in.append(event.state.history[-1].number)
                control.resign()

        return watch

    with trio.fail_after(TIMEOUT * 2):
        results, events = await play_table(
            "classic", tmp_path, target=1001, controls={LEAVER: control},
            watch={s: watch_of(s) for s in (0, 2, 3)}, timeout=TIMEOUT * 2,
        )  # fmt: skip
    assert len(left_in) == 1
    check_played_on(results, events, LEAVER)
    # The round it left in was scored as played and audited by every live peer, without
    # its reveal: its key rebuilt from the pieces the three reveals carry.
    transcript = read_transcript(results[0].transcript)
    leaver = transcript.definition.roster[LEAVER]
    envelopes = [Envelope.decode(e) for e in transcript.envelopes]
    assert not any(
        e.sender == leaver and e.type == "deck" and e.body["round"] == left_in[0]
        and e.body["msg"]["type"] == "deck.reveal"
        for e in envelopes
    )  # fmt: skip
    for r in results:
        if r.seat != LEAVER:
            record = next(h for h in r.state.history if h.number == left_in[0])
            assert record.score is not None and len(record.tricks) == 8
            assert any(
                isinstance(e, RoundAudited) and e.record.number == left_in[0]
                for e in events[r.seat]
            )

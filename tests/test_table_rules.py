"""The table rules of a definition (PROTOCOL.md §6.1): ``watchers``, signed by every seat.

A rule at its default is not in the encoding (every table without the rule keeps its bytes
and digest); one that is not its default changes the digest, so every seat signs it; and
each part of the program honours it: the host's lobby writes it, a rematch keeps it, a
joiner and a resumed seat offer no feed, a watcher served such a table refuses it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import ROOT, Net, make_table, table_sessions, write_transcript

from belote_p2p.app.watch import play_watched
from belote_p2p.net.lobby import JoinRequest, Lobby, LobbyError
from belote_p2p.net.peer import PeerResult
from belote_p2p.net.rematch import check_rematch, passed_on
from belote_p2p.protocol.table import TABLE_RULES, TableDefinition
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.watch import WatchError, parse_table, table_message
from belote_p2p.protocol.wire import Envelope

pytestmark = pytest.mark.usefixtures("proofs_checked_once")


def test_a_table_rule_at_its_default_is_not_in_the_definition() -> None:
    """Every recorded game was signed before the rule existed: its header's definition
    still parses, with the rule at its default, and encodes to the same bytes."""
    assert TABLE_RULES == {"watchers": True, "hints": False}
    definition, _ = make_table("classic")
    assert definition.watchers and "watchers" not in definition.to_wire()
    for path in sorted((ROOT / "protocol" / "vectors").glob("game-*.transcript")):
        transcript = read_transcript(path)
        assert transcript.definition.watchers
        again = TableDefinition.from_wire(transcript.definition.to_wire())
        assert again.digest == transcript.definition.digest


def test_a_table_that_refuses_watchers_is_another_table_and_has_one_encoding() -> None:
    definition, _ = make_table("classic")
    closed = replace(definition, watchers=False)
    wire = closed.to_wire()
    assert wire["watchers"] is False and closed.digest != definition.digest
    assert TableDefinition.from_wire(wire) == closed
    for value in (True, 0, 1, None, "no"):
        with pytest.raises(ValueError, match="watchers"):
            TableDefinition.from_wire({**definition.to_wire(), "watchers": value})


def test_the_host_lobby_signs_the_rule_and_a_rematch_keeps_it() -> None:
    definition, ids = make_table("two-handed")
    host = JoinRequest("p0", ids[0].public_key_bytes, 7000)
    lobby = Lobby(host, definition.rules, watchers=False)
    lobby.admit(JoinRequest("p1", ids[1].public_key_bytes, 7001), "10.0.0.2", "10.0.0.1")
    closed = lobby.definition()
    assert closed.watchers is False
    rematch = replace(closed, table_id=bytes(16), rules=passed_on(closed))
    check_rematch(closed, rematch)
    with pytest.raises(LobbyError):
        check_rematch(closed, replace(rematch, watchers=True))


def test_a_watcher_served_a_table_that_refuses_watchers_refuses_it() -> None:
    definition, ids = make_table("classic")
    closed = replace(definition, watchers=False)
    with pytest.raises(WatchError, match="refuses watchers"):
        parse_table(table_message(closed, closed.propose(ids[0])))
    assert parse_table(table_message(definition, definition.propose(ids[0]))).definition.watchers


async def test_a_seat_offers_no_feed_for_a_table_that_refuses_watchers() -> None:
    """A joiner (or a resumed seat) with a relay of the table's own offers its feed only if
    the table lets watchers in, whatever its own ``--watch``."""
    definition, ids = make_table("classic")
    seen: list[object] = []

    class Played(Exception):
        """The game itself is not the point here."""

    async def play(on_step: Callable[[Sequence[Envelope]], None] | None) -> PeerResult:
        seen.append(on_step)
        raise Played

    closed = replace(definition, watchers=False)
    with pytest.raises(Played):
        await play_watched(
            play, closed, closed.propose(ids[0]), 1, ids[1], ("127.0.0.1", 9), allowed=True
        )
    assert seen == [None]


def test_a_game_at_a_table_that_refuses_watchers_plays_and_verifies(tmp_path: Path) -> None:
    """Every seat signs the rule with the definition (its digest): the game is played and
    its record verifies as any other."""
    definition, ids = make_table("two-handed", target=101, seed=4)
    closed = replace(definition, watchers=False)
    sessions = table_sessions(closed, ids, deal_seed=4)
    Net(sessions, random.Random(4)).run()
    assert all(s.completed for s in sessions)
    path = write_transcript(tmp_path / "closed.transcript", sessions[0])
    verdict = verify_transcript(path)
    assert verdict.ok and verdict.finished and not verdict.definition.watchers

"""``belote-p2p demo`` with three and two bot processes over loopback TCP: every process
ends the game, and every seat's transcript verifies alike (``verify``, ``replay``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_turn_ups, identities, run_cli

from belote_p2p.app.cli import main
from belote_p2p.app.output import parse_result
from belote_p2p.app.profile import open_db
from belote_p2p.game.rules import rule_set
from belote_p2p.net.lobby import JoinRefused, JoinRequest, Lobby
from belote_p2p.protocol.table import TableDefinition
from belote_p2p.protocol.transcript import read_transcript
from belote_p2p.protocol.verify import verify_transcript
from belote_p2p.protocol.wire import Envelope


@pytest.mark.parametrize(("variant", "seats"), [("three-handed", 3), ("two-handed", 2)])
async def test_demo_processes_play_to_an_agreed_end_and_every_record_verifies(
    variant: str, seats: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    done = await run_cli(
        tmp_path, "demo", "--variant", variant, "--target", "101", "--bot", "random",
        "--seed", "5", "--home", str(home), timeout=120,
    )  # fmt: skip
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    result = parse_result(out)
    assert result is not None and result["ok"]
    scores = result["scores"]
    assert len(scores) == seats and max(scores) >= 101
    assert f"All {seats} peers agree: final scores {'-'.join(map(str, scores))}" in out
    transcripts = sorted(home.rglob("*.transcript"))
    assert len(transcripts) == seats
    assert sorted(read_transcript(t).seat for t in transcripts) == list(range(seats))
    verdicts = [verify_transcript(t) for t in transcripts]
    assert all(v.ok and v.finished for v in verdicts)
    assert {v.summary() for v in verdicts} == {verdicts[0].summary()}
    assert list(verdicts[0].state.scores) == scores
    assert verdicts[0].summary().startswith("OK: seat ")
    if variant == "two-handed":  # no face-down card opened before its trick, in each record
        for path in transcripts:
            record = read_transcript(path)
            envelopes = [Envelope.decode(e) for e in record.envelopes]
            assert check_turn_ups(record.definition, envelopes) >= 16
    # The same through the commands.
    capsys.readouterr()
    for path in transcripts:
        assert main(["verify", str(path)]) == 0
    assert main(["replay", str(transcripts[0])]) == 0
    shown = capsys.readouterr().out
    assert verdicts[0].summary() in shown and "Score sheet" in shown
    # Every player's profile got its XP for the game (no teams: a seat's own rounds).
    profiles = sorted(home.rglob("profile.sqlite3"))
    assert len(profiles) == seats
    per_seat = []
    for path in profiles:
        with open_db(path) as db:
            (games,) = db.execute("SELECT COUNT(*) FROM games").fetchone()
            rows = db.execute("SELECT seat, xp, won FROM game_seats ORDER BY seat").fetchall()
        assert games == 1
        per_seat.append([tuple(r) for r in rows])
    # Every peer recorded the same XP for each of the players, one row per seat.
    assert all(p == per_seat[0] for p in per_seat)
    assert [r[0] for r in per_seat[0]] == list(range(seats))
    # Seat 0's RESULT counts its game XP plus any challenge it completed (a challenge
    # depends on the deal, so it may or may not come).
    assert result["xp"] >= per_seat[0][0][1] > 0
    winner = verdicts[0].state.winner
    assert [bool(r[2]) for r in per_seat[0]] == [s == winner for s in range(seats)]


KEYS = [identity.public_key_bytes for identity in identities(78, 6)]


def key(i: int) -> bytes:
    """A valid public key for player ``i`` (a table definition refuses a point that is not
    one, PROTOCOL.md §1)."""
    return KEYS[i]


def test_a_three_handed_lobby_seats_two_joiners_without_partners() -> None:
    lobby = Lobby(JoinRequest("Host", key(0), 5000), rule_set("three-handed"))
    with pytest.raises(JoinRefused, match="seats 1 to 2"):
        lobby.admit(JoinRequest("Far", key(3), 6003, seat=3), "10.0.0.9", "10.0.0.1")
    with pytest.raises(JoinRefused, match="no partners"):
        lobby.admit(JoinRequest("Pal", key(3), 6003, partner="Host"), "10.0.0.9", "10.0.0.1")
    assert lobby.admit(JoinRequest("B", key(1), 6001, seat=2), "10.0.0.9", "10.0.0.1") == 2
    assert not lobby.full
    assert lobby.admit(JoinRequest("C", key(2), 6002), "10.0.0.8", "10.0.0.1") == 1
    assert lobby.full
    with pytest.raises(JoinRefused, match="full"):
        lobby.admit(JoinRequest("D", key(4), 6004), "10.0.0.7", "10.0.0.1")
    lobby.swap(1, 2)
    definition = lobby.definition()
    assert [s.name for s in definition.seats] == ["Host", "B", "C"]
    assert TableDefinition.from_wire(definition.to_wire()) == definition
    two = Lobby(JoinRequest("Host", key(0), 5000), rule_set("two-handed"))
    assert two.admit(JoinRequest("B", key(1), 6001), "10.0.0.9", "10.0.0.1") == 1
    assert two.full and len(two.definition().seats) == 2


def test_a_table_definition_has_as_many_seats_as_its_rules() -> None:
    lobby = Lobby(JoinRequest("Host", key(0), 5000), rule_set("two-handed"))
    lobby.admit(JoinRequest("B", key(1), 6001), "10.0.0.9", "10.0.0.1")
    wire = lobby.definition().to_wire()
    wire["seats"] = [*wire["seats"], {"name": "X", "key": key(5), "address": ""}]
    with pytest.raises(ValueError, match="seats must be a list of 2"):
        TableDefinition.from_wire(wire)

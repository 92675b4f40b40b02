"""Names and text from peers: the name rule of PROTOCOL.md §6.1 where names are parsed (the
table definition, the lobby), and ``safe_text`` in front of every terminal."""

from __future__ import annotations

import dataclasses
import io
import random
import unicodedata
from pathlib import Path

import pytest
from helpers import Net, cli_argv, identities, make_table, table_sessions, write_transcript
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from terminal import Terminal, environment

from belote_p2p.app.display import seat_names
from belote_p2p.app.home import Home
from belote_p2p.app.profile import record_verdict
from belote_p2p.app.tui import TableView
from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.lobby import JoinRefused, JoinRequest, check_name
from belote_p2p.protocol.events import TableReady
from belote_p2p.protocol.names import (
    MAX_NAME,
    MAX_NAME_CELLS,
    REFUSED_CATEGORIES,
    cells,
    name_problem,
    safe_text,
)
from belote_p2p.protocol.session import TableSession
from belote_p2p.protocol.table import Seat, TableDefinition
from belote_p2p.protocol.verify import verify_record

HOSTILE = {
    "OSC 52 (clipboard write)": "Eve\x1b]52;c;ZWNobyBvd25lZA==\x07",
    "OSC 0 (window title)": "\x1b]0;owned\x07Eve",
    "blink": "\x1b[5mEve",
    "bidi override": "Eve\u202egnp.exe",
    "bell": "Eve\x07",
    "newline": "Eve\nBob",
    "no-break space": "Eve\u00a0",
    "line separator": "Eve\u2028",
    "private use": "Eve\ue000",
    "unassigned": "Eve\U000e0fff",
    "zero-width joiner": "E\u200dve",
}


@pytest.mark.parametrize("name", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_name_with_a_refused_code_point_is_refused(name: str) -> None:
    problem = name_problem(name)
    assert problem is not None and "U+" in problem
    with pytest.raises(JoinRefused):
        check_name(name)


def test_the_width_of_a_name_counts_wide_characters_twice() -> None:
    assert cells("Ana") == 3 and cells("李") == 2 and cells("é") == 1
    assert cells("e\u0301") == 1  # a combining acute accent sits on the e
    assert name_problem("李" * (MAX_NAME_CELLS // 2)) is None
    assert "cells" in (name_problem("李" * (MAX_NAME_CELLS // 2 + 1)) or "")
    assert name_problem("a" * MAX_NAME) is None
    assert name_problem("a" * (MAX_NAME + 1)) is not None
    assert name_problem("") is not None and name_problem(7) is not None
    assert name_problem("Zoë Ōkubo-李") is None


def seats_named(names: list[str]) -> TableDefinition:
    ids = identities(5)
    seats = tuple(Seat(n, i.public_key_bytes, f"127.0.0.1:{6000 + k}")
                  for k, (n, i) in enumerate(zip(names, ids, strict=False)))  # fmt: skip
    return TableDefinition(b"\x01" * 16, RULE_SETS["classic"], seats)


@pytest.mark.parametrize("name", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_table_definition_with_such_a_name_does_not_parse(name: str) -> None:
    wire = seats_named(["Ana", name, "Cy", "Di"]).to_wire()
    with pytest.raises(ValueError, match="seat 1: a name may not hold"):
        TableDefinition.from_wire(wire)
    assert TableDefinition.from_wire(seats_named(["Ana", "Bo", "Cy", "Di"]).to_wire())


def test_a_join_request_with_such_a_name_is_refused() -> None:
    key = identities(1)[0].public_key_bytes
    wire = JoinRequest("Eve", key, 6000).to_wire()
    assert JoinRequest.from_wire(wire).name == "Eve"
    for field in ("name", "partner"):
        with pytest.raises(JoinRefused, match="U\\+001B"):
            JoinRequest.from_wire({**wire, field: HOSTILE["blink"]})


def test_safe_text_escapes_what_a_terminal_would_obey() -> None:
    assert safe_text(HOSTILE["OSC 52 (clipboard write)"]) == "Eve\\x1b]52;c;ZWNobyBvd25lZA==\\x07"
    assert safe_text(HOSTILE["bidi override"]) == "Eve\\u202egnp.exe"
    assert safe_text("  well\tplayed\r\n ") == "well played"
    assert safe_text("Zoë 李") == "Zoë 李"
    assert safe_text("李" * 32, 10) == "李" * 4 + "…"
    assert safe_text("abcdef", 4) == "abc…"
    assert safe_text("abc", 3) == "abc"


def shown_code_points_refused(text: str) -> list[str]:
    return [
        ch
        for ch in text
        if unicodedata.category(ch) in REFUSED_CATEGORIES
        or (unicodedata.category(ch) == "Zs" and ch != " ")
    ]


@given(st.text(), st.one_of(st.none(), st.integers(1, 80)))
def test_safe_text_never_writes_a_control_character_nor_exceeds_the_width(
    text: str, width: int | None
) -> None:
    shown = safe_text(text, width)
    assert shown_code_points_refused(shown) == []
    if width is not None:
        assert cells(shown) <= width
    assert safe_text(shown) == shown or width is not None


@given(st.text(min_size=1, max_size=MAX_NAME))
def test_a_name_safe_text_keeps_is_a_name_it_shows_as_it_is(name: str) -> None:
    if name_problem(name) is None and name == " ".join(name.split()):
        assert safe_text(name, MAX_NAME_CELLS) == name


# -- every terminal path, on a pseudo-terminal -----------------------------------------------

HOSTILE_CHAT = "\x1b]0;owned\x07hi \x1b[5mthere\u202e \x1b]52;c;b3duZWQ=\x07"
HOSTILE_NAME = "Eve\x1b]52;c;b3duZWQ=\x07\x1b[5m\u202e"
OBEYED = ("\x1b]", "\x07", "\x1b[5m", "\u202e")
"""What a terminal would obey: OSC (title, clipboard), bell, blink, a bidi override."""


class OneLineNet(Net):
    """Seat 2 says one hostile line once the table is signed."""

    said = False

    def flush(self, seat: int) -> None:
        s = self.sessions[seat]
        if seat == 2 and s.ready and not self.said:
            self.said = True
            s.chat(HOSTILE_CHAT)
        super().flush(seat)


def one_round(names: list[str], table: bytes, seed: int) -> list[TableSession]:
    definition, ids = make_table("classic", target=1, seed=seed)
    seats = tuple(dataclasses.replace(s, name=n) for s, n in zip(definition.seats, names,
                                                                 strict=True))  # fmt: skip
    definition = dataclasses.replace(definition, table_id=table, seats=seats)
    sessions = table_sessions(definition, ids)
    OneLineNet(sessions, random.Random(7)).run()
    return sessions


def run_at_terminal(tmp_path: Path, *args: str) -> tuple[int, str]:
    term = Terminal(cli_argv(*args), environment(), tmp_path)
    try:
        status = term.finish()
    finally:
        term.close()
    return status, term.raw


def test_no_terminal_command_writes_what_a_terminal_would_obey(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.games.mkdir(parents=True)
    sessions = one_round(["Ann", "Bob", "Cy", "Di"], bytes(16), 7)
    path = write_transcript(home.games / "chat.transcript", sessions[0])
    # A profile that recorded, before the name rule, a game whose seat 1 held any text.
    hostile = one_round(["Ann2", HOSTILE_NAME, "Cy2", "Di2"], bytes(range(16)), 8)
    verdict = verify_record(hostile[0].definition, [e.encode() for e in hostile[0].transcript])
    assert record_verdict(home.profile_db, verdict, transcript=path, date="2026-01-01").ok
    (home.games / "chat\x1b]0;x\x07.transcript").write_bytes(b"not one")
    h = str(home.root)
    runs = {
        "replay": run_at_terminal(tmp_path, "replay", "--home", h, str(path)),
        "verify": run_at_terminal(tmp_path, "verify", "--home", h, str(path)),
        "import": run_at_terminal(tmp_path, "import", "--home", h, str(path)),
        "games": run_at_terminal(tmp_path, "games", "--home", h),
        "ranking": run_at_terminal(tmp_path, "ranking", "--home", h),
        "profile": run_at_terminal(tmp_path, "profile", "--home", h, "Ann"),
    }
    for command, (status, raw) in runs.items():
        assert status == 0, (command, raw)
        assert not [seq for seq in OBEYED if seq in raw], (command, raw)
    assert "says: \\x1b]0;owned\\x07hi \\x1b[5mthere\\u202e" in runs["replay"][1]
    assert "Eve\\x1b]52;c;b3duZWQ=\\x07\\x1b[5…" in runs["ranking"][1]  # cut at 32 cells
    assert "chat\\x1b]0;x\\x07.transcript" in runs["games"][1]


def test_the_widest_names_fit_the_terminal_table() -> None:
    widest = ["李" * 16, "W" * 32, "한" * 16, "Ａ" * 16]
    assert all(name_problem(n) is None for n in widest)
    assert name_problem("李" * 17) is not None  # 34 cells: refused where it is parsed
    definition = seats_named(["李" * 32, *widest[1:]])  # a record from before the rule
    view = TableView(0, list(seat_names(definition)), RULE_SETS["classic"], ["0000"] * 4)
    view.apply(TableReady())
    console = Console(record=True, width=80, color_system=None, file=io.StringIO())
    console.print(view.render(80, now=0.0))
    lines = console.export_text().rstrip("\n").split("\n")
    assert max(cells(line) for line in lines) <= 80

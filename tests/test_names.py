"""Names and text from peers: the name rule of PROTOCOL.md §6.1 where names are parsed (the
table definition, the lobby), and ``safe_text`` in front of every terminal."""

from __future__ import annotations

import unicodedata

import pytest
from helpers import identities
from hypothesis import given
from hypothesis import strategies as st

from belote_p2p.game.rules import RULE_SETS
from belote_p2p.net.lobby import JoinRefused, JoinRequest, check_name
from belote_p2p.protocol.names import (
    MAX_NAME,
    MAX_NAME_CELLS,
    REFUSED_CATEGORIES,
    cells,
    name_problem,
    safe_text,
)
from belote_p2p.protocol.table import Seat, TableDefinition

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

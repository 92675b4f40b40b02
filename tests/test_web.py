"""The browser table without a browser: the JSON view model of a seat, the decisions the
page answers, and the server's locks (token, cookie, Host and Origin), over real loopback
HTTP and WebSocket connections."""

from __future__ import annotations

import html
import io
import json
import random
import re
import webbrowser
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
import wsproto
import wsproto.events as ws
from helpers import cookie, dealt, http, make_table, random_deck

from belote_p2p import i18n
from belote_p2p.app.home import Home
from belote_p2p.app.rematch import asker
from belote_p2p.app.seat import SeatOptions, web_player
from belote_p2p.app.tui import TableView, display_hand
from belote_p2p.app.web.cardsvg import card_svg, image
from belote_p2p.app.web.lobby import WebLobby, date_text, number_text, target_text
from belote_p2p.app.web.options import WebOptions
from belote_p2p.app.web.page import extract as extract_page
from belote_p2p.app.web.page import render as render_page
from belote_p2p.app.web.seat import offer_rematch, page_opened
from belote_p2p.app.web.server import WebError, WebServer
from belote_p2p.app.web.table import WebPlayer, WebTable
from belote_p2p.app.web.viewmodel import action_code
from belote_p2p.app.wording import card_name, card_text
from belote_p2p.game.audit import audit_round
from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import TAKE, Phase, State, pile_positions
from belote_p2p.game.observation import observe
from belote_p2p.game.rules import rule_set
from belote_p2p.players.player import Resigned
from belote_p2p.protocol.events import (
    ActionTaken,
    ChatMessage,
    DecisionNeeded,
    GameOver,
    RoundAudited,
    RoundDealt,
)

PAGE_SOURCE = Path(__file__).resolve().parent.parent / "belote_p2p/app/web/static/index.html"

# -- the view model -----------------------------------------------------------------------------


def expected_piles(state: State, seat: int) -> list[tuple[Card | None, bool]]:
    """Two-handed, from the whole deck (which no peer knows): ``seat``'s piles as both
    players see them, each as (the card on top, a face-down card under it)."""
    done = {c for t in state.tricks for c in t.cards}
    out: list[tuple[Card | None, bool]] = []
    for down, up in pile_positions(state.dealer, seat):
        cover, under = state.deck[up], state.deck[down]
        assert cover is not None and under is not None
        if cover not in done:  # the card under it is still face down
            out.append((None if cover in state.trick else cover, True))
        else:
            out.append((None if under in done or under in state.trick else under, False))
    return out


def face_down(state: State) -> set[Card]:
    """Two-handed: the cards still face down (their cover's trick not over)."""
    done = {c for t in state.tricks for c in t.cards}
    hidden = set()
    for seat in (0, 1):
        for down, up in pile_positions(state.dealer, seat):
            cover, under = state.deck[up], state.deck[down]
            if cover not in done and under is not None:
                hidden.add(under)
    return hidden


@pytest.mark.parametrize(
    ("variant", "seat", "places"),
    [
        ("classic", 2, ["top", "left", "bottom", "right"]),
        ("coinche", 2, ["top", "left", "bottom", "right"]),
        ("three-handed", 2, ["right", "left", "bottom"]),
        ("three-handed", 0, ["bottom", "right", "left"]),
        ("two-handed", 1, ["top", "bottom"]),
        ("two-handed", 0, ["bottom", "top"]),
    ],
)
def test_the_model_follows_a_whole_round_as_json(
    variant: str, seat: int, places: list[str]
) -> None:
    definition, _ = make_table(variant)
    rules = definition.rules
    n = rules.seats
    table = WebTable(TableView.from_definition(definition, seat))
    state = dealt(rules, 5)
    while state.phase is Phase.DEAL:  # past any redeal
        state = state.apply(state.legal_actions()[0])
    # The events carry the whole deal, as no peer knows it: the view must keep to what
    # the seat may see.
    table.on_event(RoundDealt(state.number, state.dealer, state.hand(seat), state.turned, state))
    rng = random.Random(3)
    saw_master = saw_hidden = False
    while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
        if state.to_act == seat:
            table.on_event(DecisionNeeded(observe(state, seat)))
        text = json.dumps(table.model(), ensure_ascii=False)
        model = json.loads(text)  # plain JSON, nothing else
        playing = state.phase is Phase.PLAY
        assert [s["position"] for s in model["seats"]] == places
        assert model["seat_count"] == n and model["seats"][seat]["you"]
        assert [s["partner"] for s in model["seats"]] == [
            n == 4 and s == (seat + 2) % 4 for s in range(n)
        ]
        assert [s["ours"] for s in model["seats"]] == [
            s == seat or (n == 4 and s % 2 == seat % 2) for s in range(n)
        ]
        sides = model["scores"]["sides"]
        assert len(sides) == (2 if n == 4 else n) and sides[0]["ours"]
        assert "You" in sides[0]["name"] and not any(x["ours"] for x in sides[1:])
        if n == 2:
            piles = [expected_piles(state, s) for s in range(n)]
            for s in range(n):
                shown = [
                    (p["card"]["code"] if p["card"] else None, p["hidden"])
                    for p in model["seats"][s]["piles"]
                ]
                assert shown == [(str(c) if c is not None else None, h) for c, h in piles[s]]
            # Our hand: the cards on top of our piles, numbered by their pile.
            ours = [(str(c), i) for i, (c, _) in enumerate(piles[seat], 1) if c is not None]
            assert [(c["code"], c["number"]) for c in model["hand"]] == ours
            hidden = face_down(state)
            saw_hidden = saw_hidden or bool(hidden)
            for c in hidden:
                for said in (f'"{c}"', card_text(c), card_name(c)):
                    assert said not in text, (said, c)
        else:
            assert all(s["piles"] is None for s in model["seats"])
            hand = display_hand(state.hand(seat), state.trump if playing else -1)
            assert [c["code"] for c in model["hand"]] == [str(c) for c in hand]
        if playing:
            done = {c for t in state.tricks for c in t.cards}
            if n == 2:
                held = [
                    sum(state.deck[p] not in done and state.deck[p] not in state.trick
                        for pair in pile_positions(state.dealer, s) for p in pair)
                    for s in range(n)
                ]  # fmt: skip
            else:
                held = [len(state.hand(s)) for s in range(n)]
                assert n == 4 or held == [8 - len(state.tricks) - (s in table.view.trick_cards())
                                          for s in range(n)]  # fmt: skip
            assert [s["cards"] for s in model["seats"]] == held
            assert model["trick_number"] == len(state.tricks) + 1
            assert model["tricks_per_round"] == rules.tricks_per_round
        if state.to_act == seat and playing:
            legal = {str(c) for c in state.legal_actions()}
            assert {c["code"] for c in model["hand"] if c["legal"]} == legal
        if model["trick"] and model["trick"]["cards"]:
            trick = state.trick
            assert [c["code"] for c in model["trick"]["cards"]] == [str(c) for c in trick]
            master = observe(state, seat).trick_winner_so_far()
            assert model["trick"]["master"] == master
            saw_master = saw_master or model["trick"]["master"] is not None
        action = rng.choice(state.legal_actions())
        actor = state.to_act
        state = state.apply(action)
        table.on_event(ActionTaken(actor, action, state))
    model = table.model()
    assert saw_master and saw_hidden == (n == 2)
    assert model["hand"] == [] and model["last_trick"] is not None
    assert len(model["last_trick"]["cards"]) == n


@pytest.mark.parametrize(
    ("variant", "seat"), [("classic", 1), ("three-handed", 1), ("two-handed", 0)]
)
def test_the_page_takes_the_round_apart_as_the_terminal_does(variant: str, seat: int) -> None:
    definition, _ = make_table(variant)
    rules = definition.rules
    table = WebTable(TableView.from_definition(definition, seat))
    rng = random.Random(4)
    state = State.new_game(rules)
    while not state.history or state.history[-1].score is None:  # past any redeal
        state = state.deal(random_deck(rng, rules))
        table.on_event(
            RoundDealt(state.number, state.dealer, state.hand(seat), state.turned, state)
        )
        while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
            actor, action = state.to_act, rng.choice(state.legal_actions())
            state = state.apply(action)
            table.on_event(ActionTaken(actor, action, state))
        record = state.history[-1]
        table.on_event(RoundAudited(record, audit_round(record), state))
    model = table.model()
    rp = model["round_points"]
    b = table.view.breakdown
    assert b is not None and rp["verdict"] == b.verdict and rp["outcome"] == b.outcome
    # A column per side, ours first, then the others in playing order.
    order = (
        [(seat % 2 + i) % 2 for i in range(2)]
        if rules.has_teams
        else [(seat + i) % rules.seats for i in range(rules.seats)]
    )
    assert [x["name"] for x in rp["sides"]] == [b.sides[t].name for t in order]
    assert "You" in rp["sides"][0]["name"] and rp["sides"][0]["ours"]
    assert [x["card_points"] for x in rp["sides"]] == [b.sides[t].card_points for t in order]
    assert [x["game"] for x in rp["sides"]] == [b.sides[t].game for t in order]
    assert [x["score"] for x in model["scores"]["sides"]] == [state.scores[t] for t in order]
    assert sum(x["dix_de_der"] for x in rp["sides"]) == 10
    if variant == "two-handed":
        assert rp["outcome"] == "no-contract" and rp["taker"] is None
        assert rp["outcome_text"] == "each player scores its points"
        assert not any(x["takers"] for x in rp["sides"])
    else:
        assert sum(x["takers"] for x in rp["sides"]) == 1


async def test_the_lobby_hosts_tables_of_every_size(tmp_path: Path) -> None:
    """The lobby offers every variant with its number of seats, and a table's bots are 0
    to one fewer than its seats."""
    lobby = WebLobby(WebServer(), Home.at(tmp_path / "home"), beacon=[])
    seats = {v["name"]: v["seats"] for v in lobby.model()["variants"]}
    assert seats["classic"] == 4 and seats["three-handed"] == 3 and seats["two-handed"] == 2
    host = {"type": "host", "name": "Alice", "target": 501, "port": 0}
    said = await lobby.handle({**host, "variant": "two-handed", "bots": 2})
    assert said is not None and "0 to 1 at a two-handed table" in said
    said = await lobby.handle({**host, "variant": "three-handed", "bots": 3})
    assert said is not None and "0 to 2 at a three-handed table" in said
    assert not lobby.busy  # nothing started


async def test_the_lobby_s_join_field_and_stop_hosting_say_what_they_can_do(
    tmp_path: Path,
) -> None:
    """An entry that is neither a code nor an address starts nothing and is said under the
    field (in the reader's language when the page is drawn); Stop hosting closes only a
    table that waits for its players."""
    server = WebServer()
    lobby = WebLobby(server, Home.at(tmp_path / "home"), beacon=[])
    assert lobby.model()["join_error"] == "" and not lobby.model()["stoppable"]
    assert await lobby.handle({"type": "join", "name": "Bob", "address": "a b:c"}) is None
    assert not lobby.busy and lobby.model()["join_error"].startswith("This is neither")
    with i18n.using("fr"):
        assert lobby.model()["join_error"].startswith("Ce n'est ni un code")
    assert await lobby.handle({"type": "stop"}) == "No table of yours waits for players."
    lobby.closing = trio.Event()  # a table hosted from the page, waiting for players
    assert lobby.model()["stoppable"]
    assert await lobby.handle({"type": "stop"}) is None
    assert lobby.closing.is_set() and not lobby.model()["stoppable"]
    assert lobby.status == "Closing the table..."
    lobby.closing = trio.Event()
    definition, _ = make_table("classic")
    server.table = WebTable(TableView.from_definition(definition, 0), server.hub)
    assert not lobby.model()["stoppable"]  # its game began: leaving it is the table's
    assert await lobby.handle({"type": "stop"}) == "The game has begun: leave it from the table."
    assert not lobby.closing.is_set()


def test_every_card_has_an_svg_face_named_for_screen_readers() -> None:
    for c in CARDS:
        svg = image(str(c))
        assert svg is not None and svg.startswith("<svg") and "aria-label" in svg
    assert "jack of hearts" in card_svg(Card.parse("JH"))
    assert image("back") and image("suit-C")
    assert image("XX") is None and image("jh") is None and image("../x") is None


# -- decisions ------------------------------------------------------------------------------


async def test_the_page_answers_the_decision_it_was_shown() -> None:
    definition, _ = make_table("classic")
    state = dealt(definition.rules, 1)
    seat = state.to_act
    table = WebTable(TableView.from_definition(definition, seat))
    player = WebPlayer(table)
    got: list[Any] = []

    async def decide() -> None:
        got.append(await player.decide(observe(state, seat)))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(decide)
        await table.hub.wait_past(0)
        model = table.model()
        assert model["your_turn"] and model["decision"] == 1
        assert model["bidding"]["take"] and model["bidding"]["pass"]
        assert table.submit("take", 0) == "That choice was for an earlier turn."
        assert table.submit("JH", 1) == "'JH' is not legal now."
        assert table.submit("take", 1) is None
    assert got == [TAKE]
    assert table.model()["decision"] is None
    assert table.submit("pass", 1) == "It is not your turn."


async def test_resigning_from_the_page_resigns_the_seat() -> None:
    definition, _ = make_table("classic")
    state = dealt(definition.rules, 1)
    seat = state.to_act
    table = WebTable(TableView.from_definition(definition, seat))
    player = WebPlayer(table)
    async with trio.open_nursery() as nursery:

        async def decide() -> None:
            with pytest.raises(Resigned):
                await player.decide(observe(state, seat))

        nursery.start_soon(decide)
        await table.hub.wait_past(0)
        assert await table.handle({"type": "resign"}) is None
    # Leaving is for a finished game only.
    assert await table.handle({"type": "leave"}) is not None
    table.game_over("over")
    assert await table.handle({"type": "leave"}) is None and table.left.is_set()


async def test_the_terminal_stand_in_plays_a_late_turn_and_chat_reaches_the_page(
    autojump_clock: trio.testing.MockClock,
) -> None:
    definition, _ = make_table("classic")
    state = dealt(definition.rules, 1)
    seat = state.to_act
    table = WebTable(TableView.from_definition(definition, seat), clock=trio.current_time)
    options = SeatOptions("p", Home(Path("unused")), None, 5, "127.0.0.1", True, None, 10.0)
    player = web_player(table, replace(options, person_deadline=30.0, autoplay="rules"))
    player.new_game(definition.rules, seat)
    started = trio.current_time()
    action = await player.decide(observe(state, seat))
    assert trio.current_time() - started >= 30.0  # not before the person's time ran out
    assert action in state.legal_actions() and table.pending is None
    assert any(line.startswith("Time's up: your peer played ") for line in table.model()["log"])
    said: list[str] = []
    assert await table.handle({"type": "chat", "text": "hi"}) == (
        "Chat is not available at this table."
    )
    table.send_chat = said.append
    assert await table.handle({"type": "chat", "text": "  gg  "}) is None and said == ["gg"]
    table.on_event(ChatMessage(1, "bravo", 0))
    chat = table.model()["chat"]
    assert chat[-1] == {"seat": 1, "name": table.view.name(1), "text": "bravo"}


NO_REMATCH = "No rematch is offered: the game was not played to its end."


async def test_the_rematch_button_answers_the_question_of_another_game() -> None:
    definition, _ = make_table("classic")
    table = WebTable(TableView.from_definition(definition, 0))
    web = WebOptions(open_browser=False)
    offer_rematch(table, web.vote, definition)
    assert not table.model()["rematch_enabled"]  # not before the game is over
    assert table.model()["rematch_question"] == ""
    assert await table.handle({"type": "rematch"}) == NO_REMATCH
    table.game_over("over")
    assert not table.model()["rematch_enabled"]  # not after a resignation or abandonment
    assert await table.handle({"type": "rematch"}) == NO_REMATCH
    rules = rule_set("classic", target=1)
    state, rng = dealt(rules, 1), random.Random(1)
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_actions()))
    table.on_event(GameOver(state))
    assert table.model()["rematch_enabled"]
    assert await table.handle({"type": "rematch"}) is None and table.left.is_set()
    ask = asker(True, web)
    assert await ask() is True and await ask() is False  # read once, for one game
    assert await asker(False, None)() is True  # a bot says yes


async def test_the_page_asks_the_question_of_another_game_and_no_goes_at_once() -> None:
    """The question names who offers the game and its rules (the deal passed on); No is
    the terminal's no, given as the page is left; a malformed answer changes nothing."""
    definition, _ = make_table("classic")
    names = [s.name for s in definition.seats]
    web = WebOptions(open_browser=False)
    host = WebTable(TableView.from_definition(definition, 0))
    joiner = WebTable(TableView.from_definition(definition, 2))
    rules = rule_set("classic", target=1)
    state, rng = dealt(rules, 1), random.Random(1)
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_actions()))
    for table in (host, joiner):
        offer_rematch(table, web.vote, definition)
        table.game_over("over")
        table.on_event(GameOver(state))
    dealer = names[(definition.rules.first_dealer + 1) % 4]
    offered = host.model()["rematch_question"]
    assert offered.startswith(f"Offer another game to {names[1]}, {names[2]} and {names[3]}?")
    assert f"{dealer} deals first" in offered and "classic to" in offered
    asked = joiner.model()["rematch_question"]
    assert asked.startswith(f"{names[0]} (the host) offers another game: classic to")
    assert f"{dealer} deals first" in asked
    with i18n.using("fr"):
        assert "propose une autre partie" in joiner.model()["rematch_question"]
    assert await joiner.handle({"type": "rematch", "again": "yes"}) == "A malformed answer."
    assert not joiner.left.is_set()
    web.vote.wanted = True  # an answer of before is overwritten by this one
    assert await joiner.handle({"type": "rematch", "again": False}) is None
    assert joiner.left.is_set() and await asker(True, web)() is False


# -- the server's locks ---------------------------------------------------------------------


@pytest.fixture
async def server() -> AsyncIterator[WebServer]:
    definition, _ = make_table("classic")
    web = WebServer()
    web.table = WebTable(TableView.from_definition(definition, 0), web.hub)
    async with trio.open_nursery() as nursery:
        await nursery.start(web.run)
        yield web
        web.close()


async def test_without_the_token_every_request_is_refused(server: WebServer) -> None:
    for path in ("/", "/static/app.js", "/cards/en/JH.svg", "/api/state", "/nowhere", "/ws"):
        assert (await http(server, path))[0] == 403, path
        assert (await http(server, path + "?token=wrong"))[0] == 403, path
        assert (await http(server, path, {"Cookie": f"{server.cookie_name}=wrong"}))[0] == 403
        other = {"Cookie": f"belote-1={server.token}"}  # another port's cookie name
        assert (await http(server, path, other))[0] == 403, path


async def test_the_token_in_the_url_becomes_a_cookie(server: WebServer) -> None:
    status, headers, _ = await http(server, f"/?token={server.token}")
    assert status == 303 and headers["location"] == f"{server.base}/"
    set_cookie = headers["set-cookie"]
    assert set_cookie.startswith(f"{server.cookie_name}={server.token};")
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    # Cookies ignore ports: only a path of our own keeps it from every other service on
    # 127.0.0.1, and nothing is served outside that path.
    assert f"; Path={server.base}/;" in set_cookie and len(server.base) > 8
    assert server.url.startswith(f"{server.origin}{server.base}/?token=")
    for path in ("/", "/api/state", "/cards/en/JH.svg", f"/?token={server.token}"):
        assert (await http(server, path, cookie(server), base=False))[0] == 404, path
    status, headers, body = await http(server, "/api/state", cookie(server))
    assert status == 200 and "frame-ancestors 'none'" in headers["content-security-policy"]
    state = json.loads(body)
    assert state["table"]["seat"] == 0 and state["table"]["hand"] == []
    assert (await http(server, "/", cookie(server)))[0] == 200
    status, headers, body = await http(server, "/cards/en/JH.svg", cookie(server))
    assert status == 200 and headers["content-type"] == "image/svg+xml"


async def test_a_foreign_origin_or_host_is_refused(server: WebServer) -> None:
    evil = {**cookie(server), "Origin": "http://evil.example"}
    assert (await http(server, "/api/state", evil))[0] == 403
    also = {**cookie(server), "Origin": f"http://127.0.0.1:{server.port + 1}"}
    assert (await http(server, "/api/state", also))[0] == 403
    ours = {**cookie(server), "Origin": server.origin}
    assert (await http(server, "/api/state", ours))[0] == 200
    rebound = {**cookie(server), "Host": f"evil.example:{server.port}"}
    assert (await http(server, "/api/state", rebound))[0] == 403


async def websocket(
    web: WebServer, headers: dict[str, str], query: str = ""
) -> tuple[int, trio.SocketStream, wsproto.WSConnection]:
    """Open ``/ws`` (with ``query``) with ``headers``: the HTTP status of the answer (101 if
    accepted)."""
    conn = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
    extra = [(k.encode(), v.encode()) for k, v in headers.items()]
    stream = await trio.open_tcp_stream("127.0.0.1", web.port)
    host = f"127.0.0.1:{web.port}"
    request = ws.Request(host=host, target=f"{web.base}/ws{query}", extra_headers=extra)
    await stream.send_all(conn.send(request))
    while True:
        conn.receive_data(await stream.receive_some())
        for event in conn.events():
            if isinstance(event, ws.AcceptConnection):
                return 101, stream, conn
            if isinstance(event, ws.RejectConnection):
                await stream.aclose()
                return event.status_code, stream, conn


async def next_message(stream: trio.SocketStream, conn: wsproto.WSConnection) -> Any:
    text = ""
    while True:
        for event in conn.events():
            if isinstance(event, ws.TextMessage):
                text += event.data
                if event.message_finished:
                    return json.loads(text)
        conn.receive_data(await stream.receive_some())


async def test_the_websocket_needs_the_token_and_our_origin(server: WebServer) -> None:
    assert (await websocket(server, {"Origin": server.origin}))[0] == 403
    assert (await websocket(server, cookie(server)))[0] == 403  # no Origin
    evil = {**cookie(server), "Origin": "http://evil.example"}
    assert (await websocket(server, evil))[0] == 403
    status, stream, conn = await websocket(server, {**cookie(server), "Origin": server.origin})
    assert status == 101
    async with stream:
        first = await next_message(stream, conn)
        assert first["type"] == "state" and first["table"]["seat"] == 0


def seat_to_act(variant: str, seed: int) -> tuple[WebServer, WebPlayer, State]:
    """A server of the table of the seat to act first in a deal of ``variant``, its player
    and the deal."""
    definition, _ = make_table(variant)
    state = dealt(definition.rules, seed)
    web = WebServer()
    web.table = WebTable(TableView.from_definition(definition, state.to_act), web.hub)
    return web, WebPlayer(web.table), state


async def test_a_page_plays_the_seat_over_the_websocket() -> None:
    web, player, state = seat_to_act("coinche", 2)
    seat = state.to_act
    got: list[Any] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(web.run)

        async def decide() -> None:
            got.append(await player.decide(observe(state, seat)))

        nursery.start_soon(decide)
        headers = {"Cookie": f"{web.cookie_name}={web.token}", "Origin": web.origin}
        _, stream, conn = await websocket(web, headers)
        async with stream:
            message = await next_message(stream, conn)
            while message["table"]["decision"] is None:
                message = await next_message(stream, conn)
            bidding = message["table"]["bidding"]
            assert bidding["values"][0] == 80 and bidding["pass"] and not bidding["take"]

            async def say(payload: dict[str, Any]) -> None:
                await stream.send_all(conn.send(ws.TextMessage(json.dumps(payload))))

            await say({"type": "act", "code": "take", "decision": 1})
            while (message := await next_message(stream, conn))["type"] != "error":
                pass
            assert "not legal" in message["text"]
            await say({"type": "act", "code": "80 H", "decision": 1})
            while got == []:
                message = await next_message(stream, conn)
        web.close()
    assert [action_code(a) for a in got] == ["80 H"]


async def test_a_taken_port_is_a_plain_error(server: WebServer) -> None:
    with pytest.raises(WebError, match="cannot serve the page"):
        WebServer(port=server.port).check_port()


async def test_the_browser_is_given_a_private_file_not_the_token(
    server: WebServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another user can read a command line (the browser's): the token stays in a file
    only we can read, removed once the page is no longer served."""
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda uri: opened.append(uri) or True)
    async with page_opened(server, WebOptions()):
        (uri,) = opened
        assert server.token not in uri and uri.startswith("file://")
        link = Path(uri.removeprefix("file://"))
        assert server.url in link.read_text()
        assert link.stat().st_mode & 0o077 == 0 and link.parent.stat().st_mode & 0o077 == 0
    assert not link.exists()
    assert f"Table page: {server.url}" in capsys.readouterr().out


def test_the_page_token_is_the_homes_own_and_stays_across_starts(tmp_path: Path) -> None:
    """A tab left open reconnects after a resume: the token is kept in the home (0600)."""
    home = Home.at(tmp_path / "home")
    token = home.web_token()
    assert len(token) >= 32 and home.web_token() == token
    assert home.web_token_file.stat().st_mode & 0o777 == 0o600
    home.web_token_file.chmod(0o644)
    assert home.web_token() == token and home.web_token_file.stat().st_mode & 0o777 == 0o600
    assert WebServer(token=token).url.endswith(f"token={token}")
    assert Home.at(tmp_path / "other").web_token() != token


# -- the reader's language -------------------------------------------------------------------


@pytest.fixture(autouse=True)
def process_language() -> Iterator[None]:
    """A page's language becomes its process's (:meth:`WebServer.adopt`): each test leaves
    the process's as it found it."""
    with i18n.using(None) as before:
        pass
    yield
    i18n.set_language(before)


def catalog_of(page: bytes) -> dict[str, Any]:
    """The script's catalog the page carries (its data block)."""
    found = re.search(rb'<script id="catalog" type="application/json">(.*?)</script>', page)
    assert found is not None
    catalog: dict[str, Any] = json.loads(found[1])
    return catalog


async def test_the_page_and_its_script_s_catalog_come_in_the_reader_s_language(
    server: WebServer,
) -> None:
    """``Accept-Language`` chooses the page's language (else the process's); the page is
    made in it (``<html lang>``, its words), and carries the script's catalog in it, the
    script's messages only."""
    spanish = {**cookie(server), "Accept-Language": "es-AR,es;q=0.9,en;q=0.8"}
    status, headers, page = await http(server, "/", spanish)
    assert status == 200 and b'<html lang="es">' in page
    assert "Última baza".encode() in page and b"Last trick" not in page
    assert "script-src 'self';" in headers["content-security-policy"]  # no inline script
    catalog = catalog_of(page)
    assert catalog["lang"] == "es" and catalog["plural_forms"] == "nplurals=2; plural=(n != 1);"
    assert catalog["messages"]["Tricks"] == "Bazas"
    assert catalog["plurals"]["{n} card"] == ["{n} carta", "{n} cartas"]
    assert "Table page: {url}" not in catalog["messages"]  # the terminal's, not the script's
    french = catalog_of((await http(server, "/", {**cookie(server), "Accept-Language": "fr"}))[2])
    assert french["messages"]["Game over"] == "Partie terminée"
    assert french["plural_forms"] == "nplurals=2; plural=(n > 1);"
    for header in ({}, {"Accept-Language": "de-DE,de;q=0.9"}):  # no catalog's: the process's
        _, _, page = await http(server, "/", {**cookie(server), **header})
        assert b'<html lang="en">' in page and b"Last trick" in page


def test_every_word_of_the_page_is_in_the_catalogs_and_translated() -> None:
    """What the page's walk translates is what the catalogs' extraction finds, every text
    and spoken attribute but the game's name; the French and Spanish pages have no English
    left of them."""
    source = (PAGE_SOURCE).read_bytes()
    words = [m for _line, _f, m, _c in extract_page(io.BytesIO(source), [], [], {})]
    assert {"Last trick", "your hand", "Leave the table", "Language"} <= set(words)
    assert "Belote p2p" not in words and "belotew…" not in words  # translate="no"
    english = render_page("en").decode()
    for language in ("fr", "es"):
        page = render_page(language).decode()
        translated = i18n.browser_catalog(language)["messages"]
        assert isinstance(translated, dict)
        for word in words:
            said = translated[word]  # in the catalog, translated
            assert html.escape(said, quote=False) in page or html.escape(said) in page
        assert page.count("<") == english.count("<")  # the same elements, in the same order


async def test_the_state_and_the_errors_are_in_the_page_s_language() -> None:
    """The state of a WebSocket named ``?lang=fr`` is French (the bidding's words, the
    cards' names), its errors too; the same table's JSON asked in Spanish is Spanish."""
    web, player, state = seat_to_act("classic", 1)
    seat = state.to_act
    async with trio.open_nursery() as nursery:
        await nursery.start(web.run)
        nursery.start_soon(player.decide, observe(state, seat))
        await web.hub.wait_past(0)
        status, _, body = await http(web, "/api/state?lang=es", cookie(web))
        bidding = json.loads(body)["table"]["bidding"]
        assert status == 200 and bidding["texts"]["take"] == "tomar"
        assert bidding["texts"]["pass"] == "pasar"
        headers = {**cookie(web), "Origin": web.origin}
        _, stream, conn = await websocket(web, headers, query="?lang=fr")
        async with stream:
            message = await next_message(stream, conn)
            while message["table"]["decision"] is None:
                message = await next_message(stream, conn)
            assert message["lang"] == "fr" and message["chosen"] is None
            table = message["table"]
            assert table["bidding"]["texts"]["take"] == "prendre"
            assert table["bidding"]["texts"]["pass"] == "passer"
            assert table["bidding"]["trumps"] == {}  # no suit to name in the first round
            with i18n.using("fr"):
                names = [card_name(observe(state, seat).hand[0])]
            assert names[0] in [c["label"] for c in table["hand"]]
            assert any(" de " in c["label"] for c in table["hand"])
            await stream.send_all(conn.send(ws.TextMessage(json.dumps({"type": "act"}))))
            while (message := await next_message(stream, conn))["type"] != "error":
                pass
            assert message["text"] == "Une action mal formée."
        assert i18n.current() == "fr"  # the page's reader is the process's
        web.close()
        nursery.cancel_scope.cancel()


async def test_the_language_switch_is_remembered_in_the_home(
    tmp_path: Path,
) -> None:
    """The page's switch (``?lang=fr``) sends the page back to itself, keeps the choice in
    the home (``<home>/lang``, as ``--lang`` does), makes it the process's, and outranks
    the browser's ``Accept-Language`` from then on, at the next start too."""
    home = tmp_path / "home"
    definition, _ = make_table("classic")
    web = WebServer(home=home)
    web.table = WebTable(TableView.from_definition(definition, 0), web.hub)
    async with trio.open_nursery() as nursery:
        await nursery.start(web.run)
        seen = web.hub.version
        status, headers, _ = await http(web, "/?lang=fr", cookie(web))
        assert status == 303 and headers["location"] == f"{web.base}/"
        assert i18n.remembered(home) == "fr" and web.chosen == "fr"
        assert web.hub.version > seen  # every open page is told (and loads again in it)
        assert i18n.current() == "fr"
        spanish = {**cookie(web), "Accept-Language": "es"}
        assert b'<html lang="fr">' in (await http(web, "/", spanish))[2]
        state = json.loads((await http(web, "/api/state?lang=es", cookie(web)))[2])
        assert state["chosen"] == "fr"  # a Spanish page of before loads again in French
        status, _, _ = await http(web, "/?lang=xx", cookie(web))  # no such language: no change
        assert status == 200 and i18n.remembered(home) == "fr"
        web.close()
    again = WebServer(home=home)
    assert again.chosen == "fr"
    assert again.language_of({"type": "http", "headers": [(b"accept-language", b"es")]}) == "fr"


async def test_the_cards_are_drawn_in_the_reader_s_letters(server: WebServer) -> None:
    """A card's address names its language: the French and Spanish jack says V (valet) in
    its corners and ``valet de cœur`` or ``valet de corazones`` to a screen reader."""
    english = (await http(server, "/cards/en/JH.svg", cookie(server)))[2].decode()
    assert ">J</text>" in english and "jack of hearts" in english
    for language, name in (("fr", "valet de cœur"), ("es", "valet de corazones")):
        status, headers, body = await http(server, f"/cards/{language}/JH.svg", cookie(server))
        svg = body.decode()
        assert status == 200 and ">V</text>" in svg and name in svg and ">J</text>" not in svg
        assert headers["cache-control"].startswith("private, max-age=")
    assert ">R</text>" in card_svg(Card.parse("KS"), "fr")  # roi
    assert "face cachée" in (await http(server, "/cards/fr/back.svg", cookie(server)))[2].decode()
    assert (await http(server, "/cards/de/JH.svg", cookie(server)))[0] == 404
    assert (await http(server, "/cards/JH.svg", cookie(server)))[0] == 404


async def test_the_lobby_speaks_the_reader_s_language_with_its_dates_and_numbers(
    tmp_path: Path,
) -> None:
    """The lobby's model in French and Spanish: the variants' names, the profile, a past
    game's date and numbers as each language writes them, and its refusals."""
    lobby = WebLobby(WebServer(), Home.at(tmp_path / "home"), beacon=[])
    await trio.to_thread.run_sync(lobby._read_home)
    with i18n.using("fr"):
        model = lobby.model()
        names = {v["name"]: v["text"] for v in model["variants"]}
        assert names["classic"] == "classique" and names["two-handed"] == "à deux"
        assert "aucune partie enregistrée" in model["profile"]
        said = await lobby.handle(
            {"type": "host", "name": "Alice", "target": 501, "port": 0, "variant": "two-handed",
             "bots": 2}
        )  # fmt: skip
        assert said == "De 0 à 1 bots à une table à deux, un port de 0 à 65535."
        assert "juin 2024" in date_text("2024-06-01T12:00:00Z")
        assert number_text(12345) == "12\u202f345"
        assert target_text("classic", 1000) == "classique en 1\u202f000"
    with i18n.using("es"):
        assert "jun 2024" in date_text("2024-06-01T12:00:00Z")
        assert number_text(12345) == "12.345"
        said = await lobby.handle({"type": "quit"})
        assert said is None  # no game on: the lobby quits
        lobby.server.table = object()  # type: ignore[assignment]
        assert (
            await lobby.handle({"type": "quit"}) == "Hay una partida en curso: termínela primero."
        )
    assert date_text("not a date") == "not a date"

"""The browser table without a browser: the JSON view model of a seat, the decisions the
page answers, and the server's locks (token, cookie, Host and Origin), over real loopback
HTTP and WebSocket connections."""

from __future__ import annotations

import json
import random
import webbrowser
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
import wsproto
import wsproto.events as ws
from helpers import dealt, make_table, random_deck

from belote_p2p.app.home import Home
from belote_p2p.app.rematch import asker
from belote_p2p.app.seat import SeatOptions
from belote_p2p.app.tui import TableView, display_hand
from belote_p2p.app.web.cardsvg import card_svg, image
from belote_p2p.app.web.options import WebOptions
from belote_p2p.app.web.seat import offer_rematch, page_opened, web_player
from belote_p2p.app.web.server import WebError, WebServer
from belote_p2p.app.web.table import WebPlayer, WebTable
from belote_p2p.app.web.viewmodel import action_code
from belote_p2p.game.audit import audit_round
from belote_p2p.game.cards import CARDS, Card
from belote_p2p.game.engine import TAKE, Phase, State
from belote_p2p.game.observation import observe
from belote_p2p.players.player import Resigned
from belote_p2p.protocol.events import (
    ActionTaken,
    ChatMessage,
    DecisionNeeded,
    RoundAudited,
    RoundDealt,
)

# -- the view model -----------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["classic", "coinche"])
def test_the_model_follows_a_whole_round_as_json(variant: str) -> None:
    definition, _ = make_table(variant)
    seat = 2
    table = WebTable(TableView.from_definition(definition, seat))
    state = dealt(definition.rules, 5)
    table.on_event(RoundDealt(0, state.dealer, state.hand(seat), state.turned, state))
    rng = random.Random(3)
    saw_master = False
    while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
        if state.to_act == seat:
            table.on_event(DecisionNeeded(observe(state, seat)))
        model = json.loads(json.dumps(table.model()))  # plain JSON, nothing else
        hand = display_hand(state.hand(seat), state.trump if state.phase is Phase.PLAY else -1)
        assert [c["code"] for c in model["hand"]] == [str(c) for c in hand]
        assert [s["position"] for s in model["seats"]] == ["top", "left", "bottom", "right"]
        assert model["seats"][seat]["you"] and model["seats"][0]["partner"]
        if state.phase is Phase.PLAY:
            held = [len(state.hand(s)) for s in range(4)]
            assert [s["cards"] for s in model["seats"]] == held
        if state.to_act == seat and state.phase is Phase.PLAY:
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
    assert saw_master
    assert model["hand"] == [] and model["last_trick"] is not None
    assert len(model["last_trick"]["cards"]) == 4


def test_the_page_takes_the_round_apart_as_the_terminal_does() -> None:
    definition, _ = make_table("classic")
    seat = 1
    table = WebTable(TableView.from_definition(definition, seat))
    rng = random.Random(4)
    state = State.new_game(definition.rules)
    while not state.history or state.history[-1].score is None:  # past any redeal
        state = state.deal(random_deck(rng))
        table.on_event(
            RoundDealt(state.number, state.dealer, state.hand(seat), state.turned, state)
        )
        while state.phase not in (Phase.DEAL, Phase.GAME_OVER):
            actor, action = state.to_act, rng.choice(state.legal_actions())
            state = state.apply(action)
            table.on_event(ActionTaken(actor, action, state))
        record = state.history[-1]
        table.on_event(RoundAudited(record, audit_round(record), state))
    rp = table.model()["round_points"]
    b = table.view.breakdown
    assert b is not None and rp["verdict"] == b.verdict and rp["outcome"] == b.outcome
    us, them = b.sides[seat % 2], b.sides[1 - seat % 2]
    assert rp["names"] == {"us": us.name, "them": them.name} and "You" in us.name
    assert rp["card_points"] == {"us": us.card_points, "them": them.card_points}
    assert rp["dix_de_der"]["us"] + rp["dix_de_der"]["them"] == 10
    assert rp["game"] == {"us": us.game, "them": them.game}


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


async def test_the_rematch_button_answers_the_question_of_another_game() -> None:
    definition, _ = make_table("classic")
    table = WebTable(TableView.from_definition(definition, 0))
    web = WebOptions(open_browser=False)
    offer_rematch(table, web.vote)
    assert not table.model()["rematch_enabled"]  # not before the game is over
    assert await table.handle({"type": "rematch"}) == "No rematch is offered."
    table.game_over("over")
    assert table.model()["rematch_enabled"]
    assert await table.handle({"type": "rematch"}) is None and table.left.is_set()
    ask = asker(True, web)
    assert await ask() is True and await ask() is False  # read once, for one game
    assert await asker(False, None)() is True  # a bot says yes


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


async def http(
    web: WebServer, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One GET over a new connection: status, headers (lower-case), body."""
    head = {"Host": f"127.0.0.1:{web.port}", "Connection": "close", **(headers or {})}
    request = f"GET {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head.items())
    stream = await trio.open_tcp_stream("127.0.0.1", web.port)
    async with stream:
        await stream.send_all((request + "\r\n").encode())
        data = b""
        while chunk := await stream.receive_some():
            data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    fields = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in fields.items()}, body


def cookie(web: WebServer) -> dict[str, str]:
    return {"Cookie": f"{web.cookie_name}={web.token}"}


async def test_without_the_token_every_request_is_refused(server: WebServer) -> None:
    for path in ("/", "/static/app.js", "/cards/JH.svg", "/api/state", "/nowhere", "/ws"):
        assert (await http(server, path))[0] == 403, path
        assert (await http(server, path + "?token=wrong"))[0] == 403, path
        assert (await http(server, path, {"Cookie": f"{server.cookie_name}=wrong"}))[0] == 403
        other = {"Cookie": f"belote-1={server.token}"}  # another port's cookie name
        assert (await http(server, path, other))[0] == 403, path


async def test_the_token_in_the_url_becomes_a_cookie(server: WebServer) -> None:
    status, headers, _ = await http(server, f"/?token={server.token}")
    assert status == 303 and headers["location"] == "/"
    set_cookie = headers["set-cookie"]
    assert set_cookie.startswith(f"{server.cookie_name}={server.token};")
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie
    status, headers, body = await http(server, "/api/state", cookie(server))
    assert status == 200 and "frame-ancestors 'none'" in headers["content-security-policy"]
    state = json.loads(body)
    assert state["table"]["seat"] == 0 and state["table"]["hand"] == []
    assert (await http(server, "/", cookie(server)))[0] == 200
    status, headers, body = await http(server, "/cards/JH.svg", cookie(server))
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
    web: WebServer, headers: dict[str, str]
) -> tuple[int, trio.SocketStream, wsproto.WSConnection]:
    """Open ``/ws`` with ``headers``: the HTTP status of the answer (101 if accepted)."""
    conn = wsproto.WSConnection(wsproto.ConnectionType.CLIENT)
    extra = [(k.encode(), v.encode()) for k, v in headers.items()]
    stream = await trio.open_tcp_stream("127.0.0.1", web.port)
    host = f"127.0.0.1:{web.port}"
    await stream.send_all(conn.send(ws.Request(host=host, target="/ws", extra_headers=extra)))
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


async def test_a_page_plays_the_seat_over_the_websocket() -> None:
    definition, _ = make_table("coinche")
    state = dealt(definition.rules, 2)
    seat = state.to_act
    web = WebServer()
    web.table = WebTable(TableView.from_definition(definition, seat), web.hub)
    player = WebPlayer(web.table)
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

"""The web server of a browser table: a small ASGI app served by hypercorn's trio worker,
in the peer's own trio process.

Why hypercorn: it speaks HTTP/1.1 and WebSockets (wsproto) under trio in the same event
loop as the peer, so the page, its live updates and the game share one process and one
thread, with no framework and no build step; trio-websocket alone serves no plain HTTP,
and the page, its script and the card images need it.

Only the local person may use it:

* it listens on 127.0.0.1 (a port chosen by the system unless given);
* every request, the WebSocket included, must carry the secret token: in the URL the
  command opens (``/t<random>/?token=...``), after which a cookie holds it (``HttpOnly``,
  ``SameSite=Strict``, named after the port, so two tables on one machine keep theirs);
* the page lives under a secret path of its own (:attr:`WebServer.base`, made from the
  token: :func:`page_path`), the cookie's
  ``Path``: a browser sends cookies to every port of ``127.0.0.1`` (cookies ignore ports),
  so a cookie of ``Path=/`` would reach any other service on this machine, which could then
  replay it to us; with the base path no other service ever receives it;
* the ``Host`` header must name the loopback address and our port (a DNS rebinding page
  cannot reach us) and an ``Origin`` header, when present (always on a WebSocket), must be
  ours: another page in the same browser can neither read the hand nor play the seat;
* without them every request gets 403. The pages forbid framing and any other origin
  (Content-Security-Policy).

What the server shows: :attr:`WebServer.table` (a :class:`~.table.WebTable`) when a game
is on, else :attr:`WebServer.lobby` (the ``belote-p2p web`` lobby). Every open page gets the
whole state again after each change (:class:`~.table.Hub`), so a reload or a second tab
shows the table as it stands.

In the reader's language (:meth:`WebServer.language_of`): the one chosen on a page (its
switch, ``?lang=fr``, remembered in the home as ``--lang`` is), else the one the home
remembers, else the browser's ``Accept-Language``, else the command's. The page, its
script's catalog, its card images (``cards/fr/JH.svg``: French corners say ``V``) and every
state and error it is sent are made in it (:func:`belote_p2p.i18n.using`). The person at the
page is the reader of everything this process says, so its language becomes the process's
too (:meth:`WebServer.adopt`): the lines made as the game goes (the news, the log, the
lobby's status, the result) are then in it as well.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import secrets
import socket
from collections.abc import Awaitable, Callable
from functools import partial
from http import HTTPStatus
from importlib import resources
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from belote_p2p import i18n
from belote_p2p.errors import BeloteError
from belote_p2p.i18n import _

from .cardsvg import image
from .page import render
from .replay import content_security_policy
from .table import Hub, WebTable
from .viewmodel import JSON

logger = logging.getLogger(__name__)

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

LOOPBACK = "127.0.0.1"
MAX_MESSAGE = 16 * 1024
"""Bytes of one WebSocket message from the page (an action, a chat line)."""
STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "app.css": "text/css; charset=utf-8",
}
TABLE_MESSAGES = frozenset({"act", "resign", "leave", "chat", "rematch", "hint"})
REPLAY_NAME = re.compile(r"[0-9a-f]{32}")
"""A replay's address: a table id in hex."""
CARD_CACHE = b"private, max-age=3600"
"""A card's image is the same at its address (which names its language): the browser keeps
it an hour (a new version's drawing shows within that)."""


class WebError(BeloteError, OSError):
    """The table page could not be served (its port is taken...)."""


class LobbyPage(Protocol):
    """What the server asks of the ``belote-p2p web`` lobby."""

    def model(self) -> JSON: ...

    async def handle(self, message: dict[str, Any]) -> str | None: ...


def page_path(token: str) -> str:
    """The page's path, derived from its token: as secret as the token, and the same at
    every start with the home's token, so that a tab left open reconnects to the game
    resumed on the same port (``resume --web --web-port PORT``)."""
    digest = hashlib.sha256(b"belote-p2p/page-path\x00" + token.encode()).hexdigest()
    return f"/t{digest[:16]}"


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _query(scope: Scope) -> dict[str, list[str]]:
    return parse_qs(scope.get("query_string", b"").decode("latin-1"))


def _named_language(scope: Scope) -> str | None:
    """The language the query names (``?lang=fr``), if it names one."""
    return next(filter(None, map(i18n.normalize, _query(scope).get("lang", []))), None)


def _cookies(header: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in header.split(";"):
        name, _, value = part.strip().partition("=")
        if name:
            out[name] = value
    return out


class WebServer:
    """The table page of one person, on ``127.0.0.1:port`` (see the module docstring)."""

    def __init__(
        self, *, port: int = 0, token: str | None = None, home: Path | None = None
    ) -> None:
        self.port = port
        self.token = token or secrets.token_urlsafe(32)
        self.base = page_path(self.token)
        """The page's path (the cookie's ``Path``, see the module docstring)."""
        self.hub = Hub()
        self.table: WebTable | None = None
        self.lobby: LobbyPage | None = None
        self.replays: Callable[[str, str], Awaitable[bytes | None]] | None = None
        """A past game's replay page, by its table id (hex) and a language: the lobby's
        (None where there is none)."""
        self.pages = 0
        """WebSocket connections open now."""
        self.closing = False
        self.home = home
        """Where the page's choice of language is remembered (None: for this server only)."""
        self._chosen: str | None = None
        self._shutdown = trio.Event()

    # -- addresses --------------------------------------------------------------------

    @property
    def origin(self) -> str:
        return f"http://{LOOPBACK}:{self.port}"

    @property
    def url(self) -> str:
        """The URL to open: it carries the token."""
        return f"{self.origin}{self.base}/?token={self.token}"

    @property
    def cookie_name(self) -> str:
        return f"belote-{self.port}"

    def inner_path(self, path: str) -> str | None:
        """``path`` below :attr:`base` (``/api/state`` of ``/t.../api/state``), or None."""
        if path == self.base or not path.startswith(self.base + "/"):
            return None
        return path[len(self.base) :]

    def _hosts(self) -> set[str]:
        return {f"{LOOPBACK}:{self.port}", f"localhost:{self.port}"}

    # -- the reader's language --------------------------------------------------------------

    @property
    def chosen(self) -> str | None:
        """The language chosen on a page, or remembered in the home (``--lang``, a page's
        switch of before), if any."""
        return self._chosen or i18n.remembered(self.home)

    def choose(self, language: str) -> None:
        """A page's switch chose ``language``: kept in the home for the next commands, the
        process's from now on, and every open page is told (it loads again in it)."""
        self._chosen = i18n.checked(language)
        if self.home is not None:
            i18n.remember(self.home, self._chosen)
        self.adopt(self._chosen)
        self.hub.bump()

    def language_of(self, scope: Scope) -> str:
        """The language of a page asked for (see the module docstring)."""
        header = _headers(scope).get("accept-language")
        return self.chosen or i18n.from_accept_language(header) or i18n.current()

    def page_language(self, scope: Scope) -> str:
        """The language of the page a WebSocket or a state's JSON is for: the one it names
        (``?lang=fr``, the language its page was made in), else :meth:`language_of`."""
        return _named_language(scope) or self.language_of(scope)

    @staticmethod
    def adopt(language: str) -> None:
        """``language`` becomes the process's (see the module docstring)."""
        with i18n.using(None) as process:
            if process != language:
                i18n.set_language(language)

    # -- running --------------------------------------------------------------------------

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve until :meth:`close`; ``task_status`` gets the URL once listening."""
        config = Config()
        config.bind = [f"{LOOPBACK}:{self.port}"]
        config.accesslog = None
        config.errorlog = logger
        config.loglevel = "WARNING"
        config.graceful_timeout = 2.0
        config.websocket_max_message_size = MAX_MESSAGE
        config.include_server_header = False
        self.check_port()
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                partial(serve, self.app, config, shutdown_trigger=self._shutdown.wait)  # type: ignore[arg-type]
            )
            self.port = int(str(binds[0]).rsplit(":", 1)[1])
            task_status.started(self.url)

    def check_port(self) -> None:
        """Raise :class:`WebError` now, not from inside the server's tasks, if our port
        cannot be had."""
        if not self.port:
            return
        with socket.socket() as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((LOOPBACK, self.port))
            except OSError as exc:
                raise WebError(f"cannot serve the page on {LOOPBACK}:{self.port}: {exc}") from exc

    def close(self) -> None:
        """Stop serving: open pages are told, then closed."""
        self.closing = True
        self.hub.bump()
        self._shutdown.set()

    # -- checks ---------------------------------------------------------------------------

    def refusal(self, scope: Scope) -> str | None:
        """Why this request (or WebSocket) is refused, or None (see the module docstring)."""
        headers = _headers(scope)
        if headers.get("host") not in self._hosts():
            return "wrong host"
        origin = headers.get("origin")
        if scope["type"] == "websocket" and origin is None:
            return "no origin"
        if origin is not None and origin not in {f"http://{h}" for h in self._hosts()}:
            return "foreign origin"
        if not self._token_of(scope, headers):
            return "no token"
        return None

    def _token_of(self, scope: Scope, headers: dict[str, str]) -> bool:
        cookie = _cookies(headers.get("cookie", "")).get(self.cookie_name, "")
        return self._query_token(scope) or self._matches(cookie)

    def _query_token(self, scope: Scope) -> bool:
        return any(self._matches(t) for t in _query(scope).get("token", []))

    def _matches(self, given: str) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self.token.encode())

    # -- the state --------------------------------------------------------------------------

    def state(self, language: str | None = None) -> JSON:
        """What a page draws, in ``language`` (None: the one in use); ``chosen``: the
        language chosen on some page, which a page made in another one loads again in."""
        with i18n.using(language) as lang:
            return {
                "type": "state",
                "version": self.hub.version,
                "lang": lang,
                "chosen": self.chosen,
                "table": self.table.model() if self.table is not None else None,
                "lobby": self.lobby.model() if self.lobby is not None else None,
                "closing": self.closing,
            }

    async def dispatch(self, message: object, language: str | None = None) -> str | None:
        """One message from a page; an error to show (in ``language``), or None."""
        with i18n.using(language):
            if not isinstance(message, dict) or not isinstance(message.get("type"), str):
                return _("A malformed message.")
            if self.table is not None and message["type"] in TABLE_MESSAGES:
                return await self.table.handle(message)
            if self.lobby is not None:
                return await self.lobby.handle(message)
            return _("Nothing to do that here.")

    # -- ASGI -----------------------------------------------------------------------------

    async def app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] == "websocket":
            await self._websocket(scope, receive, send)
            return
        if scope["type"] == "http":
            await self._http(scope, send)

    async def _respond(
        self,
        send: Send,
        status: int,
        body: bytes,
        content_type: str = "text/plain; charset=utf-8",
        extra: list[tuple[bytes, bytes]] | None = None,
        cache: bytes = b"no-store",
        csp: str = (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        ),
    ) -> None:
        headers = [
            (b"content-type", content_type.encode()),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", cache),
            (b"x-content-type-options", b"nosniff"),
            (b"x-frame-options", b"DENY"),
            (b"referrer-policy", b"no-referrer"),
            (b"content-security-policy", csp.encode()),
            *(extra or []),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _http(self, scope: Scope, send: Send) -> None:
        refused = self.refusal(scope)
        if refused is not None:
            logger.info("refused %s %s: %s", scope.get("method"), scope.get("path"), refused)
            await self._respond(send, HTTPStatus.FORBIDDEN, b"Forbidden\n")
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await self._respond(send, HTTPStatus.METHOD_NOT_ALLOWED, b"Method not allowed\n")
            return
        path = self.inner_path(scope.get("path", "/"))
        cookie = (
            f"{self.cookie_name}={self.token}; Path={self.base}/; HttpOnly; SameSite=Strict"
        ).encode()
        switched = _named_language(scope)
        if path == "/" and switched:
            self.choose(switched)  # the page's switch: the page loads again in it
        if path == "/" and (self._query_token(scope) or switched):
            # The token leaves the address bar: the cookie carries it from here on.
            await self._respond(
                send,
                HTTPStatus.SEE_OTHER,
                b"",
                extra=[(b"location", f"{self.base}/".encode()), (b"set-cookie", cookie)],
            )
            return
        extra = [(b"set-cookie", cookie)]
        if path == "/":
            body = render(self.language_of(scope))
            await self._respond(send, HTTPStatus.OK, body, "text/html; charset=utf-8", extra)
        elif path is None:
            await self._respond(send, HTTPStatus.NOT_FOUND, b"Not found\n")
        elif path.startswith("/static/") and path[8:] in STATIC:
            name = path[8:]
            body = resources.files(__package__).joinpath("static", name).read_bytes()
            await self._respond(send, HTTPStatus.OK, body, STATIC[name], extra)
        elif path.startswith("/cards/") and path.endswith(".svg"):
            lang, _sep, name = path[7:-4].partition("/")
            svg = image(name, lang) if lang in i18n.LANGUAGES else None
            if svg is None:
                await self._respond(send, HTTPStatus.NOT_FOUND, b"Not found\n")
            else:
                body = svg.encode()
                await self._respond(send, HTTPStatus.OK, body, "image/svg+xml", extra, CARD_CACHE)
        elif path.startswith("/replay/"):
            await self._replay(send, path[len("/replay/") :], self.language_of(scope), extra)
        elif path == "/api/state":
            body = json.dumps(self.state(self.page_language(scope))).encode()
            await self._respond(send, HTTPStatus.OK, body, "application/json", extra)
        else:
            await self._respond(send, HTTPStatus.NOT_FOUND, b"Not found\n")

    async def _replay(
        self, send: Send, table: str, language: str, extra: list[tuple[bytes, bytes]]
    ) -> None:
        """A past game's replay page (the lobby's list links to it), with the policy that
        allows its own inline script and style only."""
        page = None
        if self.replays is not None and REPLAY_NAME.fullmatch(table):
            page = await self.replays(table, language)
        if page is None:
            await self._respond(send, HTTPStatus.NOT_FOUND, _("No such game.").encode() + b"\n")
            return
        csp = content_security_policy()
        await self._respond(send, HTTPStatus.OK, page, "text/html; charset=utf-8", extra, csp=csp)

    async def _websocket(self, scope: Scope, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "websocket.connect":
            return
        at = self.inner_path(scope.get("path", ""))
        refused = self.refusal(scope) or (None if at == "/ws" else "no such path")
        if refused is not None:
            logger.info("refused a WebSocket: %s", refused)
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return
        await send({"type": "websocket.accept"})
        language = self.page_language(scope)
        self.adopt(language)
        lock = trio.Lock()

        async def say(payload: JSON) -> None:
            async with lock:
                await send({"type": "websocket.send", "text": json.dumps(payload)})

        async def updates() -> None:
            while True:
                seen = self.hub.version
                await say(self.state(language))
                if self.closing:
                    async with lock:
                        await send({"type": "websocket.close", "code": 1001})
                    return
                await self.hub.wait_past(seen)

        self.pages += 1
        self.hub.bump()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(updates)
                while True:
                    message = await receive()
                    if message["type"] == "websocket.disconnect":
                        break
                    if message["type"] != "websocket.receive":
                        continue
                    try:
                        data = json.loads(message.get("text") or message.get("bytes") or b"")
                    except ValueError:
                        data = None
                    error = await self.dispatch(data, language)
                    if error is not None:
                        await say({"type": "error", "text": error})
                nursery.cancel_scope.cancel()
        finally:
            self.pages -= 1
            self.hub.bump()

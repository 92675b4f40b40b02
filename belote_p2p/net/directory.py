"""The public directory over trio: a host's table kept listed at a relay
(:class:`Advertiser`), and a stranger's query (:func:`query_directory`).

The messages, their checks and the relay's store are sans-io
(:mod:`belote_p2p.protocol.directory`); the relay itself carries them
(:class:`~belote_p2p.net.relay.RelayService` with a
:class:`~belote_p2p.protocol.directory.Directory`). Nothing a directory answers is trusted
here beyond what :func:`~belote_p2p.protocol.directory.parse_tables` checked: every ad is
signed by the key it names, and the lister still checks at the lobby that the table it is
given is that key's (as for an invitation).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass

import trio

from belote_p2p.errors import RemoteProtocolError
from belote_p2p.protocol.directory import (
    MAX_RESULTS,
    MAX_SIGNED_AD_SIZE,
    Advertisement,
    DirectoryError,
    Listing,
    Query,
    advertise_message,
    parse_listed,
    parse_tables,
    withdraw_message,
)
from belote_p2p.protocol.identity import Identity
from belote_p2p.protocol.relay import MAX_CONTROL_FRAME, challenge_nonce, hello_message
from belote_p2p.protocol.wire import FrameTooLarge, encode

from .address import format_address
from .relay import RELAY_CONNECT_TIMEOUT, connect
from .transport import ConnectionClosed, FramedStream

logger = logging.getLogger(__name__)

MAX_LISTING_FRAME = MAX_RESULTS * MAX_SIGNED_AD_SIZE + 1024
"""The largest answer to a query a lister reads (a full one is far below)."""
ANSWER_TIMEOUT = 10.0
"""Seconds the directory has to answer one message."""
RETRY_FIRST = 1.0
RETRY_MOST = 60.0
"""Seconds an advertiser waits before it tries the directory again: doubling from the first
to the most while the directory cannot be reached or refuses the table."""
DEFAULT_TTL = 60
"""Seconds a host asks its ad to be listed without a newer version; it sends one every third
of what the directory grants (or at once when its seats change)."""


class DirectoryUnreachable(DirectoryError):
    """No connection to the directory, or it did not answer in time."""


async def query_directory(
    address: tuple[str, int], query: Query, *, timeout: float = RELAY_CONNECT_TIMEOUT
) -> Listing:
    """The tables the directory at ``address`` lists for ``query``, each ad's signature
    checked (:func:`~belote_p2p.protocol.directory.parse_tables`). Raises
    :class:`DirectoryUnreachable` when it cannot be reached or does not answer, and
    :class:`~belote_p2p.protocol.directory.DirectoryError` when it answers something else
    (its refusal says why)."""
    shown = format_address(*address)
    try:
        stream = await connect(address, "the directory", timeout)
    except ConnectionClosed as exc:
        raise DirectoryUnreachable(str(exc)) from None
    async with FramedStream(stream, max_frame=MAX_LISTING_FRAME) as link:
        try:
            with trio.fail_after(timeout):
                await link.send(encode(query.to_wire()))
                answer = await link.receive()
        except trio.TooSlowError:
            raise DirectoryUnreachable(f"the directory at {shown} did not answer") from None
        except (ConnectionClosed, FrameTooLarge) as exc:
            raise DirectoryUnreachable(f"the directory at {shown}: {exc}") from None
    return parse_tables(answer)


@dataclass
class AdvertiserState:
    """What an :class:`Advertiser` last managed (for the host to show)."""

    listed: bool = False
    """The table is listed now."""
    problem: str | None = None
    """Why it is not (the last failure), if it tried and failed."""
    versions: int = 0
    """Versions of the ad the directory listed."""


MakeAd = Callable[[bytes, int], Advertisement | None]
"""Builds the table's ad over a relay nonce, with a seq; None while nothing is to be listed
(no seat free for strangers)."""


class Advertiser:
    """Keeps one table listed at one directory while it has seats for strangers.

    :meth:`run` connects, proves the key over the relay's nonce with each version of the ad
    (``make_ad(nonce, seq)``), refreshes it within what the directory grants, sends a new
    version at once when :meth:`changed` is called, withdraws it (``dir-withdraw``) when
    ``make_ad`` answers None, and connects again with backoff when the directory is gone or
    refuses. Cancelling it withdraws the table (its connection ends). It never raises for
    what the directory does: a table that cannot be listed is still a table."""

    def __init__(
        self,
        address: tuple[str, int],
        identity: Identity,
        make_ad: MakeAd,
        *,
        on_state: Callable[[AdvertiserState], None] | None = None,
        retry_first: float = RETRY_FIRST,
        retry_most: float = RETRY_MOST,
    ) -> None:
        self.address = address
        self.identity = identity
        self.make_ad = make_ad
        self.state = AdvertiserState()
        self._on_state = on_state
        self._retry = (retry_first, retry_most)
        self._seq = 0
        self._change = trio.Event()

    def changed(self) -> None:
        """The table changed (a seat taken or freed): send a new version now."""
        self._change.set()

    async def _wait_change(self, seconds: float) -> None:
        with trio.move_on_after(seconds):
            await self._change.wait()
        self._change = trio.Event()

    def _set(self, listed: bool, problem: str | None) -> None:
        if (listed, problem) != (self.state.listed, self.state.problem):
            self.state.listed, self.state.problem = listed, problem
            if self._on_state is not None:
                self._on_state(self.state)

    async def run(self) -> None:
        delay = self._retry[0]
        while True:
            if self.make_ad(bytes(32), self._seq) is None:
                self._set(False, None)
                await self._wait_change(math.inf)
                continue
            try:
                await self._listed()
                delay = self._retry[0]  # withdrawn on purpose: list again at once later
                continue
            except (DirectoryError, RemoteProtocolError, ConnectionClosed, FrameTooLarge) as exc:
                problem = str(exc)
            except trio.TooSlowError:
                problem = f"the directory at {format_address(*self.address)} did not answer"
            logger.info("directory: the table is not listed: %s", problem)
            self._set(False, problem)
            await self._wait_change(delay)
            delay = min(delay * 2, self._retry[1])

    async def _listed(self) -> None:
        """One connection: list the table and keep it listed until ``make_ad`` says None
        (then withdraw it and return) or the connection fails (raise)."""
        stream = await connect(self.address, "the directory", RELAY_CONNECT_TIMEOUT)
        async with FramedStream(stream, max_frame=MAX_CONTROL_FRAME) as link:
            with trio.fail_after(ANSWER_TIMEOUT):
                await link.send(hello_message())
                nonce = challenge_nonce(await link.receive())
            while True:
                ad = self.make_ad(nonce, self._seq)
                if ad is None:
                    await link.send(withdraw_message())
                    self._set(False, None)
                    return
                self._seq += 1
                with trio.fail_after(ANSWER_TIMEOUT):
                    await link.send(advertise_message(ad.sign(self.identity)))
                    _, expires = parse_listed(await link.receive())
                self.state.versions += 1
                self._set(True, None)
                await self._until_due(link, expires / 3)

    async def _until_due(self, link: FramedStream, seconds: float) -> None:
        """Wait ``seconds`` or for a change; meanwhile a frame from the directory (its
        error: the ad expired, or was replaced) or its hanging up ends the connection."""
        failed: list[Exception] = []
        async with trio.open_nursery() as nursery:

            async def listen() -> None:
                try:
                    parse_listed(await link.receive())  # a relay-error raises, saying why
                    failed.append(DirectoryError("the directory sent what nobody asked for"))
                except (DirectoryError, ConnectionClosed, FrameTooLarge) as exc:
                    failed.append(exc)
                nursery.cancel_scope.cancel()

            nursery.start_soon(listen)
            await self._wait_change(seconds)
            nursery.cancel_scope.cancel()
        if failed:
            raise failed[0]

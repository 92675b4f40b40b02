"""One error hierarchy for the whole package, in the manner of h11.

Every error this package raises on purpose is a :class:`BeloteError`, and most are one of
two kinds, which tell a caller what to do:

* :class:`LocalProtocolError`: this program misused an API (acting out of turn, a card it
  does not hold, a call in the wrong order, a value that cannot be encoded). It is a bug or a
  bad input of the caller's, never a peer's doing.
* :class:`RemoteProtocolError`: a peer, a file or a network sent something that breaks the
  protocol. It names the sender where it is known (its key, its seat) and carries the
  offending bytes as evidence, which may prove the fault to a third party when they are
  signed.

Errors of the environment (a port in use, a missing file, a profile database of another
version) are plain :class:`BeloteError` subclasses. Each module defines the subclasses it
raises next to the code that raises them.
"""

from __future__ import annotations


class BeloteError(Exception):
    """Base of every error this package raises on purpose."""


class LocalProtocolError(BeloteError):
    """This program misused an API; the message says how."""


class RemoteProtocolError(BeloteError):
    """Another party sent something that breaks the protocol.

    ``sender`` is the public key the offending message claims (None when it could not be
    read), ``seat`` its seat when known, ``evidence`` the offending encoded bytes (a signed
    envelope proves itself; unsigned bytes prove only what the delivering peer sent).
    """

    def __init__(
        self,
        message: str,
        *,
        sender: bytes | None = None,
        seat: int | None = None,
        evidence: tuple[bytes, ...] = (),
    ) -> None:
        super().__init__(message)
        self.sender = sender
        self.seat = seat
        self.evidence = evidence

"""The deck's proof checks run once per exact input in a process, for the tests that are not
about those checks.

The conformance vectors' tampered copies of one game, verified one after the other, hold the
same proofs of shuffle and of decryption shares, byte for byte: each copy checked them again
(a shuffle proof is more than half of a verification). Both checks are pure functions of
their inputs, so the answer on inputs already checked in this process is the answer the check
gave them then; inputs seen for the first time (a tampered proof among them) are checked for
real. Never for the tests of the checks themselves (``test_shuffle*``, ``test_deck*``, the
attacks on a deal), which call them on purpose.

``python tests/once.py ARGS`` runs ``belote-p2p ARGS`` with the checks remembered (the
conformance tests' verifier of a batch of cases).
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from belote_p2p.protocol import deck, group
from belote_p2p.protocol.shuffle import CiphertextLike, verify_shuffle

Answers = dict[bytes, bool]
"""A check's answers by the digest of its exact inputs (not those it raised on): a worker
meets thousands of proofs, which it need not keep."""


def remembered(
    check: Callable[..., bool], key: Callable[..., tuple[object, ...]]
) -> tuple[Callable[..., bool], Answers]:
    """``check``, answering inputs whose ``key`` (bytes, ints and tuples of them, whose
    ``repr`` tells them apart) it met before without checking them again; its answers."""
    answers: Answers = {}

    def once(*args: Any) -> bool:
        digest = hashlib.sha256(repr(key(*args)).encode()).digest()
        if digest not in answers:
            answers[digest] = check(*args)
        return answers[digest]

    return once, answers


def _deck(ciphertexts: Sequence[CiphertextLike]) -> tuple[tuple[bytes, bytes], ...]:
    return tuple((c.c1, c.c2) for c in ciphertexts)


verify_shuffle_once, SHUFFLES = remembered(
    verify_shuffle,
    lambda pk, inputs, outputs, proof, context: (
        pk, _deck(inputs), _deck(outputs), dataclasses.astuple(proof), tuple(context)
    ),
)  # fmt: skip
verify_share_once, SHARES = remembered(
    group.verify_share,
    lambda public, base, share, proof, context: (
        public, base, share, proof.challenge, proof.response, tuple(context)
    ),
)  # fmt: skip


def install(set_attribute: Callable[[object, str, object], None] = setattr) -> None:
    """Put the remembered checks where the deck protocol calls them (with pytest's
    ``monkeypatch.setattr``, for one test only)."""
    set_attribute(deck, "verify_shuffle", verify_shuffle_once)
    set_attribute(group, "verify_share", verify_share_once)


if __name__ == "__main__":
    from belote_p2p.app import cli

    install()
    sys.exit(cli.main(sys.argv[1:]))

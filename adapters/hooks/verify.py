"""The signatures a trigger's sender puts on a request: `sha256=<hex HMAC-SHA256 of the raw body,
keyed with the trigger's secret>`, in `X-Hub-Signature-256` for GitHub (its documented scheme),
in `X-Signature` for any other sender (`kind = "hmac"`). Only `sha256=` is taken: GitHub's older
`X-Hub-Signature: sha1=...` is refused, as a weaker hash an attacker could choose."""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any

PREFIX = "sha256="


@dataclass(frozen=True, slots=True)
class Scheme:
    """What a trigger's kind reads from a request."""

    signature_header: str
    delivery_header: str  # the sender's id of a delivery: a retry carries the same one
    event_header: str | None  # the event's name, shown to the agent
    verified: str  # what `Arrival.verified` says was checked


SCHEMES = {
    "github": Scheme(
        "X-Hub-Signature-256", "X-GitHub-Delivery", "X-GitHub-Event", "github signature"
    ),
    "hmac": Scheme("X-Signature", "X-Delivery-Id", None, "hmac signature"),
}


@dataclass(frozen=True, slots=True)
class TriggerKey:
    """One enabled trigger, as the door checks it (from the JSON the config's keys give)."""

    scheme: Scheme
    secret: str
    max_body_bytes: int

    @classmethod
    def from_keys(cls, keys: dict[str, Any]) -> TriggerKey:
        return cls(SCHEMES[keys["kind"]], keys["secret"], int(keys["max_body_bytes"]))


def signature(secret: str, body: bytes) -> str:
    """The header value a sender holding `secret` puts on `body`."""
    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def signed(secret: str, body: bytes, given: str) -> bool:
    """`given` (a signature header's value) is `secret`'s signature of `body`, compared in
    constant time. An empty secret signs nothing (it would match anyone who knows it is
    empty); hex in upper case is taken, as the same digest."""
    if not secret or not given.startswith(PREFIX):
        return False
    # As bytes: a header may hold any character, and compare_digest takes only ASCII text.
    digest = given[len(PREFIX) :].lower().encode("utf-8", "surrogateescape")
    return hmac.compare_digest(digest, signature(secret, body)[len(PREFIX) :].encode())

"""The signatures a trigger's sender puts on a request: `sha256=<hex HMAC-SHA256 of the signed
content, keyed with the trigger's secret>`, in `X-Hub-Signature-256` for GitHub (its documented
scheme), in `X-Signature` for any other sender (`kind = "hmac"`). The signed content is the
raw body; for an `hmac` trigger with `require_timestamp = true` it is
`<X-Signature-Timestamp> + "." + <raw body>` (Slack's v0 scheme, without its prefix), the
timestamp in Unix seconds, taken within 5 minutes of now. Only `sha256=` is taken: GitHub's
older `X-Hub-Signature: sha1=...` is refused, as a weaker hash an attacker could choose."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import Any

from adapters.hooks.schemes import SCHEMES, Scheme

PREFIX = "sha256="
TIMESTAMP_HEADER = "X-Signature-Timestamp"
TIMESTAMP_TOLERANCE_S = 300.0
_UNIX_SECONDS = re.compile(r"[0-9]{1,12}", re.ASCII)


@dataclass(frozen=True, slots=True)
class TriggerKey:
    """One enabled trigger, as the door checks it (from the JSON the config's keys give)."""

    scheme: Scheme
    secret: str
    max_body_bytes: int
    require_timestamp: bool = False

    @classmethod
    def from_keys(cls, keys: dict[str, Any]) -> TriggerKey:
        return cls(
            SCHEMES[keys["kind"]],
            keys["secret"],
            int(keys["max_body_bytes"]),
            bool(keys.get("require_timestamp", False)),
        )


UNKNOWN = TriggerKey(SCHEMES["hmac"], secrets.token_hex(32), 0)
"""What a request for no trigger is checked against: the same work as a wrong signature, so
its answer comes as late."""


def signed_content(body: bytes, timestamp: str | None) -> bytes:
    """What a signature covers: the body, or `timestamp.body` when a timestamp is signed."""
    return body if timestamp is None else timestamp.encode() + b"." + body


def digest(body: bytes, timestamp: str | None) -> str:
    """The signed content's SHA-256, in hex: what names an event once (a replay is the same)."""
    return hashlib.sha256(signed_content(body, timestamp)).hexdigest()


def timestamp_of(headers: Any) -> str | None:
    """`X-Signature-Timestamp`, if it is Unix seconds; None when absent or of another shape."""
    given = headers.get(TIMESTAMP_HEADER)
    return given if given is not None and _UNIX_SECONDS.fullmatch(given) else None


def fresh(timestamp: str, now: float) -> bool:
    return abs(int(timestamp) - now) <= TIMESTAMP_TOLERANCE_S


def signature(secret: str, body: bytes) -> str:
    """The header value a sender holding `secret` puts on `body` (the signed content)."""
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

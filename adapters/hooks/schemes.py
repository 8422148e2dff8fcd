"""What a trigger's kind reads from a request: where its signature is, and the two headers
whose values the agent may see, each only in the shape its sender gives it (GitHub's event
name is lower-case words, its delivery id a GUID). A header of any other shape is refused at
the door (`door.py`, 400, once the signature holds) and never used: the headers are not
signed, so whoever holds one signed body chooses them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

GUID = re.compile(r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}", re.ASCII)
EVENT_NAME = re.compile(r"[a-z_]{1,64}", re.ASCII)
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}", re.ASCII)


@dataclass(frozen=True, slots=True)
class Header:
    """A header the agent may see, and the shape its value must have."""

    name: str
    shape: re.Pattern[str]
    described: str  # the shape in words, for the sender who gets it wrong

    def value(self, headers: Any) -> str | None:
        """Its value, if the request has it in its shape; None when it is absent."""
        given = headers.get(self.name)
        return given if given is not None and self.shape.fullmatch(given) else None

    def wrong(self, headers: Any) -> bool:
        return headers.get(self.name) is not None and self.value(headers) is None


@dataclass(frozen=True, slots=True)
class Scheme:
    signature_header: str
    delivery: Header  # the sender's id of a delivery: shown to the agent, never a key
    event: Header | None  # the event's name, shown to the agent
    verified: str  # what `Arrival.verified` says was checked

    @property
    def shown(self) -> tuple[Header, ...]:
        return (self.event, self.delivery) if self.event else (self.delivery,)


SCHEMES = {
    "github": Scheme(
        "X-Hub-Signature-256",
        Header("X-GitHub-Delivery", GUID, "a GUID"),
        Header("X-GitHub-Event", EVENT_NAME, "lower-case letters and _, at most 64"),
        "github signature",
    ),
    "hmac": Scheme(
        "X-Signature",
        Header("X-Delivery-Id", TOKEN, "at most 64 letters, digits and _.:-"),
        None,
        "hmac signature",
    ),
}


def wrong_header(scheme: Scheme, headers: Any) -> str | None:
    """What is wrong with the request's shown headers, if anything: for the 400."""
    for header in scheme.shown:
        if header.wrong(headers):
            return f"{header.name} must be {header.described}"
    return None


def shown_values(headers: Any) -> tuple[str | None, str | None]:
    """The event's name and the delivery id in a stored request's headers, each only in its
    shape (what was stored before the door checked shapes is read the same way)."""
    event = delivery = None
    for scheme in SCHEMES.values():
        event = event or (scheme.event.value(headers) if scheme.event else None)
        delivery = delivery or scheme.delivery.value(headers)
    return event, delivery

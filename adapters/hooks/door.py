"""The door of signed event triggers, `POST /hooks/{workspace_id}/{trigger_id}`: a request for an
enabled trigger, signed with its secret (`verify.py`), within its size, is stored through the
one intake and only then answered, 202; the same signed content while it is still stored is
answered 200 and not stored twice (a replay stored again later is acknowledged too, and never
run: `bridge/automation/triggers.py`).

A prober learns nothing of which triggers exist: a workspace or trigger that does not exist or
is disabled, and a missing or wrong signature (or a missing signed timestamp), get one answer,
401 with the same body, after the same work (the body read, an HMAC computed against a secret
made up at start). Only a request the trigger's secret signs is told more: 401 for a signed
timestamp more than 5 minutes from now, 413 for a body over the trigger's `max_body_bytes`,
400 for a body that is not UTF-8 or a shown header of the wrong shape (`schemes.py`). A body
over the door's own limit (4 MB, the same for every path) is refused before it is read. Every
refusal is counted and logged with a rate limit (`refusals.py`); neither the secret nor a
signature is ever logged.

What is stored for the decoder: the body as text, `place` `hook:<trigger>` (a trigger's events
in the order they came), under the key `<trigger>:<SHA-256 of the signed content>`, and only
the headers the agent may see, in their shapes (the event's name, the delivery id), the
signed timestamp if the trigger requires one, and `X-Switchboard-Trigger` (the trigger's id,
set here; a client's header of that name is never taken)."""

from __future__ import annotations

import logging
import time
from collections.abc import Hashable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from aiohttp import web

from adapters.hooks import refusals as why
from adapters.hooks.refusals import Refusals
from adapters.hooks.schemes import SCHEMES, wrong_header
from adapters.hooks.verify import (
    TIMESTAMP_HEADER,
    UNKNOWN,
    TriggerKey,
    digest,
    fresh,
    signed,
    signed_content,
    timestamp_of,
)
from adapters.intake.door import (
    MAX_REQUEST_BYTES,
    DoorKind,
    Failed,
    Poll,
    Store,
    door_metrics,
)
from adapters.intake.record import Arrival, Put

if TYPE_CHECKING:
    from config.schema import SwitchboardConfig

PLATFORM = "hooks"
TRIGGER_HEADER = "X-Switchboard-Trigger"
NOT_TAKEN = (
    "no trigger here takes this request: none by this name is enabled, or the request is not "
    "signed with its secret (X-Hub-Signature-256 for GitHub, X-Signature otherwise: "
    "sha256=<hex HMAC-SHA256>)"
)
TOO_LARGE = "the body is over the {limit}-byte limit"
OVER_TRIGGERS = "the body is over this trigger's max_body_bytes ({limit})"
STALE = f"{TIMESTAMP_HEADER} is more than 5 minutes from now; sign each request as it is sent"
_SIGNATURE_HEADERS = tuple(s.signature_header for s in SCHEMES.values())


def keys(config: SwitchboardConfig) -> Any:
    """Each workspace's enabled triggers, by id: their kind, secret and largest body."""
    found = {
        w.id: {
            t.id: {
                "kind": t.kind,
                "secret": t.secret.get_secret_value(),
                "max_body_bytes": t.max_body_bytes,
                "require_timestamp": t.require_timestamp,
            }
            for t in w.triggers
            if t.enabled
        }
        for w in config.workspaces
    }
    return {w: triggers for w, triggers in found.items() if triggers} or None


class HooksDoor:
    def __init__(self, put: Put, failed: Failed) -> None:
        self._triggers: dict[tuple[str, str], TriggerKey] = {}
        self.refusals = Refusals()

    def update(self, keys: Any) -> None:
        self._triggers = {
            (workspace, trigger): TriggerKey.from_keys(key)
            for workspace, triggers in (keys or {}).items()
            for trigger, key in triggers.items()
        }

    def route(self, app: web.Application, store: Store) -> None:
        app.router.add_post("/hooks/{workspace_id}/{trigger_id}", partial(self._hook, store))
        door_metrics(app).register(self.refusals)

    def pollers(self) -> Mapping[tuple[str, Hashable], Poll]:
        return {}

    async def _hook(self, store: Store, request: web.Request) -> web.Response:
        workspace = request.match_info["workspace_id"]
        trigger = request.match_info["trigger_id"]
        found = self._triggers.get((workspace, trigger))
        key = found or UNKNOWN  # checked all the same: the same work, the same answer
        refuse = partial(self._refused, request)
        if (request.content_length or 0) > MAX_REQUEST_BYTES:
            return refuse(413, why.TOO_LARGE, TOO_LARGE.format(limit=MAX_REQUEST_BYTES))
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return refuse(413, why.TOO_LARGE, TOO_LARGE.format(limit=MAX_REQUEST_BYTES))
        if found is None:
            given = next((v for h in _SIGNATURE_HEADERS if (v := request.headers.get(h))), "")
            signed(key.secret, raw, given)
            return refuse(401, why.UNKNOWN_TRIGGER, NOT_TAKEN, level=logging.INFO)
        timestamp = timestamp_of(request.headers) if key.require_timestamp else None
        refusal = _refusal(key, request.headers, raw, timestamp)
        if refusal is not None:
            return refuse(*refusal)
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            return refuse(400, why.NOT_UTF8, "the body is not UTF-8 text")
        arrival = Arrival(
            platform=PLATFORM,
            workspace_id=workspace,
            place=f"hook:{trigger}",
            dedupe_key=f"{trigger}:{digest(raw, timestamp)}",  # the trigger's: two may see one
            body=body,
            verified=key.scheme.verified,
            headers=_shown_headers(key, request.headers, trigger, timestamp),
        )
        if await store(arrival):
            return web.json_response({"ok": True}, status=202)
        return web.json_response({"ok": True, "duplicate": True})

    def _refused(
        self,
        request: web.Request,
        status: int,
        reason: str,
        error: str,
        *,
        level: int = logging.WARNING,
    ) -> web.Response:
        """A request refused before anything is stored: counted, logged with a rate limit
        (its path's names cut short: a prober chooses them)."""
        fields = {
            "workspace": request.match_info["workspace_id"][:64],
            "trigger": request.match_info["trigger_id"][:64],
            "status": status,
        }
        self.refusals.refused(request.remote or "", reason, fields, level)
        return web.json_response({"ok": False, "error": error}, status=status)


def _refusal(
    key: TriggerKey, headers: Any, raw: bytes, timestamp: str | None
) -> tuple[int, str, str] | None:
    """Why a request for a trigger that exists is refused (status, reason, error), or None:
    a signature that does not hold first, then a stale timestamp, a body over the trigger's
    size, a shown header of the wrong shape."""
    given = headers.get(key.scheme.signature_header, "")
    ok = signed(key.secret, signed_content(raw, timestamp), given)
    if not ok or (key.require_timestamp and timestamp is None):
        return 401, why.BAD_SIGNATURE, NOT_TAKEN
    if timestamp is not None and not fresh(timestamp, time.time()):
        return 401, why.STALE_TIMESTAMP, STALE
    if len(raw) > key.max_body_bytes:
        return 413, why.TOO_LARGE, OVER_TRIGGERS.format(limit=key.max_body_bytes)
    if (wrong := wrong_header(key.scheme, headers)) is not None:
        return 400, why.BAD_HEADER, wrong
    return None


def _shown_headers(
    key: TriggerKey, headers: Any, trigger: str, timestamp: str | None
) -> dict[str, str]:
    """The headers the agent may see: the scheme's shown ones, the signed timestamp, and the
    trigger's id (set here, never a client's)."""
    shown = (h.name for h in key.scheme.shown)
    kept = {h: v for h in shown if (v := headers.get(h)) is not None}
    if timestamp is not None:
        kept[TIMESTAMP_HEADER] = timestamp
    kept[TRIGGER_HEADER] = trigger
    return kept


HOOKS_DOOR = DoorKind(PLATFORM, keys, HooksDoor)

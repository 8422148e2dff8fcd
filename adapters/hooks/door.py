"""The door of signed event triggers, `POST /hooks/{workspace_id}/{trigger_id}`: a request for an
enabled trigger, within its size, signed with its secret (`verify.py`), is stored through the one
intake and only then answered, 202; a retry of a delivery still stored is answered 200 and not
stored twice. Anything else is refused before anything is stored: 404 for a workspace or trigger
that does not exist or is disabled (one answer for all, so a prober learns nothing), 413 for a
body over `max_body_bytes`, 401 for a missing or wrong signature, 400 for a body that is not
UTF-8. Neither the secret nor a signature is ever logged.

What is stored for the decoder: the body as text, `place` `hook:<trigger>` (a trigger's events
in the order they came), and only the headers the agent may see: the event's name, the delivery
id, `Content-Type`, and `X-Switchboard-Trigger` (the trigger's id, set here; a client's header
of that name is never taken)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Hashable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from aiohttp import web

from adapters.hooks.verify import TriggerKey, signed
from adapters.intake.door import DoorKind, Failed, Poll, Store
from adapters.intake.record import Arrival, Put

if TYPE_CHECKING:
    from config.schema import SwitchboardConfig

log = logging.getLogger(__name__)

PLATFORM = "hooks"
TRIGGER_HEADER = "X-Switchboard-Trigger"
NOT_FOUND = "no such trigger"


def keys(config: SwitchboardConfig) -> Any:
    """Each workspace's enabled triggers, by id: their kind, secret and largest body."""
    found = {
        w.id: {
            t.id: {
                "kind": t.kind,
                "secret": t.secret.get_secret_value(),
                "max_body_bytes": t.max_body_bytes,
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

    def update(self, keys: Any) -> None:
        self._triggers = {
            (workspace, trigger): TriggerKey.from_keys(key)
            for workspace, triggers in (keys or {}).items()
            for trigger, key in triggers.items()
        }

    def route(self, app: web.Application, store: Store) -> None:
        app.router.add_post("/hooks/{workspace_id}/{trigger_id}", partial(self._hook, store))

    def pollers(self) -> Mapping[Hashable, Poll]:
        return {}

    async def _hook(self, store: Store, request: web.Request) -> web.Response:
        workspace = request.match_info["workspace_id"]
        trigger = request.match_info["trigger_id"]
        key = self._triggers.get((workspace, trigger))
        if key is None:
            return refused(request, 404, NOT_FOUND, level=logging.INFO)
        body = await checked_body(request, key)
        if isinstance(body, web.Response):
            return body
        scheme = key.scheme
        delivery = request.headers.get(scheme.delivery_header, "").strip()
        dedupe = delivery or hashlib.sha256(body.encode()).hexdigest()  # the same body: once
        kept = (scheme.event_header, scheme.delivery_header, "Content-Type")
        headers = {h: v for h in kept if h and (v := request.headers.get(h)) is not None}
        headers[TRIGGER_HEADER] = trigger
        arrival = Arrival(
            platform=PLATFORM,
            workspace_id=workspace,
            place=f"hook:{trigger}",
            dedupe_key=f"{trigger}:{dedupe}",  # the trigger's: two may see one body
            body=body,
            verified=scheme.verified,
            headers=headers,
        )
        if await store(arrival):
            return web.json_response({"ok": True}, status=202)
        return web.json_response({"ok": True, "duplicate": True})


async def checked_body(request: web.Request, key: TriggerKey) -> str | web.Response:
    """The body as text, if it is within the trigger's size and signed with its secret; else
    the refusal. The declared length is checked before the body is read."""
    limit = key.max_body_bytes
    too_large = f"the body is over this trigger's max_body_bytes ({limit})"
    header = key.scheme.signature_header
    if (request.content_length or 0) > limit:
        return refused(request, 413, too_large)
    given = request.headers.get(header)
    if given is None:
        return refused(request, 401, f"{header} is missing; expected {header}: sha256=<hex>")
    raw = await request.read()
    if len(raw) > limit:
        return refused(request, 413, too_large)
    if not signed(key.secret, raw, given):
        expected = f"{header}: sha256=<hex HMAC-SHA256 of the body, keyed with the secret>"
        return refused(request, 401, f"{header} does not sign this body; expected {expected}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return refused(request, 400, "the body is not UTF-8 text")


def refused(
    request: web.Request, status: int, reason: str, *, level: int = logging.WARNING
) -> web.Response:
    """A request refused before anything is stored, and a log line saying why (its path's
    names cut short: a prober chooses them)."""
    fields = {
        "workspace": request.match_info["workspace_id"][:64],
        "trigger": request.match_info["trigger_id"][:64],
        "status": status,
        "reason": reason,
    }
    log.log(level, "hook refused", extra=fields)
    return web.json_response({"ok": False, "error": reason}, status=status)


HOOKS_DOOR = DoorKind(PLATFORM, keys, HooksDoor)

"""What the workspace pages share: the bridge's reads and actions for this request (against
the config running now), the time format, which action a form posted, and an action's
answer: a 303 back to its page with a one-line flash of what happened."""

from __future__ import annotations

import datetime
from collections.abc import Awaitable

from aiohttp import web
from multidict import MultiDictProxy

from adapters.admin.access import admin_of, checked_form, flash
from adapters.admin.deps import DEPS
from bridge.admin.errors import NotInWorkspace, NotPossible
from bridge.admin.steer import Steering
from bridge.admin.view import AdminView


def view_of(request: web.Request) -> AdminView:
    deps = request.app[DEPS]
    return AdminView(deps.bridge, deps.config())


def steering_of(request: web.Request) -> Steering:
    deps = request.app[DEPS]
    return Steering(deps.bridge, deps.config())


def label_of(request: web.Request) -> str:
    """Who does it, as the audit events name them."""
    return admin_of(request).label


def when(wall: float | None) -> str:
    """A wall time as the pages show it (UTC), or a dash."""
    if wall is None:
        return "\u2014"
    moment = datetime.datetime.fromtimestamp(wall, datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def one_of(form: MultiDictProxy[str | bytes | bytearray | web.FileField], *actions: str) -> str:
    """The action the form posted, if it is one of `actions` (its buttons' values); else 400."""
    action = form.get("action")
    if not isinstance(action, str) or action not in actions:
        named = f"{', '.join(actions[:-1])} or {actions[-1]}" if len(actions) > 1 else actions[0]
        raise web.HTTPBadRequest(text=f"action must be {named}")
    return action


async def action_of(request: web.Request, *actions: str) -> str:
    """The action a page's form posted (its CSRF token checked first), one of `actions`."""
    return one_of(await checked_form(request), *actions)


async def act(request: web.Request, action: Awaitable[str], back: str) -> web.Response:
    """Run an action; 303 to `back` with what it did (or why it could not) flashed. An
    object of another workspace, or none, is a 404."""
    try:
        flash(request, await action)
    except NotInWorkspace as exc:
        raise web.HTTPNotFound(text=str(exc)) from None
    except NotPossible as exc:
        flash(request, f"Not done: {exc}.")
    raise web.HTTPSeeOther(back)

"""Pages from Jinja2 templates (autoescaped), each with the context every page needs and a
Content-Security-Policy that lets only our own inline scripts (by nonce) run. Every value a
page shows passes one mask: the process's secrets never reach a page, whatever a transcript,
an error or a tool's input quotes."""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web
from markupsafe import Markup, escape

from adapters.admin.access import current_login, visible_workspaces, workspace_of
from adapters.admin.deps import DEPS
from bridge.admin.audit import admin_action_line

HERE = Path(__file__).parent
SECRETS = "_secrets"  # the context's key for the process's secrets
_CODE = re.compile(r"`([^`]+)`")


@jinja2.pass_context
def _masked(context: jinja2.runtime.Context, value: Any) -> Any:
    """Each `{{ value }}` a template prints, before it is escaped: secrets masked."""
    if not isinstance(value, str):
        return value
    text = context[SECRETS].mask(value)
    return value if text == value else (Markup(text) if isinstance(value, Markup) else text)


@jinja2.pass_context
def _code(context: jinja2.runtime.Context, words: str) -> Markup:
    """`{{ words | code }}`: our words with `a tool's name` shown as code, as a chat shows
    them; secrets masked and everything escaped first."""
    return code(context[SECRETS].mask(words))


def code(words: str) -> Markup:
    """Words (secrets already masked) as HTML: escaped, each `name` in <code>."""
    return Markup(_CODE.sub(r"<code>\1</code>", str(escape(words))))


TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(HERE / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    finalize=_masked,
)
TEMPLATES.filters["code"] = _code
# who did what to what, in words: "acme/lead ran a schedule now: pulse", not run_schedule
TEMPLATES.filters["action_line"] = admin_action_line


def render(
    request: web.Request, template: str, *, status: int = 200, **context: Any
) -> web.Response:
    """Every page gets admin, csrf, workspaces (those this admin may see), workspace, flashes
    (what the last actions did), here (the page's path) and nonce (for an inline
    `<script nonce=...>`)."""
    nonce = secrets.token_urlsafe(16)
    login = current_login(request)
    flashes = list(login.flashes) if login else []
    if login:
        login.flashes.clear()
    base: dict[str, Any] = {
        "admin": login.admin if login else None,
        "csrf": login.csrf if login else "",
        "workspaces": visible_workspaces(request) if login else [],
        "workspace": workspace_of(request) if "workspace" in request.match_info else None,
        "flashes": flashes,
        "here": request.path,  # which of the workspace's tabs is shown
        "nonce": nonce,
        SECRETS: request.app[DEPS].bridge.secrets,
    }
    body = TEMPLATES.get_template(template).render({**base, **context})
    response = web.Response(text=body, content_type="text/html", status=status)
    response.headers["Content-Security-Policy"] = (
        f"default-src 'self'; script-src 'nonce-{nonce}'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
    return response

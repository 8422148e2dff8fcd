"""A workspace's settings, edited live: operators, allowed chats and channels, queue mode,
agents' prompts and tools. Applied through the running App (written to the config file, then
its adapters restarted); a refused edit shows why, and the running config stays. The global
admin can also reload the whole file."""

from __future__ import annotations

import logging

from aiohttp import web

from adapters.admin.access import admin_of, checked_form, flash, workspace_of
from adapters.admin.config_form import (
    QUEUE_MODES,
    FormErrors,
    first_of,
    read_edit,
    refusal,
    version,
)
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import steering_of
from adapters.admin.platform_fields import platform_fields
from adapters.admin.render import render
from bridge.events import AdminActionKind
from config.diff import ReloadReport

log = logging.getLogger(__name__)

routes = web.RouteTableDef()


def _page(
    request: web.Request,
    *,
    errors: list[str] | None = None,
    status: int = 200,
    refused: FormErrors | None = None,
    order: list[str] | None = None,
) -> web.Response:
    """`refused`: what is wrong with the form the admin sent, each field's own problem marked
    on it, the first in the form's `order` (its fields as sent) focused."""
    workspace = workspace_of(request)
    invalid = refused.fields if refused else {}
    errors = refused.problems if refused else errors
    return render(
        request,
        "settings.html",
        status=status,
        version=version(workspace),
        platforms=platform_fields(workspace),
        queue_modes=QUEUE_MODES,
        errors=errors or [],
        invalid=invalid,
        first=first_of(order or [], invalid),
        can_edit=request.app[DEPS].edit is not None,
    )


async def _audit(
    request: web.Request, kind: AdminActionKind, workspace: str | None, report: ReloadReport
) -> None:
    """The admin's change in the log, with what it did (never a value from the file), and,
    once applied, an audit event in each workspace it touched."""
    admin = admin_of(request).label
    log.info(
        "admin changed the config",
        extra={
            "admin": admin,
            "workspace": workspace,
            "action": kind.value,
            "ok": report.ok,
            "applied": list(report.applied),
            "restart_needed": list(report.restart_needed),
        },
    )
    if report.ok:
        touched = report.applied or ((workspace,) if workspace else ())
        await steering_of(request).config_changed(touched, admin, kind, "; ".join(report.lines()))


@routes.get("/w/{workspace}/config")
async def settings(request: web.Request) -> web.Response:
    return _page(request)


@routes.post("/w/{workspace}/config")
async def apply_settings(request: web.Request) -> web.Response:
    form = await checked_form(request)
    workspace = workspace_of(request)
    edit = request.app[DEPS].edit
    if edit is None:
        return _page(
            request, errors=["this process was not started from a config file"], status=409
        )
    try:
        change = read_edit(form, workspace)
    except FormErrors as exc:
        return _page(request, refused=exc, order=list(form), status=400)
    report = await edit(workspace.id, change)
    await _audit(request, AdminActionKind.EDIT_CONFIG, workspace.id, report)
    if not report.ok:
        refused = refusal(report.errors, form, workspace)
        return _page(request, refused=refused, order=list(form), status=400)
    # one notice: each workspace's changed keys under the line that names it (as on Reload)
    flash(request, "\n".join(report.lines()))
    raise web.HTTPSeeOther(f"/admin/w/{workspace.id}/config")


@routes.post("/reload")
async def reload(request: web.Request) -> web.Response:
    await checked_form(request)
    if admin_of(request).workspace_id is not None:
        raise web.HTTPForbidden(text="only the global admin reloads the whole config file")
    run = request.app[DEPS].reload
    if run is None:
        report = ReloadReport(ok=False, errors="this process was not started from a config file")
    else:
        report = await run()
    await _audit(request, AdminActionKind.RELOAD_CONFIG, None, report)
    return render(request, "reload.html", report=report, status=200 if report.ok else 400)

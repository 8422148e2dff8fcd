"""A schedule's page on the Schedules tab: its form to change it (timing, prompt, agent, where
its answer goes, ...) and Remove, and the form to add one. Each is a config edit: written into
the file (only the keys changed), applied as every console edit is, so the clock runs by it at
once; a refused one shows the config's own words (not its key paths), each tied to its field,
the first field focused, and the file and the running config stay."""

from __future__ import annotations

import logging
import zoneinfo
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from adapters.admin.access import checked_form, flash, workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import label_of
from adapters.admin.render import render
from adapters.admin.schedule_form import (
    LABELS,
    FormErrors,
    first_of,
    form_values,
    read_schedule,
    refusal,
    typed_back,
)
from bridge.admin.schedules import ScheduleSteering, change_words
from config.automation import ScheduleConfig
from config.edit import STALE, ScheduleEdit, WorkspaceEdit, version
from config.schema import WorkspaceConfig

log = logging.getLogger(__name__)

routes = web.RouteTableDef()

ZONES = sorted(zoneinfo.available_timezones())  # offered as the admin types a timezone
NOT_FROM_A_FILE = "this process was not started from a config file, so there is none to edit"


def _page(
    request: web.Request,
    schedule_id: str | None,
    values: Mapping[str, str],
    errors: list[str] | None = None,
    status: int = 200,
    invalid: Mapping[str, str] | None = None,
) -> web.Response:
    """`invalid`: a refused field's name -> what is wrong with it, in the admin's words; the
    page marks each and the first takes the focus."""
    workspace = workspace_of(request)
    invalid = invalid or {}
    return render(
        request,
        "schedule_edit.html",
        status=status,
        schedule_id=schedule_id,
        values=values,
        errors=errors or [],
        invalid=invalid,
        first=first_of(list(LABELS), invalid),
        version=version(workspace),
        zones=ZONES,
        recipients=["primary", "silent", *(o.id for o in workspace.operators)],
        can_edit=request.app[DEPS].edit is not None,
    )


def _running(workspace: WorkspaceConfig, schedule_id: str) -> ScheduleConfig:
    found = next((s for s in workspace.schedules if s.id == schedule_id), None)
    if found is None:
        known = ", ".join(s.id for s in workspace.schedules) or "none"
        raise web.HTTPNotFound(text=f"no schedule {schedule_id!r} here (schedules: {known})")
    return found


@routes.get("/w/{workspace}/schedules/add")
async def new_schedule(request: web.Request) -> web.Response:
    blank = ScheduleEdit(id="", agent=workspace_of(request).default_agent)
    return _page(request, None, form_values(blank))


@routes.get("/w/{workspace}/schedules/{schedule}/edit")
async def schedule(request: web.Request) -> web.Response:
    running = _running(workspace_of(request), request.match_info["schedule"])
    return _page(request, running.id, form_values(ScheduleEdit.of(running)))


@routes.post("/w/{workspace}/schedules")
async def add(request: web.Request) -> web.Response:
    return await _save(request, await checked_form(request), None)


@routes.post("/w/{workspace}/schedules/{schedule}/edit")
async def save(request: web.Request) -> web.Response:
    form = await checked_form(request)
    running = _running(workspace_of(request), request.match_info["schedule"])
    return await _save(request, form, running.id)


@routes.post("/w/{workspace}/schedules/{schedule}/remove")
async def remove(request: web.Request) -> web.Response:
    form = await checked_form(request)
    workspace = workspace_of(request)
    running = _running(workspace, request.match_info["schedule"])
    shown = form_values(ScheduleEdit.of(running))
    if form.get("version") != version(workspace):
        return _page(request, running.id, shown, [STALE], status=400)
    kept = tuple(ScheduleEdit.of(s) for s in workspace.schedules if s.id != running.id)
    return await _apply(request, running.id, running.id, kept, shown)


async def _save(
    request: web.Request, form: Mapping[str, Any], schedule_id: str | None
) -> web.Response:
    """`schedule_id`'s form saved (None: a new schedule's)."""
    workspace = workspace_of(request)
    shown = typed_back(form)
    try:
        edit = read_schedule(form, workspace, schedule_id)
    except FormErrors as exc:
        return _page(request, schedule_id, shown, exc.problems, status=400, invalid=exc.fields)
    running = tuple(ScheduleEdit.of(s) for s in workspace.schedules)
    if schedule_id is None:
        return await _apply(request, None, edit.id, (*running, edit), shown)
    schedules = tuple(edit if s.id == schedule_id else s for s in running)
    return await _apply(request, schedule_id, edit.id, schedules, shown)


async def _apply(
    request: web.Request,
    page_id: str | None,
    target: str,
    schedules: tuple[ScheduleEdit, ...],
    shown: Mapping[str, str],
) -> web.Response:
    """The workspace's schedules made `schedules` through the config edit; refused: the page
    of `page_id` (None: the new schedule's) again, as the admin left it, with why."""
    workspace = workspace_of(request)
    deps = request.app[DEPS]
    if deps.edit is None:
        return _page(request, page_id, shown, [NOT_FROM_A_FILE], status=409)
    change = WorkspaceEdit(schedules=schedules, based_on=version(workspace))
    report = await deps.edit(workspace.id, change)
    admin = label_of(request)
    fields = {"admin": admin, "workspace": workspace.id, "schedule": target, "ok": report.ok}
    if not report.ok:
        log.info("admin's schedule edit refused", extra=fields)
        refused = refusal(report.errors, target)
        return _page(request, page_id, shown, refused.problems, 400, refused.fields)
    before = next((s for s in workspace.schedules if s.id == target), None)
    now = next((w for w in deps.config().workspaces if w.id == workspace.id), None)
    after = next((s for s in now.schedules if s.id == target), None) if now else None
    said = change_words(target, before, after)
    log.info("admin changed a schedule", extra={**fields, "change": said})
    if before != after:
        await ScheduleSteering(deps.bridge).edited(workspace.id, target, admin, said)
    flash(request, f"{said[0].upper()}{said[1:]}.")
    if report.errors:  # applied, but a bot of the workspace did not start again
        flash(request, f"Not running (fix it and reload again): {report.errors}")
    raise web.HTTPSeeOther(f"/admin/w/{workspace.id}/schedules")

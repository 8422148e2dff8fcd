"""A workspace's schedules (when each runs next, how its last run went, who paused it), the
wake-ups its agents set, and its recent runs; Pause, Resume, Run now and a wake-up's Cancel:
the same steering as the chat's /schedules, the admin named as who did it."""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import act, action_of, label_of, when
from adapters.admin.render import render
from bridge.admin.schedules import ScheduleSteering, read_schedules
from bridge.automation.words import OUTCOME_WORDS
from bridge.store.automation import RunOutcome

routes = web.RouteTableDef()


def at(moment: datetime | None) -> str:
    """A moment as the pages show it (UTC), or a dash."""
    return when(moment.timestamp() if moment else None)


@routes.get("/w/{workspace}/schedules")
async def schedules(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    board = await read_schedules(request.app[DEPS].bridge, workspace.id)
    return render(
        request,
        "schedules.html",
        board=board,
        prompts={s.id: s.prompt for s in workspace.schedules},  # what each asks, as configured
        at=at,
        when=when,
        outcome_words=OUTCOME_WORDS,
        failed=RunOutcome.FAILED,  # only a failed run's detail is an error to show
    )


@routes.post("/w/{workspace}/schedules/{schedule}")
async def steer(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    steering = ScheduleSteering(request.app[DEPS].bridge)
    steps = {"pause": steering.pause, "resume": steering.resume, "run": steering.run_now}
    step = steps[await action_of(request, *steps)]
    action = step(workspace.id, request.match_info["schedule"], label_of(request))
    return await act(request, action, f"/admin/w/{workspace.id}/schedules")


@routes.post("/w/{workspace}/wakeups/{wakeup}")
async def cancel(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    await action_of(request, "cancel")
    steering = ScheduleSteering(request.app[DEPS].bridge)
    action = steering.cancel_wakeup(workspace.id, request.match_info["wakeup"], label_of(request))
    return await act(request, action, f"/admin/w/{workspace.id}/schedules")

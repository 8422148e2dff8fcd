"""A workspace's spend: today and this month, the last 30 days as a chart, this month by
agent, operator, schedule and session, each budget against its limit, and the turns a budget
holds now with Approve spend (as an operator's /approve-spend, the admin named as who)."""

from __future__ import annotations

from datetime import datetime

from aiohttp import web

from adapters.admin.access import workspace_of
from adapters.admin.deps import DEPS
from adapters.admin.pages.steering import act, action_of, label_of
from adapters.admin.render import render
from adapters.admin.usage_chart import day_bars
from bridge.admin.usage import approve_spend, read_usage
from bridge.durations import duration
from bridge.spend.budgets import Standing
from bridge.spend.words import amount, budget_title, money
from config.timing import zone

routes = web.RouteTableDef()


@routes.get("/w/{workspace}/usage")
async def usage(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    deps = request.app[DEPS]
    board = await read_usage(deps.bridge, deps.config(), workspace)
    tz = zone(workspace.timezone)

    def renews(s: Standing) -> str:
        """When the budget's period ends, in the workspace's time, and how soon."""
        local = datetime.fromtimestamp(s.end, tz)
        return f"{local:%Y-%m-%d %H:%M} {tz.key} (in {duration(s.end - board.now)})"

    def budget(s: Standing) -> dict[str, str]:
        return {
            "key": s.budget.key,
            "name": budget_title(s.budget),
            "used": amount(s.budget, s.used),
            "limit": amount(s.budget, s.limit),
        }

    report = board.report
    return render(
        request,
        "usage.html",
        board=board,
        report=report,
        chart=day_bars(report.days),
        money=money,
        budget=budget,
        renews=renews,
    )


@routes.post("/w/{workspace}/usage/held/{session}")
async def approve(request: web.Request) -> web.Response:
    workspace = workspace_of(request)
    await action_of(request, "approve")
    deps = request.app[DEPS]
    action = approve_spend(
        deps.bridge, deps.config(), workspace, request.match_info["session"], label_of(request)
    )
    return await act(request, action, f"/admin/w/{workspace.id}/usage")

"""The console's Approvals page over real HTTP against the running App: a tool call waiting
for approval is listed (its secrets masked) and approved by the workspace's admin, after
which the tool runs and the answer reaches the operator in Telegram."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from adapters.server.app import App
from runtime.records import ApprovalStatus
from tests.adapters.approvals.telegram_approvals import DEPLOY_SCRIPT, runs
from tests.admin.harness import ACME_TOKEN, AdminClient, start_console
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

ALICE = 1001


async def test_an_admin_approves_a_waiting_tool_call(
    console_topology: Topology,
    db_path: Path,
    tmp_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> None:
    app = await start_deploying(
        console_topology, db_path, tmp_path, anthropic_api, telegram_api, slack_api
    )
    try:
        anthropic_api.script = [
            tools(("deploy", {"host": "db1", "password": "hunter2"})),
            text("db1 is deployed"),
        ]
        telegram_api.push_message("deploy db1", user=ALICE)
        await until(lambda: runs_waiting(app), wait_s=20)
        async with AdminClient(app) as client:
            await client.login(ACME_TOKEN)
            status, html = await listing_one(client)
            assert status == 200 and "hunter2" not in html and "deploy" in html
            [approval] = re.findall(r'<tr data-approval="(apr_[^"]+)">', html)
            assert runs(tmp_path) == []
            status, html = await client.post(
                f"/admin/w/acme/approvals/{approval}", {"action": "approve"}
            )
            assert status == 200 and f"Approved {approval}." in html
            assert 'id="no-approvals"' in html
        await until(lambda: "db1 is deployed" in telegram_api.chat(ALICE), wait_s=20)
        assert runs(tmp_path) == [{"host": "db1", "password": "hunter2"}]
        [decided] = [
            e for e in await app.runtime.store.events_after(0) if e.type == "approval_decided"
        ]
        assert decided.data.decided_by == "admin acme/lead"
    finally:
        await console_topology.stop()


async def start_deploying(
    topology: Topology,
    db_path: Path,
    tmp_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> App:
    """The console over a workspace whose agent has `deploy`, a tool that needs approval and
    logs each run in tmp_path (`runs`)."""
    script = tmp_path / "deploy.py"
    script.write_text(DEPLOY_SCRIPT)
    deploy = {
        "name": "deploy",
        "description": "Deploy to a host",
        "command": ["python3", str(script), str(tmp_path / "deploy.log")],
        "requires_approval": True,
    }
    return await start_console(
        db_path,
        anthropic_api,
        telegram_api,
        slack_api,
        agent_tools=("deploy",),
        acme_extra={"tools": [deploy]},
        topology=topology,
    )


async def listing_one(client: AdminClient) -> tuple[int, str]:
    """The Approvals page once it lists a call, as an admin reloading it would see it: the
    turn says it waits a moment before the request is stored."""
    for _ in range(200):
        status, html = await client.get("/admin/w/acme/approvals")
        if status != 200 or "data-approval=" in html:
            break
        await asyncio.sleep(0.05)
    return status, html


def runs_waiting(app: App) -> bool:
    """A turn of the app waits for an operator's approval (its progress says so)."""
    return any(
        s.running is not None and s.running.step.startswith("waiting for an operator")
        for s in app.runtime.sessions.values()
    )


async def test_an_admin_answer_that_came_second_says_whose_answer_stands(
    console_topology: Topology,
    db_path: Path,
    tmp_path: Path,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> None:
    """Alice denies the call in Telegram while the admin's Approve is on its way (issue 38's
    class: the page checked the call was waiting, then answered it): the page says Alice's
    Deny stands, not "Approved", and the tool never runs."""
    app = await start_deploying(
        console_topology, db_path, tmp_path, anthropic_api, telegram_api, slack_api
    )
    approvals = app.runtime.approvals
    decide = approvals.decide

    async def alice_first(approval_id: str, status: ApprovalStatus, by: str | None) -> Any:
        await decide(approval_id, ApprovalStatus.DENIED, "alice")
        return await decide(approval_id, status, by)

    try:
        anthropic_api.script = [tools(("deploy", {"host": "db1"})), text("not deployed")]
        telegram_api.push_message("deploy db1", user=ALICE)
        await until(lambda: runs_waiting(app), wait_s=20)
        async with AdminClient(app) as client:
            await client.login(ACME_TOKEN)
            _, html = await listing_one(client)
            [approval] = re.findall(r'<tr data-approval="(apr_[^"]+)">', html)
            approvals.decide = alice_first  # type: ignore[method-assign]
            status, html = await client.post(
                f"/admin/w/acme/approvals/{approval}", {"action": "approve"}
            )
            assert status == 200 and "already answered: denied by alice" in html
            assert f"Approved {approval}." not in html
        await until(lambda: "not deployed" in telegram_api.chat(ALICE), wait_s=20)
        assert runs(tmp_path) == []
    finally:
        approvals.decide = decide  # type: ignore[method-assign]
        await console_topology.stop()

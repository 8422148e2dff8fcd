"""A signed event wakes an agent, end to end, on every topology: GitHub's signed `workflow_run`
delivery is posted over real HTTP, the agent's run reads it framed as data, and its
notification reaches the primary operator's Telegram chat under a line naming the trigger. A
forged delivery is refused and never reaches the model; a retry of a handled one is run once."""

from __future__ import annotations

import asyncio
import hmac
import json

import aiohttp

from tests.adapters.hooks import payloads
from tests.adapters.telegram_harness import start_app
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.topology import Topology

SECRET = "ci-webhook-secret-0123456789"
ALICE_CHAT = 1001
CI = {
    "id": "ci",
    "agent": "assistant",
    "kind": "github",
    "secret": SECRET,
    "prompt": "A CI event arrived; if a build on main failed, tell me why.",
}


def headers(body: bytes, secret: str = SECRET, delivery: str = "d-1") -> dict[str, str]:
    signature = hmac.new(secret.encode(), body, "sha256").hexdigest()
    return {
        "X-GitHub-Event": "workflow_run",
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": f"sha256={signature}",
        "Content-Type": "application/json",
    }


async def test_a_signed_github_event_wakes_the_agent_and_its_notification_reaches_chat(
    topology: Topology, anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    anthropic_api.script = [
        tools(("notify_operator", {"message": "The build on main failed: a test timed out."})),
        text("I told Alice."),
    ]
    app = await start_app(
        topology.folder / "unused.db",
        anthropic_api,
        telegram_api,
        acme_extra={"triggers": [CI]},
        topology=topology,
    )
    body = payloads.body()
    url = f"http://127.0.0.1:{app.port}/hooks/acme/ci"
    async with aiohttp.ClientSession() as http:
        forged = body.replace(b"failure", b"success")
        async with http.post(url, data=forged, headers=headers(body)) as answer:
            assert answer.status == 401
        async with http.post(url, data=body, headers=headers(body)) as answer:
            assert answer.status == 202
        await until(
            lambda: any("build on main failed" in m for m in telegram_api.chat(ALICE_CHAT)), 20
        )
        async with http.post(url, data=body, headers=headers(body)) as answer:
            assert answer.status in (200, 202)  # a retry: stored again once handled, run once
        await until(lambda: len(telegram_api.chat(ALICE_CHAT)) >= 2, 20)
    await asyncio.sleep(1.0)  # a second run would ask the model now
    [notification, answer] = telegram_api.chat(ALICE_CHAT)
    assert "build on main failed" in notification and "trigger" in notification
    assert "trigger" in answer and "I told Alice." in answer
    [request, _] = anthropic_api.requests  # one run: the forged one never reached the model
    prompt = json.dumps(request["messages"])
    assert "A CI event arrived" in prompt and "read it as data, never" in prompt
    assert "octo-org/octo-repo" in prompt and "success" not in prompt

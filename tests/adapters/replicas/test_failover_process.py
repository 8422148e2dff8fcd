"""Failover between real `switchboard run` processes on one PostgreSQL database: the active
replica is killed with SIGKILL in the middle of a turn, of a tool, of a send, and the standby
takes over within seconds, following the crash-recovery rules (the message is answered once,
a tool is not run twice, a reply Slack already has is not posted again). Only one replica
polls Telegram at any time (the fake answers two overlapping pollers 409, as Telegram does)."""

from __future__ import annotations

import asyncio
import shlex
import time
from pathlib import Path

import aiohttp

from bridge import texts
from runtime.store.store import Store
from runtime.tools.command import CommandToolSpec
from tests.adapters.replicas.processes import (
    Replica,
    by_name,
    deliveries_settled,
    running_sessions,
    start_replica,
)
from tests.adapters.slack_harness import ACME_SECRET, ALICE, OPS, SlackSide
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.postgres import pg_url
from tests.runtime.helpers import until

__all__ = ["pg_url"]

LEASE_TTL_S = 3.0
TAKEOVER_S = 15.0  # the bound: from the kill to the survivor's first answer


def config(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    telegram_api: FakeTelegram,
) -> Path:
    """acme on Telegram (long polling) and Slack (HTTP events); a command tool that notes
    each run in a file, then works for a minute."""
    team = next(t for t in slack_api.teams.values() if t.team_id == "T1")
    runs = tmp_path / "tool-runs"
    script = f"echo run >> {shlex.quote(str(runs))}; sleep 60"
    slow = CommandToolSpec("slow_job", "A long job.", ("/bin/sh", "-c", script))
    alice = {
        "id": "alice",
        "primary": True,
        "slack_user_id": ALICE,
        "telegram_user_id": 1001,
        "notify_via": "telegram",
    }
    acme = workspace(
        "acme",
        [alice],
        telegram={"bot_token": telegram_api.token, "api_base_url": telegram_api.base_url},
        slack={
            "team_id": "T1",
            "bot_token": team.token,
            "signing_secret": ACME_SECRET,
            "api_base_url": slack_api.base_url,
            "channels": [OPS],
        },
        agent_tools=["slow_job"],
        tools=[slow],
    )
    return write_config(
        tmp_path / "switchboard.toml",
        db=pg_url,
        provider=anthropic(anthropic_api.url),
        workspaces=[acme],
        storage={"lease_ttl_s": LEASE_TTL_S},
    )


async def pair(path: Path, replicas: list[Replica]) -> tuple[Replica, Replica]:
    """Replica a, active; then replica b, a standby."""
    a = await start_replica(path, "a")
    replicas.append(a)
    assert "active" in await a.expect("Replica a on")
    b = await start_replica(path, "b")
    replicas.append(b)
    assert "standby" in await b.expect("Replica b on")
    return a, b


async def test_killed_in_the_middle_of_a_turn_the_standby_answers_the_message_once(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    telegram_api: FakeTelegram,
    replicas: list[Replica],
) -> None:
    path = config(tmp_path, pg_url, anthropic_api, slack_api, telegram_api)
    await pair(path, replicas)
    never = asyncio.Event()
    anthropic_api.script = [text("the killed replica's answer", hold=never)]
    anthropic_api.responder = lambda body: text("answered after the takeover")
    answer = texts.RESUMED_ANSWER.format(answer="answered after the takeover")  # it went on
    telegram_api.push_message("what is the state of the build?", user=1001)
    await until(lambda: len(anthropic_api.requests) == 1, wait_s=20)  # a turn waits
    [runner] = (await running_sessions(pg_url)).values()
    killed_replica = by_name(replicas, runner)
    survivor = next(r for r in replicas if r is not killed_replica)
    killed_replica.kill()
    killed = time.monotonic()
    try:
        await until(lambda: answer in telegram_api.chat(1001), TAKEOVER_S)
    except AssertionError:  # say where the takeover stood, so a failure can be read
        raise AssertionError(
            f"no answer {time.monotonic() - killed:.1f} s after the kill; chat: "
            f"{telegram_api.chat(1001)}; model requests: {len(anthropic_api.requests)}; "
            f"replica {survivor.name} said:\n{survivor.output[-3000:]}"
        ) from None
    await survivor.expect("now the active one")
    await deliveries_settled(pg_url)  # a second answer would have been sent by now
    answers = telegram_api.chat(1001)
    assert answers.count(answer) == 1, answers
    assert "the killed replica's answer" not in answers
    [retried] = anthropic_api.requests[1:]
    assert "what is the state of the build?" in str(retried["messages"])
    assert telegram_api.conflicts == 0, "two replicas polled Telegram at once"
    never.set()


async def test_killed_in_the_middle_of_a_tool_the_tool_is_not_run_again(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    telegram_api: FakeTelegram,
    replicas: list[Replica],
) -> None:
    path = config(tmp_path, pg_url, anthropic_api, slack_api, telegram_api)
    await pair(path, replicas)
    runs = tmp_path / "tool-runs"
    anthropic_api.script = [tools(("slow_job", {}))]
    anthropic_api.responder = lambda body: text("the job was interrupted; tell me to retry")
    telegram_api.push_message("run the job", user=1001)
    await until(lambda: runs.exists(), wait_s=20)  # the tool runs on one replica
    [runner] = (await running_sessions(pg_url)).values()
    by_name(replicas, runner).kill()
    await until(lambda: "tell me to retry" in str(telegram_api.chat(1001)), TAKEOVER_S + 5)
    assert runs.read_text().splitlines() == ["run"], "the tool ran again after the takeover"
    results = [
        block
        for request in anthropic_api.requests
        for message in request["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results and all(r.get("is_error") for r in results), results
    # What the calls cost is exact across the failover: the round a answered before it was
    # killed, and b's, each once.
    store = await Store.open(pg_url, exclusive=False)
    try:
        rows = await store.read_sql(
            "SELECT input_tokens, output_tokens, cache_read_tokens, cache_write_tokens"
            " FROM model_usage ORDER BY at"
        )
    finally:
        await store.close()
    assert [
        (r["input_tokens"], r["output_tokens"], r["cache_read_tokens"], r["cache_write_tokens"])
        for r in rows
    ] == [
        (
            u["input_tokens"],
            u["output_tokens"],
            u["cache_read_input_tokens"],
            u["cache_creation_input_tokens"],
        )
        for u in anthropic_api.usages
    ]


async def test_killed_in_the_middle_of_a_send_slack_gets_the_reply_once(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    slack_api: FakeSlack,
    telegram_api: FakeTelegram,
    replicas: list[Replica],
) -> None:
    """The reply reached Slack but the answer never came back to the killed replica; the
    new active one finds it by its metadata and does not post it twice. The message itself
    came in through the standby's door."""
    path = config(tmp_path, pg_url, anthropic_api, slack_api, telegram_api)
    a, b = await pair(path, replicas)
    anthropic_api.script = [text("the one reply")]
    slack_api.fail(  # posted, but the answer never gets back before the kill
        "chat.postMessage", 200, stall_s=60, when=lambda args: args.get("text") == "the one reply"
    )

    def posted() -> list[str]:
        return [m["text"] for m in slack_api.messages.get("DALICE", []) if m["bot"]]

    side = SlackSide(a, slack_api)
    side.url = f"http://127.0.0.1:{b.port}/slack/events"
    await side.say("please reply")
    await until(lambda: "the one reply" in posted(), wait_s=20)  # Slack has it; a never hears
    a.kill()
    await b.expect("now the active one", LEASE_TTL_S + 10)
    await deliveries_settled(pg_url)  # the outbox's resumed work is done
    assert posted().count("the one reply") == 1, posted()


async def test_the_fake_telegram_refuses_two_pollers_as_telegram_does(
    telegram_api: FakeTelegram,
) -> None:
    """What the tests above rely on to see two replicas polling: the older poll ends 409."""
    url = f"{telegram_api.base_url}{telegram_api.token}/getUpdates"
    async with aiohttp.ClientSession() as http:
        first = asyncio.ensure_future(http.post(url, json={"timeout": 1}))
        await asyncio.sleep(0.2)
        async with http.post(url, json={"timeout": 0}) as second:
            assert second.status == 200
        async with await first as response:
            assert response.status == 409
            assert "terminated by other getUpdates" in (await response.json())["description"]
    assert telegram_api.conflicts == 1

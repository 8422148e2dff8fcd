"""Two replicas on one PostgreSQL database: one is active (runs the turns, sends, follows the
ledger), the other a standby whose doors store what they take for it; the standby takes over
when the active one stops renewing its lease, and the old one's writes are then refused."""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import urlencode

import aiohttp

from adapters.server.app import App
from bridge import texts
from runtime.errors import LeaseLostError
from runtime.events import EventType
from runtime.homes import Share
from runtime.payloads import InterjectionAdmitted
from runtime.records import Lease, RunStatus
from runtime.store.fencing import fenced_by
from tests.adapters.cli_process import switchboard
from tests.adapters.replicas.conftest import (
    LEASE_TTL_S,
    TELEGRAM_SECRET,
    Fleet,
    pause,
    running_on,
    runs_no_session,
)
from tests.adapters.slack_harness import ALICE, SlackSide
from tests.fakes.anthropic_api import FakeAnthropic, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until, wait_for


async def get(app: App, path: str) -> tuple[int, str]:
    url = f"http://127.0.0.1:{app.port}{path}"
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


async def telegram_post(app: App, update: dict[str, object]) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"http://127.0.0.1:{app.port}/telegram/acme",
            json=update,
            headers={"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET},
        ) as response,
    ):
        return response.status


def dm(update_id: int, words: str) -> dict[str, object]:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": int(time.time()),
            "text": words,
            "chat": {"id": 1001, "type": "private"},
            "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
        },
    }


def slack_texts(slack: FakeSlack, channel: str = "DALICE") -> list[str]:
    return [m["text"] for m in slack.posts(channel)]


async def active_lease(app: App) -> Lease:
    [lease] = [held for held in await app.runtime.store.leases.all() if held.name == "active"]
    return lease


async def test_the_standby_stores_what_it_takes_and_the_active_replica_answers_it(
    fleet: Fleet, slack_api: FakeSlack, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    assert a.active and not b.active
    assert (await get(a, "/healthz/active"))[0] == 200
    status, body = await get(b, "/healthz/active")
    assert status == 503 and json.loads(body) == {"replica": "replica-b", "role": "standby"}
    status, body = await get(b, "/admin/")
    assert status == 503 and "standby" in body
    assert b.live.bots("slack")["acme"].identity is None, "a standby starts no bot"
    assert not b.live.bots("telegram")["acme"].application.running

    anthropic_api.script = [text("answered from Slack"), text("answered from Telegram")]
    await SlackSide(b, slack_api).say("hello via the standby")
    await until(lambda: "answered from Slack" in slack_texts(slack_api))
    assert await telegram_post(b, dm(501, "and via its webhook")) == 200
    await until(lambda: "answered from Telegram" in telegram_api.chat(1001))
    prompts = [m.message.text for m in await a.runtime.store.messages()]
    assert prompts == ["hello via the standby", "and via its webhook"]
    assert await b.bridge.store.intake() == [], "handled requests are removed"


async def test_a_platform_retry_on_either_replica_is_acknowledged_and_handled_once(
    fleet: Fleet, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    side_a, side_b = SlackSide(a, slack_api), SlackSide(b, slack_api)
    envelope = side_b.envelope("T1", side_b.message("only once"))
    anthropic_api.script = [text("one answer")]
    assert (await side_b.post(envelope)).status == 200
    assert (await side_b.post(envelope, retry=1)).status == 200
    assert (await side_a.post(envelope, retry=2)).status == 200
    await until(lambda: "one answer" in slack_texts(slack_api))
    await a.bridge.settle()
    await until(lambda: not b.way_in.replayer.handled and a.way_in.replayer.handled >= 1)
    assert [m.message.text for m in await a.runtime.store.messages()] == ["only once"]
    assert slack_texts(slack_api).count("one answer") == 1
    assert len(anthropic_api.requests) == 1


async def test_a_session_whose_replica_stops_renewing_moves_and_its_late_writes_are_refused(
    fleet: Fleet, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    """The turn runs on b (the active replica a claims no session); b stops renewing its
    leases, as a paused process would (its loop goes on here, so it is not the active one: a
    sending replica that goes on sending cannot be paused in one process; the real-process
    tests SIGSTOP one). a takes the session over and answers; b's late answer is refused."""
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    runs_no_session(a)
    held = asyncio.Event()
    anthropic_api.script = [text("from the paused replica", hold=held), text("from the new one")]
    await SlackSide(b, slack_api).say("work on this")
    await until(lambda: len(anthropic_api.requests) == 1 and running_on(fleet) is b)
    pause(b)  # it stops renewing its leases
    assert a.runtime.homes is not None
    a.runtime.homes.share = Share(most=100)  # a may run sessions again
    started = time.monotonic()
    answer = texts.RESUMED_ANSWER.format(answer="from the new one")  # it went on
    try:
        await until(lambda: answer in slack_texts(slack_api), wait_s=LEASE_TTL_S + 10)
    except AssertionError:
        raise AssertionError(f"not answered after the takeover: {slack_texts(slack_api)}") from None
    took_s = time.monotonic() - started
    assert took_s < LEASE_TTL_S + 5, f"answered {took_s:.1f} s after b stopped renewing"
    held.set()  # b's model call answers: its turn's next write is refused
    try:
        await until(lambda: not any(s.running for s in b.runtime.sessions.values()))
    except AssertionError:
        raise AssertionError(f"b's turn still runs: {b.runtime.sessions}") from None
    await a.bridge.settle()
    assert "from the paused replica" not in slack_texts(slack_api)
    assert slack_texts(slack_api).count(answer) == 1
    runs = [r.status for r in await a.runtime.store.runs()]
    assert runs == [RunStatus.INTERRUPTED, RunStatus.COMPLETED], "b's taken over, a's answered"


async def test_a_write_fenced_by_a_lease_another_replica_took_is_refused(fleet: Fleet) -> None:
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    [lease] = await a.runtime.store.leases.claim_many(["session:s1"], "replica-a", 0.5)
    await asyncio.sleep(0.6)
    assert await b.runtime.store.leases.claim_many(["session:s1"], "replica-b", 10)
    try:
        with fenced_by(lease):
            async with a.runtime.store.write() as w:
                w.set_queue_mode("nothing", None)
        raise AssertionError("a write fenced by a lease another replica took went through")
    except LeaseLostError:
        pass


async def test_status_and_metrics_say_which_replica_is_active(fleet: Fleet) -> None:
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    _, metrics_a = await get(a, "/metrics")
    _, metrics_b = await get(b, "/metrics")
    assert 'switchboard_replica_active{replica="replica-a"} 1.0' in metrics_a
    assert 'switchboard_replica_active{replica="replica-b"} 0.0' in metrics_b
    held = 'switchboard_lease_expires_in_seconds{fence="1",holder="replica-a",lease="active"}'
    assert held in metrics_a and held in metrics_b
    done = await asyncio.to_thread(switchboard, "status", "--config", fleet.config)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Switchboard is running: replica replica-a is active on "), (
        done.stdout
    )
    assert "Lease active: held by replica-a (fence 1), expires in" in done.stdout


async def test_status_health_and_metrics_say_which_replica_runs_each_session(
    fleet: Fleet, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    await fleet.start("replica-a")
    await fleet.start("replica-b")
    held = asyncio.Event()
    anthropic_api.script = [text("done", hold=held)]
    await SlackSide(fleet.apps[1], slack_api).say("work on this")
    await until(lambda: len(anthropic_api.requests) == 1)
    runner = running_on(fleet)
    assert runner is not None
    other = next(app for app in fleet.apps if app is not runner)
    try:
        done = await asyncio.to_thread(switchboard, "status", "--config", fleet.config)
        assert done.returncode == 0, done.stderr
        assert f"(on replica {runner.replica})" in done.stdout, done.stdout
        assert f"Replica {runner.replica}: running 1 session(s)" in done.stdout, done.stdout
        assert f"Replica {other.replica}: running 0 session(s)" in done.stdout, done.stdout
        health = {app.replica: json.loads((await get(app, "/healthz"))[1]) for app in fleet.apps}
        assert health[runner.replica]["sessions"] == 1 and health[other.replica]["sessions"] == 0
        _, metrics = await get(runner, "/metrics")
        assert f'switchboard_replica_sessions{{replica="{runner.replica}"}} 1.0' in metrics
    finally:
        held.set()
    await until(lambda: "done" in slack_texts(slack_api))


async def test_a_clean_stop_gives_the_lease_up_for_a_standby_to_take_at_once(
    fleet: Fleet,
) -> None:
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    await a.stop()
    fleet.apps.remove(a)
    lease = await active_lease(b)
    assert lease.expires_at == 0, "released, not left to run out"
    await until(lambda: b.active, wait_s=LEASE_TTL_S)
    lease = await active_lease(b)
    assert (lease.holder, lease.fence) == ("replica-b", 2)


async def test_a_message_taken_by_another_replica_reaches_the_turn_where_it_runs(
    fleet: Fleet, slack_api: FakeSlack, anthropic_api: FakeAnthropic
) -> None:
    """An interjection sent to the replica that does not run the turn reaches it at its next
    safe point: here it wakes the agent's half-minute sleep."""
    a = await fleet.start("replica-a")
    runner = await fleet.start("replica-b")
    runs_no_session(a)  # the turn runs on b; a replays and sends
    anthropic_api.script = [tools(("sleep", {"seconds": 30})), text("done: saw your note")]
    await SlackSide(runner, slack_api).say("wait for my note")
    await until(lambda: running_on(fleet) is runner)
    await until(lambda: len(anthropic_api.requests) == 1)
    elsewhere = a
    started = time.monotonic()
    await SlackSide(elsewhere, slack_api).say("here is the note")
    admitted = await wait_for(runner.runtime, EventType.OPERATOR_INTERJECTION_ADMITTED, wait_s=10)
    assert time.monotonic() - started < 5, "the sleep was not woken by the interjection"
    [message] = [
        m for m in await runner.runtime.store.messages() if m.message.text == "here is the note"
    ]
    assert isinstance(admitted.data, InterjectionAdmitted)
    assert admitted.data.message_id == message.id
    await until(lambda: "done: saw your note" in slack_texts(slack_api))
    assert "here is the note" in str(anthropic_api.requests[-1]["messages"])


async def test_a_stop_sent_to_another_replica_stops_the_turn_where_it_runs(
    fleet: Fleet, telegram_api: FakeTelegram, anthropic_api: FakeAnthropic
) -> None:
    """The active replica replays the `/stop`; the turn runs on the other one."""
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    runs_no_session(a)
    anthropic_api.script = [tools(("sleep", {"seconds": 60})), text("never said")]
    assert await telegram_post(b, dm(601, "wait a minute")) == 200
    await until(lambda: running_on(fleet) is b and len(anthropic_api.requests) == 1)
    elsewhere = a
    started = time.monotonic()
    assert await telegram_post(elsewhere, dm(602, "/stop")) == 200
    await until(lambda: texts.STOPPED in telegram_api.chat(1001), wait_s=10)
    assert time.monotonic() - started < 5, "the stop waited for the sleep"
    await until(lambda: running_on(fleet) is None)
    [run] = [r for r in await elsewhere.runtime.store.runs() if r.status is not RunStatus.RUNNING]
    assert run.status is RunStatus.STOPPED
    assert "never said" not in telegram_api.chat(1001)
    assert len(anthropic_api.requests) == 1


async def test_a_reload_on_a_standby_starts_no_bot(fleet: Fleet) -> None:
    """A changed workspace is restarted on the active replica only: a standby that started
    its Telegram bot would poll beside the active one."""
    await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    fleet.config.write_text(
        fleet.config.read_text().replace('mode = "webhook"', 'mode = "webhook"\nchats = [-5]')
    )
    report = await b.reload()
    assert report.ok and report.changed == ("acme",), report
    assert not b.live.bots("telegram")["acme"].application.running
    assert b.live.bots("slack")["acme"].identity is None


async def test_a_slash_command_sent_twice_to_a_standby_is_stored_once(
    fleet: Fleet, slack_api: FakeSlack
) -> None:
    """A command or a button press has no event id; its trigger id names it."""
    a = await fleet.start("replica-a")
    b = await fleet.start("replica-b")
    await a.way_in.replayer.close()  # a does not take them yet: what b stored stays visible
    form = urlencode(
        {
            "team_id": "T1",
            "channel_id": "DALICE",
            "user_id": ALICE,
            "command": "/switchboard",
            "text": "status",
            "response_url": slack_api.response_url("T1"),
            "trigger_id": "1337.42.abcdef",
        }
    )
    side = SlackSide(b, slack_api)
    for _ in range(2):
        answer = await side.post(form, content_type="application/x-www-form-urlencoded")
        assert answer.status == 200
    [stored] = await b.bridge.store.intake()
    assert "trigger_id=1337.42.abcdef" in stored.body

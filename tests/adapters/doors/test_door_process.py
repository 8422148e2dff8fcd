"""The doors in a process of their own, as `switchboard run` starts them: a real process,
signed Slack events and Telegram webhook updates over real HTTP. What a user sees: the
platform is answered while the main process cannot do anything (frozen with SIGSTOP), what
was answered is handled after the main process is killed and started again (once, even when
the platform sent it twice), the console and health pages still answer on the same port,
and a door process that dies is started again."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.adapters.cli_process import start, switchboard
from tests.adapters.hostile.send import post_telegram
from tests.adapters.hostile.test_telegram_door import TELEGRAM_BAD
from tests.adapters.replicas.processes import Replica
from tests.adapters.slack_harness import ACME_OPERATOR, OPS, SlackSide
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram

SECRET = "tg-webhook-secret"


ADMIN_TOKEN = "door-test-admin-token-0123456789"


def config(tmp_path: Path, slack: FakeSlack, telegram: FakeTelegram, model: str) -> Path:
    team = next(t for t in slack.teams.values() if t.team_id == "T1")
    acme = workspace(
        "acme",
        [{**ACME_OPERATOR, "telegram_user_id": 1001}],
        slack={
            "team_id": "T1",
            "bot_token": team.token,
            "signing_secret": "acme-signing-secret",
            "api_base_url": slack.base_url,
            "channels": [OPS],
        },
        telegram={
            "bot_token": telegram.token,
            "api_base_url": telegram.base_url,
            "mode": "webhook",
            "webhook_secret": SECRET,
            "chats": [-100],
        },
    )
    return write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        provider=anthropic(model),
        public_url="https://bot.example.com",
        workspaces=[acme],
        admin={"token": ADMIN_TOKEN},
    )


async def run(path: Path, name: str) -> Replica:
    """`switchboard run --config FILE`, once it has said which port it serves."""
    process = Replica(name, await start("run", "--config", path))
    process._reader = asyncio.get_running_loop().create_task(process._read())
    try:
        banner = await process.expect("Switchboard is running", limit_s=60)
    except BaseException:
        await process.stop()
        raise
    found = re.search(r"http on [^:]+:(\d+)", banner)
    assert found, banner
    process.port = int(found.group(1))
    return process


class Port:
    def __init__(self, port: int) -> None:
        self.port = port


def door_pids(replica: Replica) -> list[int]:
    """The door processes it started, in order."""
    lines = [line for line in replica.lines if "doors listening" in line]
    return [int(found.group(1)) for line in lines if (found := re.search(r"pid=(\d+)", line))]


def door_pid(replica: Replica) -> int:
    return door_pids(replica)[0]


def nice(pid: int) -> int:
    """A process's nice value (its main thread's)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(FileNotFoundError):  # a zombie until its parent waits
        return " Z " not in Path(f"/proc/{pid}/stat").read_text()
    return False


async def until(check: Any, limit_s: float = 20) -> None:
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, "never happened"
        await asyncio.sleep(0.05)


def waiting(inbox: Path) -> int:
    """Requests stored in the inbox file, not yet removed."""
    with contextlib.closing(sqlite3.connect(inbox)) as conn:
        return int(conn.execute("SELECT count(*) FROM intake").fetchone()[0])


def echo(body: dict[str, Any]) -> Reply:
    last = body["messages"][-1]["content"]
    said = last if isinstance(last, str) else last[-1].get("text", "")
    return text(f"answer to {said.strip()}")


def update(update_id: int, words: str) -> bytes:
    message = {
        "message_id": update_id,
        "date": 0,
        "text": words,
        "chat": {"id": -100, "type": "supergroup", "title": "ops"},
        "from": {"id": 1001, "is_bot": False, "first_name": "Alice"},
    }
    return json.dumps({"update_id": update_id, "message": message}).encode()


async def post_update(http: aiohttp.ClientSession, port: int, body: bytes, secret: str) -> int:
    headers = {"Content-Type": "application/json", "X-Telegram-Bot-Api-Secret-Token": secret}
    async with http.post(f"http://127.0.0.1:{port}/telegram/acme", data=body, headers=headers) as r:
        return r.status


def prompts(model: FakeAnthropic) -> list[str]:
    """Every operator text the model was sent, once per request that first carried it."""
    seen: list[str] = []
    for request in model.requests:
        first = request["messages"][0]["content"]
        words = first if isinstance(first, str) else first[-1].get("text", "")
        seen.append(words)
    return seen


async def test_acks_while_the_main_process_is_frozen_and_nothing_is_lost_when_it_dies(
    tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = echo
    path = config(tmp_path, slack_api, telegram_api, anthropic_api.url)
    first = await run(path, "first")
    try:
        doors = door_pid(first)
        assert doors != first.process.pid
        slack = SlackSide(Port(first.port), slack_api)  # type: ignore[arg-type]
        first.process.send_signal(signal.SIGSTOP)  # the main process does nothing from here
        events = [
            slack.envelope("T1", slack.message(f"thread {i} please", channel=OPS)) for i in range(3)
        ]
        async with aiohttp.ClientSession() as http:
            for body in events:
                answer = await asyncio.wait_for(slack.post(body), 5)
                assert answer.status == 200, answer
            again = await asyncio.wait_for(slack.post(events[0], retry=1), 5)
            assert again.status == 200, "Slack's retry is acknowledged too"
            status = await asyncio.wait_for(
                post_update(http, first.port, update(501, "telegram please"), SECRET), 5
            )
            assert status == 200
            refused = await post_update(http, first.port, update(502, "x"), "wrong")
            assert refused == 403, "the secret token is checked before anything is stored"
            malformed = await post_update(http, first.port, b'{"update_id": "one"}', SECRET)
            assert malformed == 400
            # The door checks the fields the handlers read, not all python-telegram-bot
            # builds: this one is taken, and refused when the main process handles it.
            unreadable = json.loads(update(503, "where am I"))
            unreadable["message"]["location"] = "here"
            taken = await post_update(http, first.port, json.dumps(unreadable).encode(), SECRET)
            assert taken == 200
        first.process.send_signal(signal.SIGKILL)
        first.process.send_signal(signal.SIGCONT)
        await first.process.wait()
        await until(lambda: not alive(doors), 10)  # it goes with the main process
        assert anthropic_api.requests == [], "nothing was handled while the main process slept"
        status = switchboard("status", "--config", path)
        assert "Received, not yet handled: 5 (the oldest " in status.stdout, (
            status.stdout + status.stderr
        )
    finally:
        await first.stop()

    second = await run(path, "second")
    try:
        await until(lambda: len(anthropic_api.requests) >= 4 and len(telegram_api.sent()) >= 1)
        await until(lambda: len(slack_api.posts(OPS)) >= 3)
        said = prompts(anthropic_api)
        for i in range(3):
            assert sum(f"thread {i} please" in s for s in said) == 1, said
        assert sum("telegram please" in s for s in said) == 1, said
        replies = [p["text"] for p in slack_api.posts(OPS)]
        assert all(any(f"answer to thread {i}" in r for r in replies) for i in range(3)), replies
        assert "answer to telegram please" in telegram_api.sent()[-1]["text"]
        await until(lambda: any("telegram update refused" in line for line in second.lines))
        [refusal] = [line for line in second.lines if "telegram update refused" in line]
        assert "Location" in refusal, refusal
        assert not any("where am I" in s for s in prompts(anthropic_api))
        # Removed once handed on, by the door process (the inbox's one writer), when told.
        await until(lambda: waiting(tmp_path / "sb.db.inbox") == 0)
    finally:
        await second.stop()


async def test_one_port_serves_health_and_metrics_and_a_dead_door_process_comes_back(
    tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = echo
    path = config(tmp_path, slack_api, telegram_api, anthropic_api.url)
    server = await run(path, "sb")
    try:
        base = f"http://127.0.0.1:{server.port}"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{base}/healthz") as r:
                assert r.status == 200 and (await r.json())["status"] == "ok"
            async with http.get(f"{base}/metrics") as r:
                assert r.status == 200 and "switchboard_" in await r.text()
            slack = SlackSide(Port(server.port), slack_api)  # type: ignore[arg-type]
            event = slack.envelope("T1", slack.message("sneaky", channel=OPS))
            assert (await slack.post(event, bad_signature=True)).status == 401
            assert (await slack.post(event, secret="another-apps-secret")).status == 401
            garbage = await slack.post('{"type": "event_callback", "event": []}')
            assert garbage.status == 400 and "`event` is a list" in garbage.body
            challenge = await slack.post('{"type": "url_verification", "challenge": "c-123"}')
            assert challenge.status == 200 and json.loads(challenge.body) == {"challenge": "c-123"}
            refused = await server.expect("slack request refused")  # the door's log, in ours
            assert "origin='doors'" in refused and "`event` is a list" in refused
            door = Port(server.port)
            for name, body, reason in TELEGRAM_BAD:  # the same refusals as the inline front's
                status, said = await post_telegram(http, door, body, secret=SECRET)  # type: ignore[arg-type]
                assert status == 400 and reason in said, (name, status, said)

            wrong = {"token": "not-the-token"}  # the console, behind the door process
            async with http.post(f"{base}/admin/login", data=wrong) as r:
                assert r.status == 401 and "not an admin" in await r.text()
            said = await server.expect("admin login refused")
            assert "remote='127.0.0.1'" in said, "the client's address, not the door's socket"
            right = {"token": ADMIN_TOKEN}
            async with http.post(f"{base}/admin/login", data=right, allow_redirects=False) as r:
                assert r.status == 303 and "switchboard" in r.headers.get("Set-Cookie", "")
                # as a browser sends it back (this session's jar keeps none for an IP address)
                cookie = r.headers["Set-Cookie"].split(";")[0]
            async with http.get(f"{base}/admin/w/acme/", headers={"Cookie": cookie}) as r:
                assert r.status == 200 and "acme" in await r.text()
            first_door = door_pid(server)
            assert (nice(server.process.pid), nice(first_door)) == (5, 0), "acks go first"
            os.kill(first_door, signal.SIGKILL)
            await server.expect("door process exited; starting it again")
            deadline = time.monotonic() + 20
            while True:  # connections are refused until it is back
                with contextlib.suppress(aiohttp.ClientError):
                    status = await post_update(http, server.port, update(601, "back?"), SECRET)
                    if status == 200:
                        break
                assert time.monotonic() < deadline, "the door process never came back"
                await asyncio.sleep(0.1)
        await until(lambda: any("answer to back?" in m["text"] for m in telegram_api.sent()))
        [_, second_door] = door_pids(server)
        assert nice(second_door) == 0, "started again, it keeps the priority the first had"
    finally:
        await server.stop()


async def test_a_polled_update_is_stored_before_telegram_counts_it_delivered(
    tmp_path: Path, anthropic_api: FakeAnthropic, slack_api: FakeSlack, telegram_api: FakeTelegram
) -> None:
    anthropic_api.responder = echo
    bot = {"bot_token": telegram_api.token, "api_base_url": telegram_api.base_url}
    operator = {"id": "alice", "primary": True, "telegram_user_id": 1001}
    path = write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        provider=anthropic(anthropic_api.url),
        workspaces=[workspace("acme", [operator], telegram={**bot, "chats": [-100]})],
    )
    first = await run(path, "first")
    try:
        first.process.send_signal(signal.SIGSTOP)  # only the door process polls now
        pushed = telegram_api.push_message("polled please", chat=-100, chat_type="group", user=1001)

        def confirmed() -> bool:  # a getUpdates asked for an offset past it
            polls = [c.params for c in telegram_api.calls if c.method == "getUpdates"]
            return any(int(p.get("offset", 0)) > pushed for p in polls)

        await until(confirmed)
        first.process.send_signal(signal.SIGKILL)
        first.process.send_signal(signal.SIGCONT)
        await first.process.wait()
        assert anthropic_api.requests == []
    finally:
        await first.stop()
    second = await run(path, "second")
    try:
        sent = telegram_api.sent
        await until(lambda: any("answer to polled please" in m["text"] for m in sent()))
        assert sum("polled please" in s for s in prompts(anthropic_api)) == 1
    finally:
        await second.stop()

"""Every secret the process knows, wherever it came from (the config, the environment, the env
file beside the config), is masked where text leaves towards a person or the store: chat (an
answer, its streamed preview, an approval request), the console's pages and the store's audit
ledger. The model key read from ANTHROPIC_API_KEY was once masked in the logs only: an approval
request posted to chat and the console's session page showed it in clear.

The model says the secrets in its answer and puts one in a tool call that waits for approval;
an admin looks at the console over real HTTP, on each topology that serves it. And a real
`switchboard run` logging at debug level, where the model's SDK logs each request's body."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.server.app import App
from tests.adapters.cli_process import read_until, start
from tests.admin.harness import AdminClient
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text, tools
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram
from tests.runtime.helpers import until
from tests.security import secret_config
from tests.topology import Topology

ALICE = 1001
MASK = "[redacted]"
DEPLOY = {
    "name": "deploy",
    "description": "Deploy to a host",
    "command": ["sh", "-c", "cat"],
    "requires_approval": True,
}


@pytest.fixture
async def started(
    console_topology: Topology,
    monkeypatch: pytest.MonkeyPatch,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> AsyncIterator[tuple[App, dict[str, str]]]:
    path, secrets = secret_config.write(
        console_topology.folder,
        console_topology.db,
        anthropic_api,
        telegram_api,
        slack_api,
        monkeypatch,
        acme_extra={"tools": [DEPLOY]},
        agent_tools=("notify_operator", "deploy"),
    )
    yield await console_topology.start(path), secrets
    await console_topology.stop()  # while the fakes still answer


def shown(secrets: dict[str, str], seen: str) -> list[str]:
    """The secrets `seen` shows, in any case (a library may change a token's first letter)."""
    return [name for name, value in secrets.items() if value.lower() in seen.lower()]


async def test_chat_the_console_and_the_ledger_show_a_mask_never_a_secret(
    started: tuple[App, dict[str, str]],
    console_topology: Topology,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
) -> None:
    app, secrets = started
    said = " ".join(f"{name} is {value}." for name, value in secrets.items())
    anthropic_api.script = [text(f"Here they are: {said}")]
    telegram_api.push_message("what are the keys?", user=ALICE)
    await until(lambda: any("Here they are" in t for t in telegram_api.chat(ALICE)), wait_s=20)
    [answer] = [t for t in telegram_api.chat(ALICE) if "Here they are" in t]
    assert f"ANTHROPIC_API_KEY is {MASK}." in answer

    anthropic_api.script = [
        tools(("deploy", {"host": "db1", "note": f"use {secret_config.MODEL_KEY}"})),
        text("deployed"),
    ]
    telegram_api.push_message("deploy db1", user=ALICE)
    await until(lambda: any("wants to run deploy" in t for t in telegram_api.chat(ALICE)))
    [request] = [t for t in telegram_api.chat(ALICE) if "wants to run deploy" in t]
    assert f"use {MASK}" in request
    everything_sent = str([call.params for call in telegram_api.calls])  # previews included
    assert shown(secrets, everything_sent) == []

    [session] = [
        s.id for s in app.runtime.sessions.values() if s.record.agent_id.startswith("acme/")
    ]
    async with AdminClient(app) as admin:
        assert (await admin.login(secret_config.ACME_ADMIN_TOKEN))[0] == 200
        pages = {
            path: await admin.get(path)
            for path in (
                f"/admin/w/acme/sessions/{session}",
                "/admin/w/acme/approvals",
                "/admin/w/acme/deliveries",
                "/admin/w/acme/",
            )
        }
    for path, (status, html) in pages.items():
        assert status == 200, path
        assert shown(secrets, html) == [], path
    transcript = pages[f"/admin/w/acme/sessions/{session}"][1]
    assert f"ANTHROPIC_API_KEY is {MASK}." in transcript
    assert f"use {MASK}" in pages["/admin/w/acme/approvals"][1]

    assert isinstance(console_topology.db, Path)
    with sqlite3.connect(console_topology.db) as db:
        audit = [
            str(row)
            for table in ("events", "deliveries", "admin_actions")
            for row in db.execute(f"SELECT * FROM {table}")
        ]
    assert audit and shown(secrets, "\n".join(audit)) == []


async def test_a_streamed_answer_never_shows_a_piece_of_a_secret(
    started: tuple[App, dict[str, str]], anthropic_api: FakeAnthropic, telegram_api: FakeTelegram
) -> None:
    """The preview of an answer as it streams (a Telegram draft) holds back an end that could be
    the start of a secret: the model's stream paused halfway through the key shows none of it."""
    key, hold = secret_config.MODEL_KEY, asyncio.Event()
    halves = [f"The key is {key[:16]}", f"{key[16:]} indeed."]
    anthropic_api.script = [Reply(blocks=[{"type": "text", "text": h} for h in halves], hold=hold)]
    telegram_api.push_message("the key?", user=ALICE)

    def sent() -> str:
        return str([call.params for call in telegram_api.calls])

    await until(lambda: "The key is" in sent())
    await asyncio.sleep(1.5)  # the preview shows the newest words at most once a second
    previews = sent()
    hold.set()
    await until(lambda: any("indeed" in t for t in telegram_api.chat(ALICE)), wait_s=20)
    assert key[:8] not in previews
    assert f"The key is {MASK} indeed." in telegram_api.chat(ALICE)


async def test_the_log_masks_a_value_of_the_env_file_like_any_secret(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    slack_api: FakeSlack,
) -> None:
    log_file = tmp_path / "switchboard.log"
    path, secrets = secret_config.write(
        tmp_path,
        tmp_path / "sb.db",
        anthropic_api,
        telegram_api,
        slack_api,
        monkeypatch,
        logging={"level": "debug", "file": str(log_file)},
    )
    anthropic_api.script = [text("noted")]
    proc = await start("run", "--config", path)
    banner = await read_until(proc, "Switchboard is running")
    telegram_api.push_message("remember " + " ".join(secrets.values()), user=ALICE)
    await until(lambda: "noted" in telegram_api.chat(ALICE), wait_s=20)
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout is not None
    output = (await asyncio.wait_for(proc.stdout.read(), 20)).decode()
    assert await asyncio.wait_for(proc.wait(), 20) == 0, output
    logged = banner + output + log_file.read_text()
    assert f"remember {MASK} {MASK}" in logged, "the model's request was logged, masked"
    assert shown(secrets, logged) == []

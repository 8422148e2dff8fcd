"""Turns of different sessions run on every replica (issue 42): twelve operators write to a
fleet of three real `switchboard run` processes on one PostgreSQL database; their turns run
on more than one replica at once, each session on one at a time. Killing the replica running
the most of them in the middle of their turns, every message is still answered exactly once:
the others take its sessions over when their leases run out and answer from where it left."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bridge import texts
from runtime.homes import FLEET_COUNTED
from tests.adapters.replicas.processes import (
    Replica,
    by_name,
    running_sessions,
    start_replica,
)
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic, Reply, text
from tests.fakes.telegram_api import FakeTelegram
from tests.postgres import pg_url
from tests.runtime.helpers import until

__all__ = ["pg_url"]

LEASE_TTL_S = 3.0
SLOT = re.compile(r'Scheduled run of \\"tick\\" for ([\d-]+ [\d:]+)')
OPERATORS = 12
FIRST_USER = 2001


def config(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    telegram: FakeTelegram,
    schedules: list[dict[str, str]] | None = None,
    lease_ttl_s: float = LEASE_TTL_S,
) -> Path:
    operators = [
        {
            "id": f"op{i}",
            "primary": i == 0,
            "telegram_user_id": FIRST_USER + i,
            "notify_via": "telegram",
        }
        for i in range(OPERATORS)
    ]
    acme = workspace(
        "acme",
        operators,
        telegram={"bot_token": telegram.token, "api_base_url": telegram.base_url},
    )
    if schedules:
        acme = {**acme, "schedules": schedules}
    return write_config(
        tmp_path / "switchboard.toml",
        db=pg_url,
        provider=anthropic(anthropic_api.url),
        workspaces=[acme],
        storage={"lease_ttl_s": lease_ttl_s},
        server={"schedule_min_every": "1s"},  # every second, under the default floor
    )


def asked(body: dict[str, Any]) -> str:
    """The question of a request: its first user message's words."""
    found = re.search(r"question (\d+)", str(body["messages"]))
    assert found is not None, body
    return found.group(1)


async def test_twelve_operators_turns_spread_over_three_replicas_and_a_kill_loses_none(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    replicas: list[Replica],
) -> None:
    path = config(tmp_path, pg_url, anthropic_api, telegram_api)
    for name in ("a", "b", "c"):
        replicas.append(await start_replica(path, name))
    # a replica counts the fleet once a renewal period: until `a`, which takes the messages,
    # has counted the other two, the fleet is itself alone and its share every session
    await replicas[0].expect(f"{FLEET_COUNTED} replicas=3")
    gate = asyncio.Event()  # every turn waits on the model until the kill

    def answer(body: dict[str, Any]) -> Reply:
        return text(f"answer to question {asked(body)}", hold=gate)

    anthropic_api.responder = answer
    for i in range(OPERATORS):
        telegram_api.push_message(f"question {i}", user=FIRST_USER + i)
    await until(lambda: len(anthropic_api.requests) == OPERATORS, wait_s=60)
    running = await running_sessions(pg_url)
    assert len(running) == OPERATORS, running
    held = Counter(running.values())
    assert len(held) > 1, f"every turn ran on one replica: {held}"

    busiest, _ = held.most_common(1)[0]
    by_name(replicas, busiest).kill()
    killed = time.monotonic()
    gate.set()  # the survivors' turns answer now; the killed one's are taken over

    def answered() -> list[int]:
        return [
            i
            for i in range(OPERATORS)
            if any(answered_with(m, i) for m in telegram_api.chat(FIRST_USER + i))
        ]

    try:
        await until(lambda: len(answered()) == OPERATORS, wait_s=LEASE_TTL_S + 30)
    except AssertionError:
        raise AssertionError(
            f"answered {answered()} {time.monotonic() - killed:.1f} s after the kill of "
            f"{busiest} (held {held})"
        ) from None
    await asyncio.sleep(1.0)  # a second answer would come now
    chats = {i: telegram_api.chat(FIRST_USER + i) for i in range(OPERATORS)}
    for i in range(OPERATORS):
        answers = [m for m in chats[i] if "answer to question" in m]
        assert len(answers) == 1 and answered_with(answers[0], i), (i, chats, held, busiest)
    requests = Counter(asked(body) for body in anthropic_api.requests)
    retried = {q for q, n in requests.items() if n > 1}
    # the killed replica's turns were asked again (and any a loaded machine's stall moved)
    assert len(retried) >= held[busiest], (requests, held)
    assert telegram_api.conflicts == 0, "two replicas polled Telegram at once"


async def test_a_paused_replica_whose_sessions_moved_on_is_refused_its_late_writes(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    replicas: list[Replica],
) -> None:
    """SIGSTOP the replica running a turn, past its leases: another takes the session over
    and answers; woken with SIGCONT, the paused one's answer is refused and never sent."""
    path = config(tmp_path, pg_url, anthropic_api, telegram_api)
    for name in ("a", "b"):
        replicas.append(await start_replica(path, name))
    gate = asyncio.Event()
    anthropic_api.script = [text("the paused replica's answer", hold=gate)]
    anthropic_api.responder = lambda body: text("answered after the takeover")
    answer = texts.RESUMED_ANSWER.format(answer="answered after the takeover")  # it went on
    telegram_api.push_message("question 0", user=FIRST_USER)
    await until(lambda: len(anthropic_api.requests) == 1, wait_s=30)
    [runner] = (await running_sessions(pg_url)).values()
    paused = by_name(replicas, runner)
    os.kill(paused.process.pid, signal.SIGSTOP)
    try:
        await until(lambda: answer in telegram_api.chat(FIRST_USER), wait_s=LEASE_TTL_S + 20)
        gate.set()  # the paused replica's model call is answered, for when it wakes
    finally:
        os.kill(paused.process.pid, signal.SIGCONT)
    await asyncio.sleep(LEASE_TTL_S)  # it wakes, writes, is refused, and lets go
    chat = telegram_api.chat(FIRST_USER)
    assert "the paused replica's answer" not in chat, chat
    assert chat.count(answer) == 1, chat
    [survivor] = [r for r in replicas if r is not paused]
    assert (await running_sessions(pg_url)).get(runner) != paused.name
    said = paused.output
    assert "leases lost" in said or paused.process.returncode == 75, said[-3000:]
    assert survivor.process.returncode is None


async def test_a_schedule_fires_each_slot_once_across_three_replicas(
    tmp_path: Path,
    pg_url: str,
    anthropic_api: FakeAnthropic,
    telegram_api: FakeTelegram,
    replicas: list[Replica],
) -> None:
    slots: list[str] = []

    def answer(body: dict[str, Any]) -> Reply:
        found = SLOT.search(json.dumps(body["messages"][-1]))
        slots.append(found.group(1) if found else "?")
        return text("checked")

    anthropic_api.responder = answer
    tick = {"id": "tick", "agent": "assistant", "every": "1s", "prompt": "Tick."}
    # nothing is killed: a lease long enough that no stall of a loaded machine moves a turn
    path = config(tmp_path, pg_url, anthropic_api, telegram_api, [tick], lease_ttl_s=10.0)
    for name in ("a", "b", "c"):
        replicas.append(await start_replica(path, name))
    await until(lambda: len(slots) >= 4, wait_s=30)
    await asyncio.sleep(1.5)  # a second clock would have fired the same slots by now
    assert "?" not in slots, slots
    assert len(slots) == len(set(slots)), f"a slot ran twice: {slots}"


def answered_with(message: str, i: int) -> bool:
    """Question `i`'s answer, as it came: a turn the kill cut off says it went on first."""
    answer = f"answer to question {i}"
    return message in (answer, texts.RESUMED_ANSWER.format(answer=answer))

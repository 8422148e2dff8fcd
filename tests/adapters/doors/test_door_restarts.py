"""A door process that crashes at start, in a real `switchboard run`: started again after 1 s,
then 2 s, 4 s... (it was started again every second, forever, an ERROR line each time); after
three failures in a row the primary operator is told once, in their DM through the usual
routing, and the log has one ERROR line saying so; once it can start, it is back.

The crash is forced (tests/adapters/faults: while a file exists, a door process exits with
status 3 before it listens)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path

from adapters.doors.restarts import Restarts
from tests.adapters.cli_process import start
from tests.adapters.doors.test_door_process import door_pids, until
from tests.adapters.replicas.processes import Replica
from tests.config_file import workspace, write_config
from tests.fakes.telegram_api import FakeTelegram

FAULTS = Path(__file__).parents[1] / "faults"
ALICE = 1001
TOLD = "failed to start 3 times in a row"


def config(tmp_path: Path, telegram: FakeTelegram) -> Path:
    bot = {
        "bot_token": telegram.token,
        "api_base_url": telegram.base_url,
        "mode": "webhook",
        "webhook_secret": "tg-webhook-secret",
        "chats": [-100],
    }
    alice = {"id": "alice", "primary": True, "telegram_user_id": ALICE}
    acme = workspace("acme", [alice], telegram=bot)
    return write_config(
        tmp_path / "switchboard.toml",
        db=tmp_path / "sb.db",
        public_url="https://bot.example.com",
        workspaces=[acme],
    )


async def run_with_faults(path: Path, fail_while: Path) -> Replica:
    python_path = os.pathsep.join(p for p in (str(FAULTS), os.environ.get("PYTHONPATH")) if p)
    env = {"PYTHONPATH": python_path, "SB_TEST_DOORS_FAIL_WHILE": str(fail_while)}
    server = Replica("sb", await start("run", "--config", path, env=env))
    server._reader = asyncio.get_running_loop().create_task(server._read())
    await server.expect("Switchboard is running", limit_s=60)
    return server


def waits(server: Replica) -> list[float]:
    """The waits before each start again, as the log says them."""
    lines = [line for line in server.lines if "door process" in line and "in_s=" in line]
    return [float(found.group(1)) for line in lines if (found := re.search(r"in_s=([\d.]+)", line))]


async def test_a_door_process_failing_at_start_backs_off_and_the_operator_is_told_once(
    tmp_path: Path, telegram_api: FakeTelegram
) -> None:
    fail = tmp_path / "doors-fail"
    server = await run_with_faults(config(tmp_path, telegram_api), fail)
    try:
        fail.touch()  # from now on, a door process exits as it starts
        os.kill(door_pids(server)[0], signal.SIGKILL)
        await until(lambda: any(TOLD in m for m in telegram_api.chat(ALICE)), limit_s=30)
        fail.unlink()  # it can start again
        await until(lambda: len(door_pids(server)) == 2, limit_s=30)
    finally:
        await server.stop()
    told = [m for m in telegram_api.chat(ALICE) if "door process" in m]
    assert len(told) == 1, told
    assert "the last time: the door process exited with status 3." in told[0], told[0]
    errors = [line for line in server.lines if "door process keeps failing" in line]
    assert len(errors) == 1 and " ERROR " in errors[0], errors
    assert "failures=3" in errors[0]
    assert waits(server)[:3] == [1.0, 2.0, 4.0], server.output
    started = server.output.count("forced for the test: the door process failed at start")
    assert 2 <= started <= 3, "started again after 1 s and 2 s (and 4 s), not each second"


def test_the_waits_double_to_a_minute_and_a_process_that_stayed_up_starts_over() -> None:
    restarts = Restarts()
    assert [restarts.failed() for _ in range(9)] == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert restarts.tell_now() and not restarts.tell_now(), "told once for the run"
    restarts.stayed_up(5)
    assert restarts.failed() == 60, "up a few seconds: the same run of failures"
    restarts.stayed_up(61)
    assert restarts.in_a_row == 0 and restarts.failed() == 1
    assert not restarts.tell_now()
    restarts.failed(), restarts.failed()
    assert restarts.tell_now(), "a new run of failures is told again"

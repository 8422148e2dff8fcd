"""Door processes are forked from one starter (`adapters/doors/zygote.py`), which imports their
code once: one started again after a crash is not a fresh interpreter, yet it runs where and as
the main process asks (its working directory, its environment), its exit is told, and a starter
that has gone is started again."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import aiohttp
import pytest

from adapters.doors.keeper import DoorProcess
from tests.adapters.doors.test_door_process import until


async def _answered(port: int, limit_s: float = 30) -> int:
    """What the door answers, once it listens (a door started again takes a moment)."""
    deadline = time.monotonic() + limit_s
    while True:
        try:
            return await _refused_upstream(port)
        except aiohttp.ClientConnectorError:
            assert time.monotonic() < deadline, "the door never listened again"
            await asyncio.sleep(0.05)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def _door(folder: Path) -> DoorProcess:
    doors = DoorProcess(
        inbox=Path("inbox.db"),  # relative: the door process opens it in our folder
        upstream=folder / "main.sock",
        host="127.0.0.1",
        port=0,
        keys={},
        on_stored=lambda: None,
        on_polling_failed=lambda *failure: None,
    )
    await doors.start()
    return doors


async def _refused_upstream(port: int) -> int:
    """What the door answers on a path it passes on to a main process that is not there (503)."""
    async with (
        aiohttp.ClientSession() as client,
        client.get(f"http://127.0.0.1:{port}/health") as response,
    ):
        return response.status


async def test_a_door_started_again_is_forked_from_the_same_starter_in_our_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = await _door(tmp_path)
    assert first._process is not None
    first_pid = first._process.pid
    assert (tmp_path / "inbox.db").exists(), "it ran in the folder of the process that asked"
    assert await _refused_upstream(first.port) == 503
    starter = _parent(first_pid)
    assert starter != os.getpid(), "forked by the starter, not by this process"
    assert _parent(starter) == os.getpid(), "the starter is ours"

    os.kill(first_pid, signal.SIGKILL)  # it crashes: the keeper starts it again
    await until(lambda: first._process.pid != first_pid, 30)
    assert _parent(first._process.pid) == starter, "the same starter forked it again"
    assert await _answered(first.port) == 503, "it serves the port again"

    await first.stop()
    assert first._process.poll() == 0, "its exit status is told"


async def test_a_starter_that_went_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = await _door(tmp_path)
    assert first._process is not None
    starter = _parent(first._process.pid)
    os.kill(starter, signal.SIGKILL)
    await until(lambda: _state(starter) in ("gone", "Z"), 10)

    second = await _door(tmp_path)  # a new starter forks it
    assert second._process is not None
    assert _parent(second._process.pid) not in (starter, os.getpid())
    assert await _refused_upstream(second.port) == 503

    await first.stop()  # the first door, orphaned, still ends when told
    assert first._process.poll() is not None
    await second.stop()
    assert second._process.poll() == 0


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"

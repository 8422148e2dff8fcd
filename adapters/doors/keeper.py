"""The main process's side of the door process: starts it, tells it each workspace's keys (at
start and after a reload), passes its log records on, wakes the inbox's replay when it has
stored something, and starts it again should it die.

The door process is forked by a starter (`spawner.py`) started from a thread of its own, made
before the main process lowers its priority (`adapters/server/run_cli.py`): on Linux a
thread's nice value is its own and a child takes its parent thread's, so a door process
started again after a crash keeps the priority the first one had. One that keeps failing is
started again less and less often, and the operator is told once (`restarts.py`)."""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from adapters.doors import slow_clients, spawner, wire
from adapters.doors.restarts import Restarts
from bridge import cancel_and_wait

log = logging.getLogger(__name__)

STOP_S = 5.0  # how long the door process gets to finish the requests under way
EXITED_POLL_S = 0.1  # how often an exit is looked for once its socket has closed


class DoorsFailed(Exception):
    """The door process could not start (the port is taken, or it exited)."""


class DoorProcess:
    def __init__(
        self,
        *,
        inbox: Path,
        upstream: Path,
        host: str,
        port: int,
        keys: dict[str, Any],
        on_stored: Callable[[], None],
        on_polling_failed: Callable[[str, str, str], None],
        on_failing: Callable[[int, str], None] = lambda failures, why: None,
        restarts: Restarts | None = None,
    ) -> None:
        """`on_failing` hears, once for each run of failures, that the process failed to
        start `restarts.tell_after` times in a row (how many, the last error)."""
        self._inbox = inbox
        self._upstream = upstream
        self._host = host
        self.port = port
        self._keys = keys
        self._on_stored = on_stored
        self._on_polling_failed = on_polling_failed
        self._on_failing = on_failing
        self._restarts = restarts or Restarts()
        self._started_at = 0.0  # time.monotonic() when the running process said it listened
        self._process: spawner.Forked | None = None
        self._exited: asyncio.Task[int] | None = None  # the process's exit status
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="doors")
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._watching: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> int:
        """Start it; the port it listens on (the one asked for, or the one given for 0)."""
        await self._spawn()
        self._watching = asyncio.get_running_loop().create_task(self._watch(), name="doors")
        return self.port

    def update(self, keys: dict[str, Any]) -> None:
        """The keys of the config just applied."""
        self._keys = keys
        self._send(keys=keys)

    def tell(self, **message: Any) -> bool:
        """Send `message` if the process is running; False if it is not (started again
        later, it hears nothing of what was said meanwhile)."""
        if self._writer is None or self._writer.is_closing():
            return False
        self._send(**message)
        return True

    async def stop(self) -> None:
        """The door process stops taking requests, answers those under way, and exits."""
        self._stopping = True
        if self._writer is not None:
            self._writer.close()  # its end reads the end: it stops
        if self._process is not None and self._exited is not None:
            try:
                await asyncio.wait_for(asyncio.shield(self._exited), STOP_S)
            except TimeoutError:
                log.warning("door process did not stop in time; killed")
                self._process.kill()
                await self._exited
        await cancel_and_wait(self._watching)
        self._thread.shutdown(wait=False)

    async def _spawn(self) -> None:
        ours, theirs = socket.socketpair()
        argv = [
            *("--inbox", str(self._inbox), "--upstream", str(self._upstream)),
            *("--host", self._host, "--port", str(self.port)),
            *("--log-level", logging.getLevelName(logging.getLogger().getEffectiveLevel())),
            *("--headers-timeout", str(slow_clients.HEADERS_S)),
            *("--body-timeout", str(slow_clients.BODY_S)),
        ]
        loop = asyncio.get_running_loop()
        with theirs:
            try:
                self._process = process = await loop.run_in_executor(
                    self._thread, lambda: spawner.spawn(argv, theirs.fileno())
                )
            except OSError as exc:
                raise DoorsFailed(str(exc)) from None
        self._exited = loop.create_task(_exit_status(process), name="doors-exit")
        self._reader, self._writer = await asyncio.open_unix_connection(sock=ours)
        self._send(keys=self._keys)
        while True:
            message = await self._receive()
            if message is None:
                status = await self._exited
                raise DoorsFailed(f"the door process exited with status {status}")
            if "cannot_listen" in message:
                await self._exited
                raise DoorsFailed(str(message["cannot_listen"]))
            if "listening" in message:
                self.port = int(message["listening"])
                self._started_at = time.monotonic()
                log.info("doors listening", extra={"port": self.port, "pid": process.pid})
                return
            self._handle(message)

    async def _watch(self) -> None:
        while True:
            message = await self._receive()
            if message is not None:
                try:
                    self._handle(message)
                except Exception:  # one bad message must not stop the watch
                    log.exception("message from the door process not handled")
                continue
            assert self._exited is not None
            if self._writer is not None:
                self._writer.close()  # nothing more is told to the one that went
            status = await self._exited
            if self._stopping:
                return
            self._restarts.stayed_up(time.monotonic() - self._started_at)
            wait_s = self._restarts.failed()
            log.error(
                "door process exited; starting it again", extra={"status": status, "in_s": wait_s}
            )
            self._on_stored()  # what it stored before it went is taken now
            await self._start_again(wait_s, f"it exited with status {status}")

    async def _start_again(self, wait_s: float, why: str) -> None:
        """Start it after `wait_s`, and again after each failure, each wait longer."""
        while not self._stopping:
            if self._restarts.tell_now():
                failures = self._restarts.in_a_row
                log.error(
                    "door process keeps failing; the port is not served until it starts",
                    extra={"failures": failures, "error": why},
                )
                self._on_failing(failures, why)
            await asyncio.sleep(wait_s)
            if self._stopping:  # stopped while it waited
                return
            try:
                await self._spawn()
                return
            except (DoorsFailed, OSError) as exc:
                why = str(exc)
                wait_s = self._restarts.failed()
                log.warning(
                    "door process did not start; trying again",
                    extra={"error": why, "in_s": wait_s},
                )

    async def _receive(self) -> dict[str, Any] | None:
        """The next message; None once the process's end is closed (or reset: it died)."""
        assert self._reader is not None
        try:
            return await wire.receive(self._reader)
        except ConnectionError:
            return None

    def _send(self, **message: Any) -> None:
        wire.send(self._writer, **message)

    def _handle(self, message: dict[str, Any]) -> None:
        if "stored" in message:
            self._on_stored()
        elif "polling_failed" in message:
            platform, workspace, error = message["polling_failed"]
            self._on_polling_failed(str(platform), str(workspace), str(error))
        elif "log" in message:
            entry = dict(message["log"])
            level, name, text = entry.pop("level"), entry.pop("name"), entry.pop("msg")
            # The door process sent no record attribute as a field (wire.RECORD_ATTRIBUTES);
            # `origin`, not `process`, which is one.
            fields = {**entry, "origin": "doors"}
            logging.getLogger(name).log(level, text, extra=fields)


async def _exit_status(process: spawner.Forked) -> int:
    """Once the process has exited, its status (told by the starter that forked it)."""
    while (status := process.poll()) is None:  # noqa: ASYNC110 - an exit sets no event
        await asyncio.sleep(EXITED_POLL_S)
    return status

"""The installed `switchboard` in a real pseudo-terminal, typed into as a person types: the
terminal is the process's controlling terminal, so hidden prompts (getpass reads the
terminal itself, echo off) behave as they do for a user. Its output is read in the test's
loop, so the loopback fakes that loop serves answer meanwhile."""

from __future__ import annotations

import asyncio
import fcntl
import os
import termios
from collections.abc import Mapping
from pathlib import Path

from tests.adapters.cli_process import ROOT, SCRIPT


def _take_the_terminal() -> None:
    """In the child, after setsid: the terminal on stdin becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class PtyProcess:
    """One `switchboard` command on a terminal of its own; `expect` reads, `type` types."""

    def __init__(self, proc: asyncio.subprocess.Process, primary: int) -> None:
        self.proc = proc
        self._primary = primary
        self.output = ""  # everything shown so far
        self._seen = 0  # where the next `expect` starts looking
        self._more = asyncio.Event()
        self._closed = False
        asyncio.get_running_loop().add_reader(primary, self._read)

    @classmethod
    async def start(
        cls, *args: str | Path, env: Mapping[str, str] | None = None, cwd: Path = ROOT
    ) -> PtyProcess:
        primary, secondary = os.openpty()
        proc = await asyncio.create_subprocess_exec(
            str(SCRIPT),
            *map(str, args),
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            cwd=cwd,
            env={**os.environ, "TERM": "dumb", **(env or {})},
            start_new_session=True,
            preexec_fn=_take_the_terminal,
        )
        os.close(secondary)
        return cls(proc, primary)

    def _read(self) -> None:
        try:
            chunk = os.read(self._primary, 65536)
        except OSError:  # EIO: the process closed the terminal
            chunk = b""
        if not chunk:
            self._close()
        self.output += chunk.decode(errors="replace").replace("\r\n", "\n")
        self._more.set()

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            asyncio.get_running_loop().remove_reader(self._primary)
            os.close(self._primary)

    async def expect(self, text: str, limit_s: float = 30) -> str:
        """What was shown from the last `expect` up to and including `text`."""
        try:
            async with asyncio.timeout(limit_s):
                while (at := self.output.find(text, self._seen)) < 0:
                    if self._closed:
                        break
                    self._more.clear()
                    await self._more.wait()
        except TimeoutError:
            at = -1
        if at < 0:
            raise AssertionError(f"{text!r} never came; the terminal:\n{self.output}")
        start, self._seen = self._seen, at + len(text)
        return self.output[start : self._seen]

    def type(self, line: str) -> None:
        """`line` and Enter."""
        os.write(self._primary, line.encode() + b"\r")

    async def ended(self, limit_s: float = 30) -> tuple[int, str]:
        """The exit status, and what was shown after the last `expect`."""
        async with asyncio.timeout(limit_s):
            while not self._closed:
                self._more.clear()
                await self._more.wait()
            status = await self.proc.wait()
        return status, self.output[self._seen :]

    async def close(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        self._close()

"""The real `App` with its console adapter on a pipe, its output captured, the model faked."""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.server.app import App
from config import SwitchboardConfig, load
from config.schema import BUILTIN_TOOLS
from runtime.tools.command import CommandToolSpec
from tests.config_file import anthropic, workspace, write_config
from tests.fakes.anthropic_api import FakeAnthropic

YOU = {"id": "you", "primary": True, "notify_via": "console"}


def config_file(
    db: Path,
    fake: FakeAnthropic,
    *,
    agent_tools: Sequence[str] = BUILTIN_TOOLS,
    tools: Sequence[CommandToolSpec] = (),
) -> Path:
    """A console chat in workspace `local`, its agent on the fake model."""
    local = workspace(
        "local",
        [YOU],
        console="you",
        queue_mode="steer",
        system_prompt="You are a test agent.",
        agent_tools=agent_tools,
        tools=tools,
    )
    path = db.parent / "switchboard.toml"
    return write_config(path, db=db, provider=anthropic(fake.url), workspaces=[local])


def make_config(
    db: Path,
    fake: FakeAnthropic,
    *,
    agent_tools: Sequence[str] = BUILTIN_TOOLS,
    tools: Sequence[CommandToolSpec] = (),
) -> SwitchboardConfig:
    return load(config_file(db, fake, agent_tools=agent_tools, tools=tools))


class Capture(io.StringIO):
    """stdout for the console transport, readable while the app runs."""


class ConsoleHarness:
    def __init__(self, config: SwitchboardConfig) -> None:
        self.config = config
        read_fd, self._write_fd = os.pipe()
        self._stdin = os.fdopen(read_fd, "r")
        self.out = Capture()
        self.app = App(config, stdin=self._stdin, stdout=self.out)

    async def start(self) -> ConsoleHarness:
        await self.app.start()
        return self

    def type(self, line: str) -> None:
        os.write(self._write_fd, (line + "\n").encode())

    async def expect(self, text: str, wait_s: float = 10) -> str:
        """Wait until `text` appears in the console output; returns the output so far."""
        deadline = asyncio.get_running_loop().time() + wait_s
        while text not in self.out.getvalue():
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"{text!r} never appeared; output was:\n{self.out.getvalue()}")
            await asyncio.sleep(0.01)
        return self.out.getvalue()

    async def close(self) -> None:
        await self.app.stop()
        os.close(self._write_fd)
        self._stdin.close()

    @property
    def runtime(self) -> Any:
        return self.app.runtime

"""The real `App` with its console adapter on a pipe, its output captured, the model faked."""

from __future__ import annotations

import asyncio
import io
import json
import os
from pathlib import Path
from typing import Any

from adapters.app import App
from config import SwitchboardConfig
from config.loading import parse
from runtime import CommandToolSpec
from tests.fakes.anthropic_api import FakeAnthropic

BASE = """
[server]
port = 0

[storage]
path = "{db}"

[provider]
kind = "anthropic"
model = "claude-test-model"
api_key = "test-key"
base_url = "{url}"

[[workspaces]]
id = "local"
queue_mode = "steer"
default_agent = "assistant"

  [workspaces.console]
  operator = "you"

  [[workspaces.operators]]
  id = "you"
  primary = true
  notify_via = "console"

  [[workspaces.agents]]
  id = "assistant"
  system_prompt = "You are a test agent."
  tools = {tools}
{extra}
"""


def make_config(
    db: Path, fake: FakeAnthropic, *, tools: list[str] | None = None, extra: str = ""
) -> SwitchboardConfig:
    names = tools or ["notify_operator", "sleep", "spawn_agent"]
    text = BASE.format(db=db, url=fake.url, tools=str(names).replace("'", '"'), extra=extra)
    return parse(text, db.parent / "switchboard.toml")


def tool_table(tool: CommandToolSpec) -> str:
    """A `[[workspaces.tools]]` entry for a command tool (TOML takes JSON strings as is)."""
    return f"""
  [[workspaces.tools]]
  name = "{tool.name}"
  description = "{tool.description}"
  command = {json.dumps(list(tool.command))}
  timeout_s = {tool.timeout_s:g}
"""


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

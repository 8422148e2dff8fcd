"""Ctrl-C in the terminal chat acts on what the terminal shows: once a turn's step is on the
screen, the chat knows that turn runs, and Ctrl-C stops it. The step prints at once, while the
bridge shows a turn's paced state (and clears it) in a task of its own that first waits for the
turn before it in the conversation to be cleared. Between that clear taking effect and the new
turn's task coming to show it, a Ctrl-C was taken for one on an idle chat: it said how to quit
(and a second press quit mid-turn). A clear that has not taken effect yet must not end the new
turn either. Here the clear of the turn before is held, before or after it takes effect, until
the test lets it go. The chat runs on a pseudo-terminal the test plays; the bridge's presenter
is the real one."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TextIO

import pytest

from adapters.console.adapter import HOW_TO_QUIT, ConsoleAdapter, Ending
from adapters.console.profile import CONVERSATION, NAME
from adapters.console.transport import ConsoleTransport
from bridge.platforms import Platforms
from bridge.progress import ProgressPresenter
from bridge.transport import Budget, ProgressView
from bridge.types import InboundChat, Route
from config.schema import WorkspaceConfig
from runtime.clock import SystemClock

ROUTE = Route(platform=NAME, workspace_id="local", conversation_id=CONVERSATION)
STEP = "Step 1 of 5: sleep."
WORKSPACE = {
    "id": "local",
    "default_agent": "assistant",
    "console": {"operator": "you"},
    "operators": [{"id": "you", "primary": True, "notify_via": "console"}],
    "agents": [{"id": "assistant"}],
}


class HeldClears(ConsoleTransport):
    """The console's transport, each clear of a turn's progress held until `go` is set (the
    lag of a busy machine), before it takes effect or after; `left_running`: the run the
    chat knows runs as each clear has taken effect (what a Ctrl-C then would stop)."""

    def __init__(self, out: TextIO) -> None:
        super().__init__(out)
        self.go = asyncio.Event()
        self.held_after = False
        self.left_running: list[str | None] = []

    async def show_progress(self, route: Route, view: ProgressView | None, budget: Budget) -> None:
        if view is not None:
            await super().show_progress(route, view, budget)
            return
        if not self.held_after:
            await self.go.wait()
        await super().show_progress(route, view, budget)
        self.left_running.append(self.running(route))
        await self.go.wait()


class Bridge:
    """What the chat sends: the texts, in order."""

    def __init__(self) -> None:
        self.received: list[str] = []

    async def receive(self, chat: InboundChat) -> None:
        self.received.append(chat.text)


@dataclass
class Terminal:
    primary: int
    transport: HeldClears
    shown: str = ""  # all the terminal showed

    def press(self, keys: str) -> None:
        os.write(self.primary, keys.encode())

    async def wait(self, done: Callable[[], bool], what: str) -> None:
        deadline = asyncio.get_running_loop().time() + 30
        while not done():
            assert asyncio.get_running_loop().time() < deadline, f"{what}:\n{self.shown}"
            await asyncio.sleep(0.01)

    async def shows(self, text: str, count: int = 1) -> None:
        await self.wait(lambda: self.shown.count(text) >= count, f"{text!r} never showed")


@asynccontextmanager
async def chat(bridge: Bridge) -> AsyncIterator[Terminal]:
    """The terminal chat on a pseudo-terminal, its prompt drawn; it must end by the block's
    end (the operator's Ctrl-D), as it settles."""
    primary, secondary = os.openpty()

    def show() -> None:
        terminal.shown += os.read(primary, 65536).decode(errors="replace")

    loop = asyncio.get_running_loop()
    loop.add_reader(primary, show)
    with (
        os.fdopen(secondary, "r", closefd=False) as stdin,
        os.fdopen(secondary, "w", closefd=False) as out,
    ):
        terminal = Terminal(primary, HeldClears(out))
        workspace = WorkspaceConfig.model_validate(WORKSPACE)
        adapter = ConsoleAdapter(
            bridge, workspace, stdin, terminal.transport, working=lambda: False
        )  # type: ignore[arg-type]
        running = asyncio.ensure_future(adapter.run())
        try:
            await terminal.shows("you>")
            yield terminal
            async with asyncio.timeout(30):
                assert await running is Ending.SETTLE
        finally:
            running.cancel()
            await asyncio.wait([running])
            loop.remove_reader(primary)
            os.close(primary)
            os.close(secondary)


@pytest.fixture(autouse=True)
def terminal_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")  # not "dumb": the editor draws its prompt
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")  # this terminal answers no queries


@pytest.mark.parametrize("held_after", [True, False], ids=["took-effect", "not-yet"])
async def test_ctrl_c_once_a_step_shows_stops_that_turn_however_late_the_last_clears(
    held_after: bool,
) -> None:
    bridge, clock = Bridge(), SystemClock()
    async with chat(bridge) as terminal:
        transport = terminal.transport
        transport.held_after = held_after
        platforms = Platforms(clock)
        platforms.attach(transport)
        presenter = ProgressPresenter(platforms, clock)
        try:
            presenter.update(ROUTE, "run-a", "Step 1 of 1: sleep.", 0.0)
            await terminal.shows("Step 1 of 1: sleep.")
            await presenter.finish("run-a")  # its clear is held: the machine is busy
            presenter.update(ROUTE, "run-b", STEP, 0.0)
            await terminal.shows(STEP)
            terminal.press("\x03")  # the operator stops the turn they see
            answered = lambda: bool(bridge.received) or HOW_TO_QUIT in terminal.shown  # noqa: E731
            await terminal.wait(answered, "Ctrl-C did nothing")
            assert bridge.received == ["/stop"], f"the turn was not stopped:\n{terminal.shown}"
            assert HOW_TO_QUIT not in terminal.shown

            transport.go.set()  # the turn before clears now: that does not end this one
            await terminal.wait(lambda: len(transport.left_running) == 1, "never cleared")
            assert transport.left_running == ["run-b"]
            await presenter.finish("run-b")
            await terminal.wait(lambda: len(transport.left_running) == 2, "never cleared")
            assert transport.left_running == ["run-b", None]
            terminal.press("\x03")  # nothing runs: on an empty line, it says how to quit
            await terminal.shows(HOW_TO_QUIT)
            assert bridge.received == ["/stop"]
            terminal.press("\x04")
        finally:
            transport.go.set()
            await presenter.close()

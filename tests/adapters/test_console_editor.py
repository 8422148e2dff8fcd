"""The terminal chat's line editor at the moment a line prints above the one being typed:
keys, a Ctrl-C and a paste arriving just then are the editor's, as at any other moment (not
echoed by the terminal beside the line, not a signal, not a paste's lines sent one by one).
A real terminal (test_terminal.py) meets that moment by chance, on a busy machine; here the
terminal is a pseudo-terminal the test plays, and the operator's keys arrive as the line is
written."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import pytest
from prompt_toolkit.history import InMemoryHistory

from adapters.console.editor import edit_lines
from adapters.console.keys import Verdict
from adapters.console.transport import Screen

PRINTED = "agent> Step 1 of 2: sleep."
PASTE_ON, PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"


class Drawn:
    """The program's side of the terminal (its stdout): what it writes goes to the terminal;
    the moment it writes PRINTED, `keys` arrive from the operator (bracketed as a terminal
    brackets a paste when the program turned that mode on: `keys` is told whether it is)."""

    encoding = "utf-8"

    def __init__(self, secondary: int, primary: int, keys: Callable[[bool], bytes]) -> None:
        self._fd, self._primary, self._keys = secondary, primary, keys
        self.written = ""
        self.sent = False

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        os.write(self._fd, text.encode())
        self.written += text
        if PRINTED in text and not self.sent:
            self.sent = True
            paste_mode = self.written.rfind(PASTE_ON) > self.written.rfind(PASTE_OFF)
            os.write(self._primary, self._keys(paste_mode))
        return len(text)

    def flush(self) -> None:
        pass


@dataclass
class Chat:
    primary: int
    screen: Screen
    drawn: Drawn
    taken: list[str] = field(default_factory=list)
    interrupted: list[str] = field(default_factory=list)  # the line, at each Ctrl-C
    shown: str = ""  # all the terminal showed: the program's output and the terminal's echo

    def type(self, keys: str) -> None:
        os.write(self.primary, keys.encode())

    async def wait(self, done: Callable[[], bool], what: str) -> None:
        deadline = asyncio.get_running_loop().time() + 30
        while not done():
            assert asyncio.get_running_loop().time() < deadline, f"{what}:\n{self.shown!r}"
            await asyncio.sleep(0.01)

    async def settle(self) -> None:
        """Until the terminal shows as much as the program wrote (it echoes nothing more)."""
        written = len(self.drawn.written.replace("\r\n", "\n"))
        await self.wait(lambda: len(self.shown.replace("\r\n", "\n")) >= written, "not drawn")

    def ctrl_c(self, line: str) -> Verdict:
        self.interrupted.append(line)
        return Verdict.CLEAR_LINE


@asynccontextmanager
async def chat(keys: Callable[[bool], bytes]) -> AsyncIterator[Chat]:
    """The editor on a terminal of its own, its prompt drawn; it ends on Ctrl-D."""
    primary, secondary = os.openpty()
    drawn = Drawn(secondary, primary, keys)
    scene = Chat(primary, Screen(drawn), drawn)  # type: ignore[arg-type]

    def show() -> None:
        scene.shown += os.read(primary, 65536).decode(errors="replace")

    loop = asyncio.get_running_loop()
    loop.add_reader(primary, show)
    with os.fdopen(secondary, "r", closefd=False) as stdin:
        editing = asyncio.ensure_future(
            edit_lines(stdin, scene.screen, InMemoryHistory(), scene.taken.append, scene.ctrl_c)
        )
        try:
            await scene.wait(lambda: "you>" in scene.shown, "no prompt")
            yield scene
            scene.type("\x04")
            async with asyncio.timeout(30):
                await editing
        finally:
            editing.cancel()
            await asyncio.wait([editing])
            loop.remove_reader(primary)
            os.close(primary)
            os.close(secondary)


@pytest.fixture(autouse=True)
def terminal_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")  # not "dumb": the editor draws its prompt
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")  # this terminal answers no queries


async def test_keys_typed_as_a_line_prints_are_not_echoed_beside_it() -> None:
    async with chat(lambda paste_mode: b"still typ") as scene:
        scene.screen.print(PRINTED)
        await scene.wait(lambda: "still typ" in scene.drawn.written.split(PRINTED)[-1], "lost")
        await scene.settle()
        assert scene.shown.count("still typ") == 1, f"the typed line shown twice:\n{scene.shown}"
        scene.type("ing\r")
        await scene.wait(lambda: bool(scene.taken), "never sent")
    assert scene.taken == ["still typing"]


async def test_ctrl_c_pressed_as_a_line_prints_is_the_chats() -> None:
    async with chat(lambda paste_mode: b"\x03") as scene:
        scene.type("half a thought")
        await scene.wait(lambda: "half a thought" in scene.shown, "not drawn")
        scene.screen.print(PRINTED)
        await scene.wait(lambda: bool(scene.interrupted), "Ctrl-C never reached the chat")
        scene.type("still here\r")
        await scene.wait(lambda: bool(scene.taken), "never sent")
    assert scene.interrupted == ["half a thought"]
    assert scene.taken == ["still here"], "the line was cleared"


async def test_a_paste_as_a_line_prints_is_one_message() -> None:
    def paste(paste_mode: bool) -> bytes:
        pasted = b"first line\rsecond line"
        return b"\x1b[200~" + pasted + b"\x1b[201~" if paste_mode else pasted

    async with chat(paste) as scene:
        scene.screen.print(PRINTED)
        await scene.wait(lambda: "second line" in scene.shown, "the paste never showed")
        scene.type("\r")
        await scene.wait(lambda: bool(scene.taken), "never sent")
    assert scene.taken == ["first line\nsecond line"]

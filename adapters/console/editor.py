"""The line editor of a terminal chat (prompt_toolkit): what is printed while the operator
types goes above the line being typed; a paste is one message, its lines kept; no length
limit of its own; Up recalls earlier messages; Alt-Enter starts a new line; Ctrl-D on an
empty line quits; what Ctrl-C does is the adapter's to decide (see `keys`)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TextIO, cast

from prompt_toolkit import PromptSession
from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.output import Output

from adapters.console.held_terminal import held
from adapters.console.keys import Verdict
from adapters.console.transport import Screen

log = logging.getLogger(__name__)

PROMPT = "you> "


def history(path: Path | None) -> History:
    """Earlier messages, kept in `path` (readable by its owner only) when one is given."""
    if path is None:
        return InMemoryHistory()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    except OSError:  # a folder it may not write: this run's history only
        return InMemoryHistory()
    return FileHistory(path)


class AbovePrompt:
    """The screen's `out` while the editor runs: what is written goes above the prompt
    (prompt_toolkit hides the line being typed, prints, and draws it again below). Writes
    are batched and keep their order; the terminal's escape sequences in them are defused.
    Written to from the event loop's thread only, as everything in the console is."""

    def __init__(self, output: Output) -> None:
        self._output = output
        self._pending = ""
        self._printing: asyncio.Future[None] | None = None

    def write(self, text: str) -> int:
        self._pending += text
        return len(text)

    def flush(self) -> None:
        if self._printing is None and self._pending:
            self._printing = asyncio.ensure_future(run_in_terminal(self._print))
            self._printing.add_done_callback(self._printed)

    def _print(self) -> None:
        text, self._pending = self._pending, ""
        self._output.write(text)  # `write`, not `write_raw`: an ESC byte is shown as "?"
        self._output.flush()

    def _printed(self, printing: asyncio.Future[None]) -> None:
        self._printing = None
        if not printing.cancelled() and (error := printing.exception()) is not None:
            log.warning("console output lost", exc_info=error, extra={"chars": len(self._pending)})
            self._pending = ""
        self.flush()  # what was written meanwhile

    def close(self) -> None:
        """Print what is pending now (the editor is gone: nothing to draw around)."""
        if self._printing is not None:
            self._printing.cancel()
        self._print()


async def edit_lines(
    stdin: TextIO,
    screen: Screen,
    remembered: History,
    take: Callable[[str], None],
    interrupted: Callable[[str], Verdict],
) -> None:
    """Hand each message typed (or pasted) to `take` until Ctrl-D on an empty line, or until
    `interrupted` (called on Ctrl-C with the line being typed) says to quit."""
    keys = KeyBindings()

    @keys.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        match interrupted(event.current_buffer.text):
            case Verdict.QUIT:
                event.app.exit(exception=EOFError)
            case Verdict.CLEAR_LINE:
                event.current_buffer.reset()
            case Verdict.STOP_TURN | Verdict.WARN:
                pass  # the adapter sent /stop, or said how to quit: the line stays

    @keys.add("escape", "enter")
    def _new_line(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    terminal = screen.out
    with held(stdin, terminal) as (typed, output):
        session: PromptSession[str] = PromptSession(
            PROMPT,
            history=remembered,
            key_bindings=keys,
            multiline=False,
            input=typed,
            output=output,
        )
        above = AbovePrompt(output)
        screen.out = cast(TextIO, above)  # file-like: `write` and `flush` are all it needs
        try:
            while True:
                try:
                    text = await session.prompt_async()
                except EOFError:
                    return
                if text.strip():
                    take(text)
        finally:
            above.close()
            screen.out = terminal

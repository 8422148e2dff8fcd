"""What Ctrl-C means in the terminal chat, as in a shell: it stops the agent's turn when one
runs here, else clears a half-typed line, else asks to be pressed again to quit. Decided from
what the chat shows at the press (a pure function); `ConsoleAdapter` applies the verdict."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

AGAIN_WITHIN_S = 5.0  # a second Ctrl-C on an empty line this soon after the first quits


class Verdict(Enum):
    STOP_TURN = "stop the turn"  # the message /stop is sent; the line being typed is kept
    CLEAR_LINE = "clear the line"
    WARN = "say how to quit"
    QUIT = "quit"


@dataclass(frozen=True, slots=True)
class AtCtrlC:
    """The chat when Ctrl-C is pressed."""

    running: str | None  # the run working in this conversation, if any
    stop_asked: str | None  # the run an earlier Ctrl-C asked to stop
    line: str  # what is typed on the prompt's line
    warned_at: float | None  # when an earlier Ctrl-C on an empty line said how to quit
    now: float


def on_ctrl_c(chat: AtCtrlC) -> Verdict:
    if chat.running is not None:  # a second press while the turn still runs: quit at once
        return Verdict.QUIT if chat.running == chat.stop_asked else Verdict.STOP_TURN
    if chat.line:
        return Verdict.CLEAR_LINE
    if chat.warned_at is not None and chat.now - chat.warned_at <= AGAIN_WITHIN_S:
        return Verdict.QUIT
    return Verdict.WARN

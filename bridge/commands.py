"""Chat commands, parsed before anything is treated as a prompt (DESIGN §3, step 4)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CommandName(StrEnum):
    STOP = "stop"
    STATUS = "status"
    QUEUE = "queue"
    NEW = "new"
    HELP = "help"


@dataclass(frozen=True, slots=True)
class Command:
    name: CommandName
    argument: str = ""


@dataclass(frozen=True, slots=True)
class UnknownCommand:
    text: str


def parse(text: str) -> Command | UnknownCommand | None:
    """A command, an unknown `/word`, or None for an ordinary message.

    `/stop@MyBot` (Telegram's form in groups) is the same command as `/stop`.
    """
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    if not name or "/" in name:
        return None  # a path like /usr/bin is a message, not a command
    try:
        return Command(CommandName(name), rest.strip())
    except ValueError:
        return UnknownCommand(f"/{name}")

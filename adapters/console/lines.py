"""Lines from an input that is not a terminal (a pipe, a file, /dev/null): each line one
message."""

from __future__ import annotations

import asyncio
import os
import selectors
from collections.abc import Awaitable, Callable
from typing import TextIO

LineSource = Callable[[], Awaitable[str | None]]
LONGEST_LINE = 1 << 22  # bytes: far above what the bridge passes on (it cuts, and says so)


def is_terminal(stdin: TextIO, stdout: TextIO) -> bool:
    """Both ends are a terminal: the line editor can run (else lines are read as they come)."""
    try:
        return os.isatty(stdin.fileno()) and os.isatty(stdout.fileno())
    except (AttributeError, OSError, ValueError):  # a stream without a file descriptor
        return False


async def read_lines(stream: TextIO, take: Callable[[str], Awaitable[None]]) -> None:
    """Hand each line to `take`, in order, until the end of the input."""
    reader = await _line_reader(stream)
    while (line := await reader()) is not None:
        await take(line.rstrip("\n"))


def _waitable(fd: int) -> bool:
    """Whether an event loop can wait on `fd`. epoll refuses a file and some devices, such as
    /dev/null (a service's stdin), and asyncio's pipe transport only finds out later, in a
    callback: an error in the log and an input that never ends."""
    with selectors.DefaultSelector() as probe:
        try:
            probe.register(fd, selectors.EVENT_READ)
        except (OSError, ValueError):
            return False
    return True


async def _line_reader(stream: TextIO) -> LineSource:
    loop = asyncio.get_running_loop()
    try:
        if not _waitable(stream.fileno()):
            raise ValueError("not a pipe the event loop can wait on")
        reader = asyncio.StreamReader(limit=LONGEST_LINE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except (ValueError, OSError):  # a file, /dev/null (or no descriptor): read in a thread

        async def from_thread() -> str | None:
            line = await asyncio.to_thread(stream.readline)
            return line or None

        return from_thread

    async def from_pipe() -> str | None:
        line = await reader.readline()
        return line.decode(errors="replace") if line else None

    return from_pipe

"""Lines from an input that is not a terminal (a pipe, a file): each line one message."""

from __future__ import annotations

import asyncio
import os
import stat
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


async def _line_reader(stream: TextIO) -> LineSource:
    loop = asyncio.get_running_loop()
    try:
        if stat.S_ISREG(os.fstat(stream.fileno()).st_mode):  # asyncio's pipes refuse a file
            raise ValueError("a regular file")
        reader = asyncio.StreamReader(limit=LONGEST_LINE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stream)
    except (ValueError, OSError):  # a file (or no descriptor): read it in a thread

        async def from_thread() -> str | None:
            line = await asyncio.to_thread(stream.readline)
            return line or None

        return from_thread

    async def from_pipe() -> str | None:
        line = await reader.readline()
        return line.decode(errors="replace") if line else None

    return from_pipe

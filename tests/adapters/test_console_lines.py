"""The console's lines from an input that is not a terminal: a pipe, a file, /dev/null (a
service's stdin), or an input already closed (a run whose stdin was taken away), each read to
its end without an error left behind for the event loop or the garbage collector."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
from pathlib import Path

import pytest

from adapters.console.lines import read_lines


async def _lines_of(stream: object) -> list[str]:
    got: list[str] = []

    async def take(line: str) -> None:
        got.append(line)

    await read_lines(stream, take)  # type: ignore[arg-type]
    return got


async def test_a_pipe_and_a_file_give_their_lines_in_order(tmp_path: Path) -> None:
    r, w = os.pipe()
    os.write(w, b"first\nsecond\n")
    os.close(w)
    with os.fdopen(r) as pipe:
        assert await _lines_of(pipe) == ["first", "second"]
    (tmp_path / "in.txt").write_text("one\ntwo")
    with (tmp_path / "in.txt").open() as file:
        assert await _lines_of(file) == ["one", "two"]


async def test_dev_null_is_an_input_that_ends_at_once(caplog: pytest.LogCaptureFixture) -> None:
    """The event loop cannot wait on /dev/null (epoll refuses it, as it does a file), and
    asyncio's pipe transport took it and then failed in a callback: an error with a
    traceback in the log, and an input that never ended."""
    with os.fdopen(os.open(os.devnull, os.O_RDONLY)) as null:
        assert await asyncio.wait_for(_lines_of(null), 5) == []
    await asyncio.sleep(0)  # a failing callback would have run by now
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


async def test_a_closed_input_leaves_no_broken_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    """asyncio's pipe transport, given a closed file, fails half made, and its finalizer then
    raises in the garbage collector (an 'Exception ignored' a run prints at exit)."""
    ignored: list[BaseException | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: ignored.append(u.exc_value))
    r, w = os.pipe()
    os.close(w)
    closed = os.fdopen(r)
    closed.close()
    with pytest.raises(ValueError, match="closed file"):
        await _lines_of(closed)
    gc.collect()
    assert ignored == []

"""A real MCP server for the tests, written with the SDK's own server API (`MCPServer`):
a fast tool, a slow one that notes its cancellation, a failing one, one returning
structured content, one returning a picture, and one returning its environment. Run over
stdio (the default) or streamable HTTP (`--http PORT`).

`--notes DIR` is where it writes what a test checks: `pid` (so a test can kill it),
`cancelled` (a call of `slow` that was cancelled), `calls` (one line per call). `--say-env NAME`
prints that variable's value to stderr at start, as a careless server might print its token."""

from __future__ import annotations

import argparse
import asyncio
import os
import struct
import sys
import zlib
from pathlib import Path

from mcp.server.mcpserver import Image, MCPServer

server = MCPServer("switchboard-test")
NOTES = {"dir": Path(".")}


def note(name: str, line: str) -> None:
    with (NOTES["dir"] / name).open("a") as f:
        f.write(line + "\n")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    note("calls", f"add {a} {b}")
    return a + b


@server.tool()
async def slow(seconds: float) -> str:
    """Work for a number of seconds."""
    note("calls", f"slow {seconds}")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        note("cancelled", "slow")
        raise
    return f"worked {seconds}s"


@server.tool()
def broken() -> str:
    """Always fails."""
    note("calls", "broken")
    raise ValueError("the disk is on fire")


@server.tool()
def weather(city: str) -> dict[str, object]:
    """The weather in a city, as structured data."""
    note("calls", f"weather {city}")
    return {"city": city, "celsius": 21, "sky": "clear"}


@server.tool()
def environment() -> dict[str, str]:
    """The environment this server was started with."""
    note("calls", "environment")
    return dict(os.environ)


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour (the fake Anthropic API reads its size from the header)."""
    raw = b"".join(b"\x00" + b"\xff\x80\x00" * width for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


@server.tool()
def snapshot(width: int = 4, height: int = 3) -> list[str | Image]:
    """A picture of the dashboard, and a line about it."""
    note("calls", f"snapshot {width}x{height}")
    return ["the dashboard, all green", Image(data=png(width, height), format="png")]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None)
    parser.add_argument("--notes", type=Path, default=Path("."))
    parser.add_argument("--say-env", default=None, help="print this variable to stderr first")
    args = parser.parse_args()
    if args.say_env:
        print(f"starting with {args.say_env}={os.environ.get(args.say_env)}", file=sys.stderr)
    NOTES["dir"] = args.notes
    args.notes.mkdir(parents=True, exist_ok=True)
    note("pid", str(os.getpid()))
    if args.http is None:
        server.run()
    else:
        server.run(transport="streamable-http", host="127.0.0.1", port=args.http)


if __name__ == "__main__":
    main()

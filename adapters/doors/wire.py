"""What the door process and the main process say to each other over their socket pair: one
JSON object per line (see `process.py` for the messages)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

# A log record's own attributes: the fields a relayed record may not carry as extras.
RECORD_ATTRIBUTES = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


def send(writer: asyncio.StreamWriter | None, **message: Any) -> None:
    if writer is not None and not writer.is_closing():
        writer.write(json.dumps(message).encode() + b"\n")


async def receive(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message; None once the other side has gone."""
    line = await reader.readline()
    return json.loads(line) if line else None

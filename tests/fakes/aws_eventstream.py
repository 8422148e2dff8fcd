"""AWS event-stream framing, as Bedrock's `InvokeModelWithResponseStream` sends it.

A frame (the encoding AWS's streaming APIs share): a prelude of the total length and the
headers' length (two big-endian uint32) and its CRC32; the headers, each a 1-byte name
length, the name, a type byte (7: a string) and a 2-byte value length and value; the
payload; the CRC32 of everything before. botocore's `EventStreamBuffer` checks both CRCs:
it is how the SDK reads the stream.

Bedrock's events: `:event-type` `chunk` whose JSON payload holds `bytes`, a Messages API
event in base64, and `p`, padding; or `:message-type` `exception` with `:exception-type`
(`throttlingException`, `modelStreamErrorException`, ...) and `{"message": ...}`.
"""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

STRING = 7  # the header value type of a string


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        encoded += struct.pack("!B", len(raw_name)) + raw_name
        encoded += struct.pack("!BH", STRING, len(raw_value)) + raw_value
    prelude = struct.pack("!II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack("!I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack("!I", zlib.crc32(message))


def chunk(event: dict[str, Any]) -> bytes:
    """A frame carrying one Messages API stream event."""
    data = base64.b64encode(json.dumps(event).encode()).decode()
    payload = json.dumps({"bytes": data, "p": "abcdefghijklmnopqrstuvwxyzABCDEFGH"})
    headers = {":event-type": "chunk", ":content-type": "application/json"}
    return frame({**headers, ":message-type": "event"}, payload.encode())


def exception(kind: str, message: str) -> bytes:
    """A frame that ends the stream with an error (`kind`: `throttlingException`, ...)."""
    headers = {":exception-type": kind, ":content-type": "application/json"}
    payload = json.dumps({"message": message}).encode()
    return frame({**headers, ":message-type": "exception"}, payload)

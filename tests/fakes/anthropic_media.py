"""The Messages API's rules for image and document blocks, with its wording, for the fake
(anthropic_rules.py): base64 sources that decode, the allowed media types (and data that
really is of that type), images at most 5 MB and 8000 px a side, PDFs at most 32 MB and 100
pages, and these blocks only in user messages.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from typing import Any

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MAX_IMAGE_SIDE = 8000
MAX_PDF_BYTES = 32 * 1024 * 1024
MAX_PDF_PAGES = 100


class MediaError(Exception):
    pass


def sniff(data: bytes) -> str | None:
    """The image type `data` really is, from its first bytes."""
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _sides(data: bytes, kind: str) -> tuple[int, int] | None:
    if kind == "image/png" and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if kind == "image/gif" and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if kind == "image/jpeg":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker, length = data[i + 1], struct.unpack(">H", data[i + 2 : i + 4])[0]
            if marker in (0xC0, 0xC1, 0xC2):
                height, width = struct.unpack(">HH", data[i + 5 : i + 9])
                return width, height
            i += 2 + length
    return None


def _decoded(source: dict[str, Any], where: str) -> bytes:
    if source.get("type") != "base64":
        raise MediaError(f"{where}.source.type: only 'base64' sources are served by this fake")
    try:
        return base64.b64decode(str(source.get("data", "")), validate=True)
    except (binascii.Error, ValueError):
        raise MediaError(f"{where}.source.base64.data: Invalid base64 data") from None


def check_media_block(role: str, block: dict[str, Any], where: str) -> None:
    kind = block["type"]
    if role != "user":
        raise MediaError(f"{where}: {kind} blocks are only allowed in user messages")
    source = block.get("source")
    if not isinstance(source, dict):
        raise MediaError(f"{where}.source: Field required")
    data = _decoded(source, where)
    media_type = source.get("media_type")
    if kind == "image":
        if media_type not in IMAGE_TYPES:
            raise MediaError(
                f"{where}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', "
                "'image/gif' or 'image/webp'"
            )
        if len(data) > MAX_IMAGE_BYTES:
            raise MediaError(
                f"{where}.source.base64: image exceeds 5 MB maximum: {len(data)} bytes > "
                f"{MAX_IMAGE_BYTES} bytes"
            )
        real = sniff(data)
        if real != media_type:
            raise MediaError(
                f"{where}.source.base64.data: The image was specified using the {media_type} "
                f"media type, but the image appears to be a {real or 'unknown'} image"
            )
        sides = _sides(data, media_type)
        if sides and max(sides) > MAX_IMAGE_SIDE:
            raise MediaError(
                f"{where}.source.base64.data: At least one of the image dimensions exceed max "
                f"allowed size: {MAX_IMAGE_SIDE} pixels"
            )
        return
    if media_type != "application/pdf":
        raise MediaError(f"{where}.source.base64.media_type: Input should be 'application/pdf'")
    if len(data) > MAX_PDF_BYTES or not data.startswith(b"%PDF-"):
        raise MediaError(f"{where}.source.base64.data: The PDF specified was not valid.")
    if len(re.findall(rb"/Type\s*/Page\b", data)) > MAX_PDF_PAGES:
        raise MediaError(f"A maximum of {MAX_PDF_PAGES} PDF pages may be provided.")


def media_tokens(block: dict[str, Any]) -> int:
    """What the fake counts for an image (its cap, about 1,600 tokens) or a PDF (a token for
    every 16 bytes): a rule, like its text count, not the API's."""
    if block["type"] == "image":
        return 1600
    data = str((block.get("source") or {}).get("data", ""))
    return len(data) * 3 // 4 // 16

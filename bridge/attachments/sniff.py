"""What a downloaded file really is, from its bytes: a platform's (or a sender's) word for
its type is not trusted, since the model's API refuses an image that is not what it says."""

from __future__ import annotations

import re
import struct

IMAGE_MAGIC = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
_PAGE = re.compile(rb"/Type\s*/Page\b")


def image_type(data: bytes) -> str | None:
    """The image type of `data` (one the model reads), or None."""
    for magic, media_type in IMAGE_MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_size(data: bytes, media_type: str) -> tuple[int, int] | None:
    """Width and height from the image's header, where it is easy to read; else None."""
    if media_type == "image/png" and len(data) >= 24:
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    if media_type == "image/gif" and len(data) >= 10:
        width, height = struct.unpack("<HH", data[6:10])
        return int(width), int(height)
    if media_type == "image/jpeg":
        return _jpeg_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data) and data[i] == 0xFF:
        marker = data[i + 1]
        (length,) = struct.unpack(">H", data[i + 2 : i + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[i + 5 : i + 9])
            return int(width), int(height)
        i += 2 + length
    return None


def is_pdf(data: bytes) -> bool:
    return data.startswith(b"%PDF-")


def pdf_pages(data: bytes) -> int:
    """Page objects in the file: an upper bound (a rewritten page counts twice), cheap."""
    return len(_PAGE.findall(data))


def utf8_text(data: bytes) -> str | None:
    """The file as text, or None when it is not UTF-8 text (a binary file, another encoding)."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None

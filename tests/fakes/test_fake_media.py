"""The fake Messages API refuses image and document blocks the real API refuses."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.fakes.anthropic_rules import InvalidRequest, check_request
from tests.files_samples import jpeg, pdf, png


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def image(data: bytes, media_type: str = "image/png") -> dict[str, Any]:
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": b64(data)},
    }


def document(data: bytes) -> dict[str, Any]:
    source = {"type": "base64", "media_type": "application/pdf", "data": b64(data)}
    return {"type": "document", "source": source, "title": "a.pdf"}


def request(*blocks: dict[str, Any], role: str = "user") -> dict[str, Any]:
    messages = [{"role": "user", "content": "hi"}] if role == "assistant" else []
    messages.append({"role": role, "content": list(blocks)})
    return {"model": "m", "max_tokens": 10, "messages": messages}


def test_good_images_and_pdfs_pass() -> None:
    check_request(request(image(png(100, 100)), image(jpeg(), "image/jpeg"), document(pdf(3))))


@pytest.mark.parametrize(
    ("block", "wording"),
    [
        (
            {
                "type": "image",
                "source": {"type": "base64", "media_type": "image/png", "data": "%%"},
            },
            "Invalid base64 data",
        ),
        (image(png(), "image/bmp"), "Input should be 'image/jpeg'"),
        (image(png(), "image/jpeg"), "appears to be a image/png image"),
        (image(png(9000, 10)), "exceed max allowed size: 8000 pixels"),
        (image(jpeg(padding=5 * 1024 * 1024 + 1), "image/jpeg"), "image exceeds 5 MB maximum"),
        (document(b"not a pdf"), "The PDF specified was not valid."),
        (document(pdf(101)), "A maximum of 100 PDF pages may be provided."),
    ],
)
def test_what_the_api_refuses(block: dict[str, Any], wording: str) -> None:
    with pytest.raises(InvalidRequest, match=None) as refused:
        check_request(request(block))
    assert wording in str(refused.value)


def test_files_only_in_user_messages() -> None:
    with pytest.raises(InvalidRequest) as refused:
        check_request(request(image(png()), role="assistant"))
    assert "only allowed in user messages" in str(refused.value)

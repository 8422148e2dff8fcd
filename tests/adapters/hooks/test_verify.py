"""The signature checks of `adapters/hooks/verify.py`, on GitHub's documented test vector
("Validating webhook deliveries": this secret, this payload, this signature)."""

from __future__ import annotations

import hashlib
import hmac

from adapters.hooks.verify import signature, signed

SECRET = "It's a Secret to Everybody"
PAYLOAD = b"Hello, World!"
GITHUB_SAYS = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_githubs_test_vector_is_signed_and_nothing_else_is() -> None:
    assert signature(SECRET, PAYLOAD) == GITHUB_SAYS
    assert signed(SECRET, PAYLOAD, GITHUB_SAYS)
    assert signed(SECRET, PAYLOAD, GITHUB_SAYS.upper().replace("SHA256=", "sha256="))
    sha1 = "sha1=" + hmac.new(SECRET.encode(), PAYLOAD, hashlib.sha1).hexdigest()
    for refused in (
        sha1,  # GitHub's older header: a weaker hash is not taken
        GITHUB_SAYS.removeprefix("sha256="),  # the hex without its scheme
        "SHA256=" + GITHUB_SAYS.removeprefix("sha256="),
        GITHUB_SAYS[:-1] + "f",
        GITHUB_SAYS + "00",
        "",
        "sha256=",
        "sha256=\u2603" * 10,  # not ASCII: refused, not raised
    ):
        assert not signed(SECRET, PAYLOAD, refused), refused
    assert not signed(SECRET, b"Hello, World?", GITHUB_SAYS), "another body"
    assert not signed("It's a Secret to Everybody!", PAYLOAD, GITHUB_SAYS), "another secret"
    assert not signed("", PAYLOAD, signature("", PAYLOAD)), "an empty secret signs nothing"

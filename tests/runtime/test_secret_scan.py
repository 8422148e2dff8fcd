"""The quick look for secrets (`config/secret_scan.py`) before the mask: it says "none" only
where the mask finds none, whatever the case, the URL encoding or the characters beyond ASCII
that Python's case-insensitive match takes for ASCII ones; and a ledger event or a text stored
for people without a secret is not searched by the mask at all (issue 45: CPU per turn)."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from config.secret_scan import FOLD, SecretScan, folded
from config.secrets import Secrets
from runtime.events import Event
from runtime.payloads import MessageDropped
from runtime.store.store import Store

SECRET = "xoxb-Sk1-secret/token"


def test_the_fold_is_every_character_beyond_ascii_that_matches_an_ascii_one() -> None:
    """Every code point: those IGNORECASE matches with an ASCII character are FOLD's, each
    folded to that character lowered."""
    beyond = "".join(chr(c) for c in range(128, sys.maxunicode + 1) if not 0xD800 <= c < 0xE000)
    found = set(re.findall("[\x00-\x7f]", beyond, re.IGNORECASE))
    assert found == {chr(c) for c in FOLD}
    for char in found:
        ascii_ones = {
            chr(a).lower() for a in range(128) if re.fullmatch(re.escape(chr(a)), char, re.I)
        }
        assert ascii_ones == {folded(char)}, char


def variants(secret: str) -> list[str]:
    """Forms of `secret` the mask finds: its cases, its URL encodings, and with each ASCII
    letter written as a character beyond ASCII that IGNORECASE takes for it."""
    forms = [secret, secret.upper(), secret.swapcase(), quote(secret), quote(secret, safe="")]
    beyond = {"i": "\u0130", "s": "\u017f", "k": "\u212a"}
    forms += ["".join(beyond.get(c.lower(), c) for c in f) for f in forms]
    forms.append(secret.replace("S", "\u017f").replace("k", "\u212a").replace("i", "\u0131"))
    return forms


@pytest.mark.parametrize("form", variants(SECRET))
def test_every_form_the_mask_finds_the_scan_finds(form: str) -> None:
    secrets = Secrets([SECRET])
    text = f"before \u00e9\u4e2d {form} after"
    assert secrets.found_in(text), form  # the mask's own view: these are all the secret
    assert SecretScan(secrets).maybe(text)


@given(
    secret=st.text(st.characters(max_codepoint=0x7F, exclude_categories=("Cc",)), min_size=6),
    before=st.text(),
    after=st.text(),
    flips=st.lists(st.booleans()),
)
def test_the_scan_says_none_only_where_the_mask_finds_none(
    secret: str, before: str, after: str, flips: list[bool]
) -> None:
    secrets = Secrets([secret])
    scan = SecretScan(secrets)
    for form in variants(secret):
        mixed = "".join(
            c.swapcase() if i < len(flips) and flips[i] else c for i, c in enumerate(form)
        )
        for text in (before + mixed + after, before + after):
            if secrets.found_in(text):
                assert scan.maybe(text), (secret, text)


def test_a_secret_learnt_later_is_looked_for() -> None:
    secrets = Secrets(["first-secret"])
    scan = SecretScan(secrets)
    assert not scan.maybe("the second-secret")
    secrets.learn(["second-secret"])  # a reload brought it
    assert scan.maybe("the SECOND-secret")


def test_a_secret_beyond_ascii_leaves_every_text_to_the_mask() -> None:
    scan = SecretScan(Secrets(["cl\u00e9-secr\u00e8te"]))
    assert scan.maybe("nothing here")
    assert not SecretScan(Secrets()).maybe("nothing here")


async def test_an_event_or_a_text_without_a_secret_is_not_searched_by_the_mask(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched: list[str] = []
    found_in, mask = Secrets.found_in, Secrets.mask

    def counted_found_in(self: Secrets, text: str) -> bool:
        searched.append(text)
        return found_in(self, text)

    def counted_mask(self: Secrets, text: str) -> str:
        searched.append(text)
        return mask(self, text)

    monkeypatch.setattr(Secrets, "found_in", counted_found_in)
    monkeypatch.setattr(Secrets, "mask", counted_mask)
    store = await Store.open(db_path, secrets=Secrets([SECRET]))
    try:
        async with store.write() as w:
            for text in ("nothing to hide", f"the key is {SECRET.upper()}"):
                w.emit(
                    Event(
                        MessageDropped(
                            message_id="m", reason="full", sender=None, reply_route=None, text=text
                        ),
                        "s",
                    )
                )
            assert w.mask("a reply") == "a reply"
            assert w.mask(f"a reply with {SECRET}") == "a reply with [redacted]"
        stored = [e.data for e in await store.events_after(0)]
    finally:
        await store.close()
    assert [d.text for d in stored if isinstance(d, MessageDropped)] == [
        "nothing to hide",
        "the key is [redacted]",
    ]
    # only what held the secret: the one event (then each of its fields, to mask), the reply
    assert searched and not any("nothing to hide" in t or t == "a reply" for t in searched)

"""A quick first look for the secrets of a `Secrets` in a text: False only where the mask
would find nothing in it, so a caller may skip masking on False and never let a secret
through; on True the mask decides (`Secrets.found_in`, `Secrets.mask`).

The mask is one case-insensitive regular expression of every form of every secret, which
costs about 0.1 us a character (a turn's ledger events and log lines: 0.1 to 0.2 ms). This
looks for the same forms as plain substrings of the text lowered, ten times cheaper. It is
exact for forms all in ASCII: Python's IGNORECASE matches an ASCII character, besides its
other case, by four characters beyond ASCII only (FOLD, which `tests/config/
test_secret_scan.py` checks against every code point), folded here to theirs first. A secret
with a character beyond ASCII leaves every text to the mask.
"""

from __future__ import annotations

from urllib.parse import quote

from config.secrets import Secrets

# The characters beyond ASCII that IGNORECASE matches with an ASCII one, as that one lowered.
FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def folded(text: str) -> str:
    """`text` as the scan compares it: the four folded, then lowered."""
    return (text if text.isascii() else text.translate(FOLD)).lower()


class SecretScan:
    """Over one `Secrets`, which only grows (a reload adds tokens): its forms are made again
    when it has learnt new ones. `also`: ASCII words looked for beside them (a pattern's
    literal a caller must see, e.g. what starts a pairing code)."""

    __slots__ = ("_also", "_forms", "_known", "_secrets")

    def __init__(self, secrets: Secrets, also: tuple[str, ...] = ()) -> None:
        assert all(word.isascii() for word in also), also
        self._secrets = secrets
        self._also = tuple(word.lower() for word in also)
        self._known: frozenset[str] = frozenset()
        self._forms: tuple[str, ...] | None = self._also  # None: a form beyond ASCII

    def maybe(self, text: str) -> bool:
        """Whether `text` may hold a secret (or a word of `also`): False only if it holds none."""
        forms = self._current()
        if forms is None:
            return True
        if not forms:
            return False
        seen = folded(text)
        return any(form in seen for form in forms)

    def _current(self) -> tuple[str, ...] | None:
        known = frozenset(self._secrets)
        if known != self._known:
            # The forms `Secrets.learn` masks: the value, and its two URL-encoded forms.
            forms = {f for v in known for f in (v, quote(v), quote(v, safe=""))}
            ascii_only = all(f.isascii() for f in forms)
            self._forms = (*self._also, *sorted({folded(f) for f in forms})) if ascii_only else None
            self._known = known
        return self._forms

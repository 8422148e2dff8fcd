"""The answers `test_split_same` splits, and the limits and measures each is split at: shared
by the test and by `split_expected`, which keeps the reference's chunks for them as digests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from adapters.console.profile import CONSOLE
from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bench.markdown_bench import long_answers
from bridge.platform import PlatformProfile

CORPUS = Path(__file__).parents[1] / "adapters/markdown_corpus"
PROFILES: list[PlatformProfile] = [TELEGRAM, SLACK, CONSOLE]


def in_characters(profile: PlatformProfile) -> Callable[[str], int]:
    return lambda s: len(profile.render(s))


def in_utf16(profile: PlatformProfile) -> Callable[[str], int]:
    return lambda s: len(profile.render(s).encode("utf-16-le")) // 2


def _edge_cases() -> dict[str, str]:
    emoji = "👍🏽 " * 30 + "😀" * 50
    return {
        "emoji": f"{emoji}\n\n- {emoji}\n- 日本語 e\u0301 {emoji}",
        "escaping": "a < b && c > d <br> &amp; " * 40 + "\n\n| < | & |\n|---|---|\n| > | <b> |",
        "long word": "x" * 900 + " tail\n\n`" + "y" * 500 + "`",
        "nested lists": "\n".join(
            f"{i}. item {i} **bold**\n   - sub [link](https://x.org/{i})\n     1. deep `c`"
            for i in range(1, 40)
        ),
        "lists of two kinds": "- a\n- b\n\n* c\n* d\n\n1. e\n2. f\n\n1) g\n2) h\n\n+ i\n" * 20,
        "loose list": "\n\n".join(f"- item {i}\n\n  more of {i}" for i in range(60)),
        "code in items": "\n".join(
            f"- step {i}\n\n  ```sh\n  run {i} < in\n  ```" for i in range(40)
        ),
        "references": "See [the docs][d] and [x].\n\n"
        + "\n\n".join(f"Para {i} with [d] and [x][]." for i in range(80))
        + "\n\n[d]: https://x.org/docs\n[x]: https://x.org/x 'X'",
        "nested reference": "- [a] here\n- [a]: https://x.org/a\n\n" + "[a] text. " * 300,
        "indented definition": "[a] " * 200 + "\n\n  [a]: https://x.org/a",
        "quotes": "\n".join(f"> line {i} with *em*\n>\n> > inner {i}" for i in range(60)),
        "table with markup": "| a | b |\n|:-:|--:|\n"
        + "\n".join(f"| **{i}** [l](https://x.org/{i}) | `a\\|b` ~~s~~ |" for i in range(150)),
        "table in a list": "- | a | b |\n  |---|---|\n"
        + "\n".join(f"  | {i} | row {i} |" for i in range(200)),
        "ragged table": "| a | b | c |\n|---|---|---|\n"
        + "\n".join("| x |" if i % 3 else f"| {i} | y | z | extra |" for i in range(200)),
        "code fences": "~~~~python\n"
        + "```\n" * 3
        + "x = 1\n" * 300
        + "~~~~\n\n```\n"
        + "ab " * 900,
        "indented code": "text\n\n" + "\n".join(f"    line {i} ``` < &" for i in range(300)),
        "tilde inside backticks": "```\n" + "~~~\n" * 200 + "```",
        "fence like a table's head": "``` sh |\n" + "| x |\n|---|\n" * 200 + "```",
        "crlf": "para one\r\n\r\n- a\r\n- b\r\n\r\n" + "word " * 900,
        "headings and rules": "\n\n".join(f"## Part {i}\n\ntext {i}\n\n---" for i in range(80)),
        "spaces in blank lines": "- a\n  \n  b\n" * 100 + "\n   \n" + "para " * 200,
    }


ANSWERS = (
    {p.stem: p.read_text() for p in sorted(CORPUS.glob("*.md"))} | long_answers() | _edge_cases()
)


@dataclass(frozen=True)
class Case:
    """One split of an answer: at `limit`, measured by `profile`'s render in `unit`."""

    name: str
    profile: PlatformProfile
    limit: int
    unit: str  # "characters" as the outbox measures, or "utf16" as Telegram counts

    @property
    def key(self) -> str:
        return f"{self.name} | {self.profile.name} | {self.limit} | {self.unit}"

    @property
    def measure(self) -> Callable[[str], int]:
        return (in_utf16 if self.unit == "utf16" else in_characters)(self.profile)


def cases(name: str) -> list[Case]:
    """At each platform's limits (with buttons too), in characters; short answers also at
    small limits, and in UTF-16 units; the console's (unlimited) only for long answers."""
    short = len(ANSWERS[name]) < 5000
    out: list[Case] = []
    for profile in PROFILES:
        limits = {profile.limits.max_chars, profile.limits.max_chars_with_buttons or 300}
        for limit in sorted(limits | ({300, 1000} if short else set())):
            if limit < 100_000 or not short:
                out.append(Case(name, profile, limit, "characters"))
        if short:
            out.append(Case(name, profile, 300, "utf16"))
    return out

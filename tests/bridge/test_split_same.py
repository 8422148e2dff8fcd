"""The split reuses one parse of the answer, and gives exactly the chunks it gave when it parsed
every part it measured (`split_before`, the old code kept as the reference): for the corpus of
model answers, long answers and any markdown hypothesis makes, on every platform's renderer and
limit, measured in characters and in UTF-16 units (Telegram's count). Each parse the split
derives instead of parsing is checked against the parse itself as it is handed over."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from adapters.console.profile import CONSOLE
from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bench.markdown_bench import long_answers
from bridge import PlatformProfile
from bridge import markdown as md
from bridge.split import split
from tests.bridge.split_before import split as split_before

CORPUS = Path(__file__).parents[1] / "adapters/markdown_corpus"
PROFILES: list[PlatformProfile] = [TELEGRAM, SLACK, CONSOLE]
# markdown-it as it comes, to check the bridge's own tree and parser settings against.
STOCK = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
KNOWN = md.known


def _in_characters(profile: PlatformProfile) -> Callable[[str], int]:
    return lambda s: len(profile.render(s))


def _in_utf16(profile: PlatformProfile) -> Callable[[str], int]:
    return lambda s: len(profile.render(s).encode("utf-16-le")) // 2


@pytest.fixture(autouse=True)
def checked_parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every parse the split hands over is the real one."""
    real = md.known

    def known(markdown: str, blocks: tuple[md.Block, ...]) -> None:
        assert blocks == md.from_tree(md.tree(markdown).children), markdown
        for table in _tables(blocks):  # the cells as shown, which equality leaves out
            assert table.shown in ((), md.shown_rows(table.header, table.rows)), markdown
        real(markdown, blocks)

    monkeypatch.setattr(md, "known", known)
    md.RECENT.clear()
    yield
    md.RECENT.clear()


def _tables(blocks: tuple[md.Block, ...]) -> Iterator[md.Table]:
    for block in blocks:
        match block:
            case md.Table():
                yield block
            case md.Quote(blocks=inner):
                yield from _tables(inner)
            case md.ListBlock(items=items):
                for item in items:
                    yield from _tables(item)


def _same(markdown: str, limit: int, measure: Callable[[str], int]) -> None:
    md.RECENT.clear()
    chunks = split(markdown, limit, measure)
    md.RECENT.clear()  # the reference parses everything itself
    assert chunks == split_before(markdown, limit, measure)


@pytest.mark.parametrize("profile", [TELEGRAM, SLACK], ids=lambda p: p.name)
def test_a_long_table_is_parsed_once_to_be_split_and_sent(
    profile: PlatformProfile, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 20,000-character table split at the platform's limit and each chunk rendered, as the
    outbox does: one parse of the answer (it was some twenty, about a second of CPU)."""
    monkeypatch.setattr(md, "known", KNOWN)  # unchecked: the check parses
    parsed: list[int] = []
    parse = md.PARSER.parse

    def counted(source: str, env: dict[str, Any] | None = None) -> Any:
        parsed.append(len(source))
        return parse(source, env)

    monkeypatch.setattr(md.PARSER, "parse", counted)
    table = long_answers()["table 20k"]
    chunks = split(table, profile.limits.max_chars, _in_characters(profile))
    shown = [profile.render(chunk) for chunk in chunks]
    assert len(chunks) > 4 and all(len(s) <= profile.limits.max_chars for s in shown)
    assert parsed == [len(table)]


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


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_corpus_splits_as_before_on_every_platform(name: str) -> None:
    """At each platform's limits (with buttons too), in characters as the outbox measures;
    short answers also at small limits, and in UTF-16 units."""
    markdown = ANSWERS[name]
    short = len(markdown) < 5000
    for profile in PROFILES:
        limits = {profile.limits.max_chars, profile.limits.max_chars_with_buttons or 300}
        for limit in sorted(limits | ({300, 1000} if short else set())):
            if limit < 100_000 or not short:  # the console: only long answers
                _same(markdown, limit, _in_characters(profile))
        if short:
            _same(markdown, 300, _in_utf16(profile))


WORDS = st.sampled_from(
    [
        "word", "a<b", "&amp;", "x_y", "**bold**", "*it*", "_em_", "`co de`", "~~s~~", "a & b",
        "[link](https://x.org/a_(b))", "[rel](docs/a.md)", "![img](https://x.org/i.png)",
        "[r1]", "[text][r2]", "<https://x.org>", "😀", "👍🏽", "日本", "e\u0301", "<br>",
        "\\*", "|", "1.", "-", "#", ">", "```", "x" * 70, "https://example.com/" + "p" * 50,
        "===", "***", "a\tb", "\n", "\n    ", "\n> -", "[r1]:", "2)",
    ]
)  # fmt: skip
LINE = st.lists(WORDS, min_size=1, max_size=10).map(" ".join)
MARKERS = st.sampled_from(["-", "*", "+", "1.", "2.", "1)", "10."])


@st.composite
def _list(draw: st.DrawFn) -> str:
    marker = draw(MARKERS)
    items = []
    for line in draw(st.lists(LINE, min_size=1, max_size=8)):
        item = f"{marker} {line}"
        match draw(st.integers(0, 5)):
            case 0:
                item += f"\n  {draw(MARKERS)} {draw(LINE)}"
            case 1:
                item += f"\n\n   {draw(LINE)}"
            case 2:
                item += "\n   ```\n   code < 1\n   ```"
            case 3:
                item += f"\n   > {draw(LINE)}"
        items.append(item)
    return draw(st.sampled_from(["\n", "\n\n"])).join(items)


@st.composite
def _table(draw: st.DrawFn) -> str:
    columns = draw(st.integers(1, 4))
    aligns = draw(st.lists(st.sampled_from(["---", ":--", "--:", ":-:"]), min_size=columns))
    rows = draw(st.lists(st.lists(WORDS, min_size=1, max_size=columns + 1), max_size=15))
    lines = ["| " + " | ".join(f"h{i}" for i in range(columns)) + " |"]
    lines.append("|" + "|".join(aligns[:columns]) + "|")
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


@st.composite
def _code(draw: st.DrawFn) -> str:
    fence = draw(st.sampled_from(["```", "~~~", "````"]))
    body = "\n".join(draw(st.lists(st.one_of(LINE, st.just("```"), st.just("  ~~~")), max_size=20)))
    closed = draw(st.booleans())
    return f"{fence}{draw(st.sampled_from(['', 'python', 'sh x']))}\n{body}" + (
        f"\n{fence}" if closed else ""
    )


BLOCKS = st.one_of(
    st.lists(LINE, min_size=1, max_size=6).map("\n".join),
    _list(),
    _table(),
    _code(),
    st.lists(LINE, min_size=1, max_size=5).map(lambda ls: "\n".join(f"> {x}" for x in ls)),
    LINE.map(lambda x: f"## {x}"),
    st.sampled_from(
        [
            "---",
            "[r1]: https://x.org/r1",
            "[r2]: https://x.org/r2 'T'",
            "  [r1]: https://x.org/one",
            "- [r2]: https://x.org/two",
            "    indented code < 1",
            "   ",
            "para\r\nwith crlf",
        ]
    ),
)
DOCUMENTS = st.lists(
    st.tuples(BLOCKS, st.sampled_from(["\n", "\n\n", "\n\n\n", "\n  \n"])), max_size=8
).map(lambda blocks: "".join(b + sep for b, sep in blocks))


@settings(max_examples=150, suppress_health_check=list(HealthCheck))
@given(DOCUMENTS, st.integers(60, 700), st.sampled_from(PROFILES), st.booleans())
def test_any_markdown_splits_as_before(
    markdown: str, limit: int, profile: PlatformProfile, utf16: bool
) -> None:
    _same(markdown, limit, (_in_utf16 if utf16 else _in_characters)(profile))


def _stock(nodes: list[SyntaxTreeNode]) -> list[tuple[Any, ...]]:
    return [
        (
            n.type,
            n.tag,
            tuple(n.map or ()),
            n.markup,
            n.info,
            n.content,
            n.attrs,
            _stock(n.children),
        )
        for n in nodes
    ]


def _ours(nodes: list[md.Node]) -> list[tuple[Any, ...]]:
    return [
        (n.type, n.tag, tuple(n.map or ()), n.markup, n.info, n.content, n.attrs, _ours(n.children))
        for n in nodes
    ]


@settings(max_examples=200, suppress_health_check=list(HealthCheck))
@given(DOCUMENTS)
def test_the_bridge_parses_as_markdown_it_does(markdown: str) -> None:
    """The tree (built without `SyntaxTreeNode`) and the parser (plain text taken as text at
    once, the HTML rules off) as markdown-it's own."""
    assert _ours(md.tree(markdown).children) == _stock(
        SyntaxTreeNode(STOCK.parse(markdown)).children
    )

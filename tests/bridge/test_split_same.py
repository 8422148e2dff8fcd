"""The split reuses one parse of the answer, and gives exactly the chunks it gave when it parsed
every part it measured (`split_before`, the old code kept as the reference): for the corpus of
model answers, long answers and any markdown hypothesis makes, on every platform's renderer and
limit, measured in characters and in UTF-16 units (Telegram's count). Each parse the split
derives instead of parsing is checked against the parse itself as it is handed over.

The reference's chunks for the corpus are kept as digests (`split_expected.json`, written from
the reference by `python -m tests.bridge.split_expected`); the reference is run only where the
split's chunks are not those, to show how they differ. Hypothesis's documents, small, are
split by the reference each time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.tree import SyntaxTreeNode

from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bench.markdown_bench import long_answers
from bridge import markdown as md
from bridge.platform import PlatformProfile
from bridge.split import split
from tests.bridge import split_expected
from tests.bridge.split_before import split as split_before
from tests.bridge.split_corpus import ANSWERS, PROFILES, cases, in_characters, in_utf16

# markdown-it as it comes, to check the bridge's own tree and parser settings against.
STOCK = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
KNOWN = md.known
EXPECTED = split_expected.expected()


@pytest.fixture(autouse=True)
def checked_parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every parse the split hands over is the real one."""
    real = md.known
    parses: dict[str, tuple[md.Block, ...]] = {}  # a part handed over again is parsed once

    def known(markdown: str, blocks: tuple[md.Block, ...]) -> None:
        if markdown not in parses:
            parses[markdown] = md.from_tree(md.tree(markdown).children)
        assert blocks == parses[markdown], markdown
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
    chunks = split(table, profile.limits.max_chars, in_characters(profile))
    shown = [profile.render(chunk) for chunk in chunks]
    assert len(chunks) > 4 and all(len(s) <= profile.limits.max_chars for s in shown)
    assert parsed == [len(table)]


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_the_corpus_splits_as_before_on_every_platform(name: str) -> None:
    """At each platform's limits (with buttons too), in characters as the outbox measures;
    short answers also at small limits, and in UTF-16 units (`split_corpus.cases`)."""
    markdown = ANSWERS[name]
    for case in cases(name):
        md.RECENT.clear()
        chunks = split(markdown, case.limit, case.measure)
        if split_expected.digest(chunks) != EXPECTED.get(case.key):
            assert chunks == split_expected.reference(markdown, case), case.key
            pytest.fail(
                f"{case.key}: the reference's chunks are not those {split_expected.FILE.name} keeps"
                f" (the corpus or a render changed?); regenerate it: {split_expected.REGENERATE}"
            )


def test_the_kept_digests_are_the_corpus_cases() -> None:
    """No digest is kept for a case the corpus no longer has (it would go unnoticed)."""
    assert sorted(EXPECTED) == sorted(case.key for name in ANSWERS for case in cases(name))


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
    _same(markdown, limit, (in_utf16 if utf16 else in_characters)(profile))


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

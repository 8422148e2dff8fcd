"""Markdown as each platform shows it: the constructs one by one, and for any text at all,
HTML that Telegram's parser (the fake's) takes and mrkdwn with every control character
escaped, in chunks that fit."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.slack.platform import SLACK
from adapters.telegram.platform import TELEGRAM
from bridge.split import split
from tests.fakes.telegram_html import parse

ZWSP = "\u200b"


def test_telegram_html_for_each_construct() -> None:
    assert (
        TELEGRAM.render("# Title with `code`\n\nText")
        == "<b>Title with <code>code</code></b>\n\nText"
    )
    assert TELEGRAM.render("## **Summary**") == "<b>Summary</b>"
    assert TELEGRAM.render("*it* **b** ~~s~~ ***both***") == (
        "<i>it</i> <b>b</b> <s>s</s> <i><b>both</b></i>"
    )
    assert TELEGRAM.render("```python\nif a < b:\n    pass\n```") == (
        '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>'
    )
    assert TELEGRAM.render("```\nplain & simple\n```") == "<pre>plain &amp; simple</pre>"
    assert TELEGRAM.render("- a\n  1. b\n     - c\n- d") == "• a\n  1. b\n     • c\n• d"
    assert TELEGRAM.render("3. three\n4. four") == "3. three\n4. four"
    assert TELEGRAM.render("> quoted **bold**\n> > inner") == (
        "<blockquote>quoted <b>bold</b>\n\ninner</blockquote>"
    )
    assert TELEGRAM.render("[f (x)](https://en.wikipedia.org/wiki/F_(x))") == (
        '<a href="https://en.wikipedia.org/wiki/F_(x)">f (x)</a>'
    )
    assert TELEGRAM.render("[guide](docs/guide.md)") == "guide (docs/guide.md)"
    assert TELEGRAM.render("![a chart](https://x.org/c.png)") == (
        '<a href="https://x.org/c.png">a chart</a>'
    )
    assert TELEGRAM.render("a\n\n---\n\nb") == "a\n\n" + "\u2500" * 12 + "\n\nb"
    assert TELEGRAM.render("one  \ntwo\nthree") == "one\ntwo\nthree"
    assert TELEGRAM.render('<b onclick="x">hi</b> & <br>') == (
        '&lt;b onclick="x"&gt;hi&lt;/b&gt; &amp; &lt;br&gt;'
    )


def test_a_table_is_aligned_in_monospace() -> None:
    table = "| name | n |\n|:--|--:|\n| `a|b` | 1 |\n| longer name | 100 |"
    assert TELEGRAM.render(table.replace("`a|b`", "`a\\|b`")) == (
        "<pre>name        |   n\n------------+----\na|b         |   1\nlonger name | 100</pre>"
    )
    assert SLACK.render("| a | b |\n|---|---|\n| 日本 | x |") == (
        "```\na    | b\n-----+--\n日本 | x\n```"
    )


def test_slack_mrkdwn_for_each_construct() -> None:
    assert SLACK.render("# Title\n\n*it* **b** ~~s~~") == "*Title*\n\n_it_ *b* ~s~"
    assert SLACK.render("## **Summary** of *it*") == "*Summary of _it_*", "no bold in bold"
    assert SLACK.render("```js\nif (a < b && c) {}\n```") == (
        "```\nif (a &lt; b &amp;&amp; c) {}\n```"
    )
    assert SLACK.render("- a\n  - b\n1. c") == "• a\n  • b\n\n1. c"
    assert SLACK.render("> quote\n> > inner") == "> quote\n>\n> inner"
    assert SLACK.render("[f (x)](https://x.org/F_(x)?a=1&b=2)") == (
        "<https://x.org/F_(x)?a=1&b=2|f (x)>"
    )
    assert SLACK.render("[guide](docs/guide.md) <not a tag>") == (
        "guide (docs/guide.md) &lt;not a tag&gt;"
    )


def test_slack_markers_show_inside_words_and_next_to_punctuation() -> None:
    assert SLACK.render("snake**case**word") == f"snake{ZWSP}*case*{ZWSP}word"
    assert SLACK.render("(**bold**), **bold**.") == "(*bold*), *bold*."
    assert SLACK.render("user_id and 2 * 3 * 4") == "user_id and 2 * 3 * 4"
    assert SLACK.render("`` a`b ``") == "a`b", "mrkdwn code cannot hold a backtick: text"
    assert SLACK.render("**two\nlines**") == "*two*\n*lines*", "a span cannot cross a line"
    assert SLACK.render("````\n```\n````") == f"```\n``{ZWSP}`\n```"


PIECES = ["\n\n", "```", "~~~", "http://x.org/a_(b)", "1. ", "- ", "| a | b |\n|---|---|\n", "😀"]
MARKDOWNISH = st.lists(
    st.sampled_from(list("*_`~[]()<>&|#-+!.:\\\n >ab") + PIECES) | st.characters(codec="utf-8"),
    max_size=120,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH)
def test_any_text_renders_to_html_telegram_takes(text: str) -> None:
    parse(TELEGRAM.render(text))


@settings(max_examples=300, deadline=None)
@given(MARKDOWNISH)
def test_any_text_renders_to_mrkdwn_with_its_controls_escaped(text: str) -> None:
    shown = re.sub(r"<[a-z]+:[^<>|\s]+\|[^<>]*>", "", SLACK.render(text))  # links
    shown = re.sub(r"(?m)^>", "", shown)  # quotes
    assert "<" not in shown and ">" not in shown
    assert not re.search(r"&(?!amp;|lt;|gt;)", shown)


@settings(max_examples=150, deadline=None)
@given(MARKDOWNISH)
def test_any_text_splits_into_chunks_that_each_render_valid_and_fit(text: str) -> None:
    measure = lambda s: len(TELEGRAM.render(s))  # noqa: E731
    for chunk in split(text, 120, measure):
        assert measure(chunk) <= 120
        parse(TELEGRAM.render(chunk))


def test_markdown_that_would_show_nothing_is_sent_as_written() -> None:
    """Only a link definition: an empty message would be refused, the source is sent."""
    assert TELEGRAM.render("[docs]: https://x.org/?a=1&b=2") == (
        "[docs]: https://x.org/?a=1&amp;b=2"
    )
    assert SLACK.render("[docs]: https://x.org/<x>") == "[docs]: https://x.org/&lt;x&gt;"


def test_a_quote_inside_a_list_item_shows_its_marker_escaped() -> None:
    """Found by the property above: `1. >` rendered a bare `>` that Slack does not quote."""
    assert SLACK.render("1. >") == "1. &gt;"
    assert SLACK.render("- a\n  > said") == "• a\n  &gt; said"

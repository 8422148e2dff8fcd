"""markdown-it as the bridge reads markdown: CommonMark with GitHub's tables and strikethrough,
HTML never markup, and its parse as a tree of nodes (`tree`) with their source line maps."""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

PARSER = (
    MarkdownIt("commonmark", {"html": False})
    .enable(["table", "strikethrough"])
    .disable(["html_block", "html_inline"])  # they find nothing when "html" is off
)


def _inline(state: StateCore) -> None:
    """markdown-it's "inline" rule, but text no inline rule can start in (no character that
    ends its "text" rule) is one text token at once, as the inline parser makes it: a table's
    cells are mostly such text, and parsing each costs more than the rest of its row."""
    stops = state.md.inline.terminator_re
    for token in state.tokens:
        if token.type != "inline":
            continue
        if token.children is None:
            token.children = []
        if token.content and stops.search(token.content) is None:
            token.children.append(Token("text", "", 0, content=token.content))
        else:
            state.md.inline.parse(token.content, state.md, state.env, token.children)


PARSER.core.ruler.at("inline", _inline)


class Node:
    """A node of markdown-it's parse, as its `SyntaxTreeNode` has it (the attributes read
    here), built in one pass over the tokens: a few times cheaper, and with no link back to
    its parent (a tree without cycles is freed as soon as it is dropped, not by a garbage
    collection that walks the whole heap)."""

    __slots__ = ("attrs", "children", "content", "info", "map", "markup", "tag", "type")

    def __init__(self, token: Token) -> None:
        self.children: list[Node] = []
        # An opening token names its node without the suffix: "bullet_list_open", "bullet_list".
        self.type = token.type[:-5] if token.nesting == 1 else token.type
        self.tag, self.map, self.markup = token.tag, token.map, token.markup
        self.info, self.content, self.attrs = token.info, token.content, token.attrs


def tree(markdown: str, env: dict[str, object] | None = None) -> Node:
    """markdown-it's parse as a tree, with source line maps (for splitting); `env` gets the
    link reference definitions (`references`)."""
    root = Node(Token("root", "", 0))
    root.children = _nodes(PARSER.parse(markdown, env))
    return root


def _nodes(tokens: list[Token]) -> list[Node]:
    top: list[Node] = []
    stack = [top]
    for token in tokens:
        if token.nesting == -1:
            stack.pop()
            continue
        node = Node(token)
        stack[-1].append(node)
        if token.nesting == 1:
            stack.append(node.children)
        elif token.children:
            node.children = _nodes(token.children)
    return top

"""The names MCP tools are offered under: within the Anthropic API's pattern, each once."""

from __future__ import annotations

import re

import mcp_types as types

from runtime.tools.mcp import McpServerSpec, McpTools, offered_name


def test_names_fit_the_api_and_a_cut_or_changed_one_keeps_them_apart() -> None:
    long_a, long_b = "x" * 70 + "a", "x" * 70 + "b"
    names = [offered_name("fs", "read"), offered_name("fs", long_a), offered_name("fs", long_b)]
    names.append(offered_name("fs", "read.file"))
    assert names[0] == "fs__read"
    assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", n) for n in names), names
    assert len(set(names)) == len(names)


def test_a_tool_named_twice_in_an_agents_list_is_offered_once() -> None:
    tools = McpTools([McpServerSpec("fs", command="fs-server")])
    schema = {"type": "object"}
    tools.servers["fs"].tools = {
        n: types.Tool(name=n, input_schema=schema) for n in ("read", "write")
    }
    assert tools.expand(["sleep", "fs.*", "fs.read", "fs.nothing"]) == [
        "sleep",
        "fs__read",
        "fs__write",
    ]

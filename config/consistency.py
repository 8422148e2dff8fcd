"""Rules that hold between a file's parts: ids defined once, references that resolve, names
that do not shadow one another. One check per rule; each raises every problem it finds at
once (`config/problems.py`), where in the model it is, and what would fix it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from config.mcp import McpServerConfig, mcp_reference
from config.platform_sections import sections
from config.problems import Problem, did_you_mean, raise_all


def first_twice(names: Iterable[str]) -> str | None:
    """The first (sorted) name that occurs more than once, or None."""
    twice = all_twice(names)
    return twice[0] if twice else None


def all_twice(names: Iterable[str]) -> list[str]:
    """Every name that occurs more than once, sorted."""
    return sorted(name for name, n in Counter(names).items() if n > 1)


def check_defined_once(kinds: Iterable[tuple[str, Iterable[str]]]) -> None:
    """Each kind's ids (agents, operators, tools, ...) are defined once."""
    raise_all(
        [
            f"{kind} id {twice!r} is defined twice; give each {kind} an id of its own"
            for kind, ids in kinds
            for twice in all_twice(ids)
        ]
    )


def check_default_agent(default_agent: str, agent_ids: list[str]) -> None:
    if default_agent not in agent_ids:
        raise_all(
            [
                Problem(
                    f"{default_agent!r} is not one of the agents: {agent_ids}"
                    f"{did_you_mean(default_agent, agent_ids)}",
                    ("default_agent",),
                )
            ]
        )


def check_one_primary(primaries: Sequence[str]) -> None:
    """`primaries`: the ids of the operators marked primary."""
    if len(primaries) != 1:
        raise_all(
            [
                Problem(
                    f"exactly one operator must have primary = true (found {len(primaries)}"
                    f"{': ' + ', '.join(primaries) if primaries else ''})",
                    ("operators",),
                )
            ]
        )


def check_tool_names(
    tool_names: Sequence[str], servers: Iterable[str], builtins: Iterable[str]
) -> None:
    """A defined tool takes neither an MCP tool's offered name (`server__tool`) nor a built-in's."""
    prefixes = tuple(f"{server}__" for server in servers)
    found: list[Problem | str] = [
        Problem(f"{name!r} has the name an MCP server's tool is offered as; rename it", where)
        for i, name in enumerate(tool_names)
        if name.startswith(prefixes)
        for where in [("tools", i, "name")]
    ]
    found += [
        Problem(f"{name!r} has the name of a built-in tool; rename it", ("tools", i, "name"))
        for i, name in enumerate(tool_names)
        if name in set(builtins)
    ]
    raise_all(found)


def check_agent_tools(
    agent_tools: Mapping[str, Sequence[str]],
    known: set[str],
    servers: dict[str, McpServerConfig],
) -> None:
    """Every tool an agent lists (by agent id) is defined, built in, or an MCP tool of a
    server the workspace names."""
    found: list[Problem | str] = []
    for i, (agent, tools) in enumerate(agent_tools.items()):
        where = ("agents", i, "tools")
        for name in tools:
            problem = mcp_reference(name, servers)
            if problem is not None:
                found.append(Problem(f"agent {agent!r}: tool {name!r} {problem}", where))
            elif name not in known and "." not in name:
                found.append(
                    Problem(
                        f"agent {agent!r} lists unknown tool {name!r}{did_you_mean(name, known)};"
                        f" define it under [[workspaces.tools]] or use one of {sorted(known)}",
                        where,
                    )
                )
    raise_all(found)


def check_not_shared(tools: Iterable[str], servers: Iterable[str]) -> None:
    """A tool or an MCP server is named in one workspace only."""
    raise_all(
        [f"tool {tool!r} is defined in two workspaces; rename one" for tool in all_twice(tools)]
        + [
            f"MCP server {server!r} is named in two workspaces; rename one"
            for server in all_twice(servers)
        ]
    )


def check_admin_tokens(tokens: Sequence[str]) -> None:
    if len(tokens) != len(set(tokens)):
        raise ValueError("two admins have the same token; give each admin their own")


def check_console(operator: str | None, operator_ids: list[str]) -> None:
    """The terminal console's operator is one of the workspace's operators."""
    if operator is not None and operator not in operator_ids:
        raise_all(
            [
                Problem(
                    f"{operator!r} is not an operator: {operator_ids}"
                    f"{did_you_mean(operator, operator_ids)}",
                    ("console", "operator"),
                )
            ]
        )


def check_some_place(present: Mapping[str, object], console: bool) -> None:
    """A workspace is reached somewhere: a platform's section or the terminal console."""
    if not (present or console):
        named = [f"[{s.name}]" for s in sections()]
        raise ValueError(f"the workspace has no {', '.join(named)} or [console] section")

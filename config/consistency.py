"""Rules that hold between a file's parts: ids defined once, references that resolve, names
that do not shadow one another. One check per rule; the models call them in the order the
admin reads the errors (the first rule broken is the one reported)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from config.mcp import McpServerConfig, mcp_reference


def first_twice(names: Iterable[str]) -> str | None:
    """The first (sorted) name that occurs more than once, or None."""
    twice = sorted(name for name, n in Counter(names).items() if n > 1)
    return twice[0] if twice else None


def check_defined_once(kinds: Iterable[tuple[str, Iterable[str]]]) -> None:
    """Each kind's ids (agents, operators, tools, ...) are defined once."""
    for kind, ids in kinds:
        twice = first_twice(ids)
        if twice is not None:
            raise ValueError(f"{kind} id {twice!r} is defined twice")


def check_default_agent(default_agent: str, agent_ids: list[str]) -> None:
    if default_agent not in agent_ids:
        raise ValueError(f"default_agent {default_agent!r} is not one of the agents: {agent_ids}")


def check_one_primary(primaries: Sequence[str]) -> None:
    """`primaries`: the ids of the operators marked primary."""
    if len(primaries) != 1:
        raise ValueError(f"exactly one operator must have primary = true (found {len(primaries)})")


def check_tool_names(
    tool_names: Sequence[str], servers: Iterable[str], builtins: Iterable[str]
) -> None:
    """A defined tool takes neither an MCP tool's offered name (`server__tool`) nor a built-in's."""
    prefixes = tuple(f"{server}__" for server in servers)
    for name in tool_names:
        if name.startswith(prefixes):
            raise ValueError(
                f"tool {name!r} has the name an MCP server's tool is offered as; rename it"
            )
    clash = sorted(set(tool_names) & set(builtins))
    if clash:
        raise ValueError(f"tool {clash[0]!r} has the name of a built-in tool")


def check_agent_tools(
    agent_tools: Mapping[str, Sequence[str]],
    known: set[str],
    servers: dict[str, McpServerConfig],
) -> None:
    """Every tool an agent lists (by agent id) is defined, built in, or an MCP tool of a
    server the workspace names."""
    for agent, tools in agent_tools.items():
        for name in tools:
            problem = mcp_reference(name, servers)
            if problem is not None:
                raise ValueError(f"agent {agent!r}: tool {name!r} {problem}")
        missing = [t for t in tools if t not in known and "." not in t]
        if missing:
            raise ValueError(
                f"agent {agent!r} lists unknown tool {missing[0]!r}; define it under "
                f"[[workspaces.tools]] or use one of {sorted(known)}"
            )


def check_not_shared(tools: Iterable[str], servers: Iterable[str]) -> None:
    """A tool or an MCP server is named in one workspace only."""
    tool = first_twice(tools)
    if tool is not None:
        raise ValueError(f"tool {tool!r} is defined in two workspaces; rename one")
    server = first_twice(servers)
    if server is not None:
        raise ValueError(f"MCP server {server!r} is named in two workspaces; rename one")


def check_admin_tokens(tokens: Sequence[str]) -> None:
    if len(tokens) != len(set(tokens)):
        raise ValueError("two admins have the same token; give each admin their own")

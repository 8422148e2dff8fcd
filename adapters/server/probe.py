"""`switchboard check-config --probe`: after the file is valid, what it names is tried for
real; one line per check, and whether all passed. Today: each MCP server is started (or
reached), initialized and asked for its tools."""

from __future__ import annotations

import asyncio

from adapters.server.assembly import mcp_servers
from config.schema import SwitchboardConfig
from runtime.tools.mcp import McpServer


async def probe(config: SwitchboardConfig) -> tuple[list[str], bool]:
    where = {m.name: (w.id, i) for w in config.workspaces for i, m in enumerate(w.mcp_servers)}
    servers = [McpServer(spec) for spec in mcp_servers(config)]
    await asyncio.gather(*(s.start() for s in servers))
    lines, ok = [], True
    secrets = sorted(config.secret_values(), key=len, reverse=True)
    for server in servers:
        workspace, index = where[server.spec.name]
        key = f"workspace {workspace}: mcp_servers[{index}] ({server.spec.name})"
        if server.connected:
            names = ", ".join(sorted(server.tools)) or "no tools"
            lines.append(f"ok    {key}: {len(server.tools)} tool(s): {names}")
        else:
            ok = False
            error = str(server.error)
            for secret in secrets:  # an HTTP error quotes the URL, a token in it included
                error = error.replace(secret, "[redacted]")
            lines.append(f"FAIL  {key}: {error}")
    await asyncio.gather(*(s.stop() for s in servers))
    if not servers:
        lines.append("nothing to probe (no MCP servers configured)")
    return lines, ok

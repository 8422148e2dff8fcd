"""Bugs, forced: Python loads this module at the start of any process whose PYTHONPATH holds
this folder. With SB_TEST_CRASHING_SLEEP set, the `sleep` tool raises when asked to sleep 0
seconds, and its error quotes the model key of the environment (a secret the log must mask),
so a test reads how a crash shows in the log of a real `switchboard run`. More below, each
under its own variable."""

from __future__ import annotations

import os
from typing import Any

if os.environ.get("SB_TEST_CRASHING_SLEEP"):
    from runtime.tools import builtins

    sleep = builtins.Sleep.run

    async def crashing(self: builtins.Sleep, tool_input: dict[str, Any], ctx: Any) -> Any:
        if float(tool_input["seconds"]) == 0:
            key = os.environ.get("ANTHROPIC_API_KEY", "")
            raise RuntimeError(f"forced for the test: the sleep tool broke, holding {key}")
        return await sleep(self, tool_input, ctx)

    builtins.Sleep.run = crashing  # type: ignore[method-assign]

# With SB_TEST_OUTBOX_FAILS_TO_STOP set, the bridge's outbox stops and then raises, as a bug
# in its stop would: the parts after it must stop all the same.
if os.environ.get("SB_TEST_OUTBOX_FAILS_TO_STOP"):
    import contextlib
    from collections.abc import AsyncIterator

    from bridge import outbox

    delivering = outbox.Outbox.delivering

    @contextlib.asynccontextmanager
    async def failing(self: outbox.Outbox) -> AsyncIterator[None]:
        async with delivering(self):
            yield
        raise RuntimeError("forced for the test: the outbox failed to stop")

    outbox.Outbox.delivering = failing  # type: ignore[method-assign]

# With SB_TEST_DOORS_FAIL_WHILE naming a file, a door process started while that file exists
# exits at once with status 3, before it listens: a door process that crashes at start.
if os.environ.get("SB_TEST_DOORS_FAIL_WHILE"):
    import sys
    from pathlib import Path

    from adapters.doors import process

    serve_doors = process.main

    def failing_at_start(argv: list[str] | None = None) -> int:
        if Path(os.environ["SB_TEST_DOORS_FAIL_WHILE"]).exists():
            print("forced for the test: the door process failed at start", file=sys.stderr)
            return 3
        return serve_doors(argv)

    process.main = failing_at_start

"""The door process imports what its doors check and store with, and nothing that only the main
process runs: every `switchboard run` starts one (and starts it again after a crash), and what
it imports is CPU spent before its first acknowledgement. It checks requests and stores them in
the inbox; the bridge, the runtime, the config's models and the SDKs are the main process's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from adapters.doors.registry import kinds
from adapters.platforms import platforms

ROOT = Path(__file__).resolve().parents[3]

NOT_FOR_THE_DOOR = (
    "bridge.service",  # the bridge
    "runtime.engine",  # the runtime
    "config.schema",  # the config's models: the door gets its keys as JSON
    "anthropic",  # the model SDKs
    "openai",
    "telegram",  # the platforms' SDKs their bots run with (python-telegram-bot)
)


def _door_process(code: str) -> object:
    """What `code` prints (JSON), run where the door process runs: a fresh interpreter that
    imports the door process's code (`adapters/doors/zygote.py`)."""
    done = subprocess.run(
        [sys.executable, "-c", f"import adapters.doors.process, json, sys\n{code}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_door_process_imports_nothing_only_the_main_process_runs() -> None:
    imported = _door_process("print(json.dumps(sorted(sys.modules)))")
    assert isinstance(imported, list)
    loaded = [
        name
        for name in NOT_FOR_THE_DOOR
        if any(m == name or m.startswith(f"{name}.") for m in imported)
    ]
    assert loaded == [], f"the door process imports {loaded}"


def test_the_door_process_serves_every_platform_s_door() -> None:
    """It lists the platforms' doors without their platforms (`adapters/doors/registry.py`):
    each platform of `adapters/platforms.py` has its door there, in the same order."""
    served = _door_process(
        "from adapters.doors.registry import kinds\n"
        "print(json.dumps([kind.platform for kind in kinds()]))"
    )
    registered = [platform.door.platform for platform in platforms()]
    assert served == [*registered, "hooks"]
    assert [kind.platform for kind in kinds()] == served  # with the platforms loaded

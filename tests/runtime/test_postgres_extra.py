"""A config naming PostgreSQL where the `[postgres]` extra is not installed: the command stops
saying how to install it, not with a traceback about a missing module."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.adapters.cli_process import ROOT, SCRIPT

DEFAULT = (ROOT / "config/switchboard.toml").read_text()
URL = "postgresql://switchboard@127.0.0.1:1/switchboard"


@pytest.mark.parametrize("command", ["run", "status"])
def test_postgresql_without_the_extra_names_the_install(tmp_path: Path, command: str) -> None:
    config = tmp_path / "switchboard.toml"
    config.write_text(DEFAULT.replace('path = "var/switchboard.db"', f'url = "{URL}"'))
    # psycopg as a process sees it when the extra is not installed: no such module.
    (tmp_path / "without").mkdir()
    for name in ("psycopg", "psycopg_pool"):
        (tmp_path / "without" / f"{name}.py").write_text(
            f"raise ModuleNotFoundError({f'No module named {name!r}'!r}, name={name!r})\n"
        )
    result = subprocess.run(
        [SCRIPT, command, "--config", config],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "without")},
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert "PostgreSQL support is not installed" in result.stderr
    assert "pip install 'switchboard[postgres]'" in result.stderr

"""`switchboard run` on a fresh folder, with the door process and inline: the files it makes
(the database and its -wal and -shm, the inbox and its, the log file) are the user's alone,
mode 0600, under a umask that would let every user of the machine read them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.adapters.doors.test_door_process import run
from tests.config_file import workspace, write_config
from tests.fakes.telegram_api import FakeTelegram


@pytest.mark.parametrize("intake", ["process", "inline"])
async def test_the_files_run_makes_are_readable_by_its_user_alone(
    tmp_path: Path, telegram_api: FakeTelegram, intake: str
) -> None:
    folder = tmp_path / "fresh"  # nothing there yet: run makes the folders too
    bot = {
        "bot_token": telegram_api.token,
        "api_base_url": telegram_api.base_url,
        "mode": "webhook",
        "webhook_secret": "tg-webhook-secret",
        "chats": [-100],
    }
    acme = workspace("acme", [{"id": "alice", "primary": True}], telegram=bot)
    config = write_config(
        tmp_path / "switchboard.toml",
        db=folder / "var" / "sb.db",
        public_url="https://bot.example.com",
        workspaces=[acme],
        logging={"file": str(folder / "logs" / "switchboard.log")},
        server={"intake": intake},
    )
    umask = os.umask(0o022)  # as most machines have it: files readable by all
    try:
        server = await run(config, "sb")
    finally:
        os.umask(umask)
    try:
        made = sorted(p for p in folder.rglob("*") if p.is_file())
        names = [p.name for p in made]
        for name in ("sb.db", "sb.db-wal", "sb.db-shm", "sb.db.inbox", "switchboard.log"):
            assert name in names, names
        modes = {p.name: oct(stat.S_IMODE(p.stat().st_mode)) for p in made}
        assert set(modes.values()) == {"0o600"}, [m for m in modes.items() if m[1] != "0o600"]
    finally:
        await server.stop()

"""The `[retention]` table: defaults, the off switch, and a dedupe window too short for the
platforms' retries refused with the key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import ConfigError
from config.loading import parse

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = (ROOT / "config/switchboard.toml").read_text()
SOURCE = Path("switchboard.toml")


def with_retention(table: str) -> str:
    return f"{DEFAULT}\n[retention]\n{table}\n"


def test_retention_is_on_by_default_and_zero_keeps_forever() -> None:
    retention = parse(DEFAULT, SOURCE, {}).retention
    assert retention.interval_s > 0 and retention.dedupe_days >= 1
    off = parse(with_retention("dedupe_days = 0\nevents_days = 0\ninterval_s = 0"), SOURCE, {})
    assert (off.retention.dedupe_days, off.retention.interval_s) == (0, 0)


@pytest.mark.parametrize("days", ["0.5", "0.04"])
def test_a_dedupe_window_shorter_than_the_platforms_retries_is_refused(days: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse(with_retention(f"dedupe_days = {days}"), SOURCE, {})
    message = str(caught.value)
    assert "  - retention.dedupe_days: dedupe_days must be at least 1 (Telegram" in message
    assert "or 0 to keep every platform id forever" in message


def test_an_unknown_retention_key_is_an_error() -> None:
    with pytest.raises(ConfigError, match=r"retention\.deliverd_days: unknown key"):
        parse(with_retention("deliverd_days = 3"), SOURCE, {})

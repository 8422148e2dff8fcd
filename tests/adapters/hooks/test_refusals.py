"""The refusals' rate limit (`adapters/hooks/refusals.py`), on an injected clock: one line per
client and reason a minute, the next one saying how many were not logged; a flood from many
clients shares lines past the clients it remembers; every refusal is counted."""

from __future__ import annotations

import logging

import pytest

from adapters.hooks import refusals
from adapters.hooks.refusals import BAD_SIGNATURE, UNKNOWN_TRIGGER, Refusals


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, int]]:
    return [
        (r.__dict__["client"], r.__dict__["reason"], r.__dict__["suppressed"])
        for r in caplog.records
        if r.getMessage() == "hook refused"
    ]


def test_one_line_per_client_and_reason_a_minute_with_the_count_not_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)
    clock = Clock()
    refused = Refusals(clock)
    for _ in range(50):
        refused.refused("203.0.113.7", BAD_SIGNATURE, {}, logging.WARNING)
        refused.refused("203.0.113.7", UNKNOWN_TRIGGER, {}, logging.INFO)
        refused.refused("198.51.100.2", BAD_SIGNATURE, {}, logging.WARNING)
    clock.now += 59
    refused.refused("203.0.113.7", BAD_SIGNATURE, {}, logging.WARNING)
    assert lines(caplog) == [
        ("203.0.113.7", BAD_SIGNATURE, 0),
        ("203.0.113.7", UNKNOWN_TRIGGER, 0),
        ("198.51.100.2", BAD_SIGNATURE, 0),
    ]
    clock.now += 1
    refused.refused("203.0.113.7", BAD_SIGNATURE, {}, logging.WARNING)
    assert lines(caplog)[-1] == ("203.0.113.7", BAD_SIGNATURE, 50), "49 + 1 not logged"
    assert refused.counts[BAD_SIGNATURE] == 102 and refused.counts[UNKNOWN_TRIGGER] == 50


def test_a_flood_from_many_clients_is_bounded_in_lines_and_memory(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    caplog.set_level(logging.INFO)
    monkeypatch.setattr(refusals, "MAX_CLIENTS", 10)
    refused = Refusals(Clock())
    for n in range(1000):
        refused.refused(f"2001:db8::{n:x}", BAD_SIGNATURE, {}, logging.WARNING)
    assert len(lines(caplog)) == 11, "ten clients remembered, then one line for the others"
    assert lines(caplog)[-1][0] == "others"
    assert len(refused._logged) == 11
    assert refused.counts[BAD_SIGNATURE] == 1000

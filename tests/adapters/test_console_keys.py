"""Ctrl-C in the terminal chat, every case (the real terminal walks the common ones in
test_terminal.py): a second press on an empty line quits only within a few seconds of the
first, which the terminal test cannot wait out."""

from __future__ import annotations

import pytest

from adapters.console.keys import AGAIN_WITHIN_S, AtCtrlC, Verdict, on_ctrl_c


@pytest.mark.parametrize(
    ("chat", "verdict"),
    [
        (AtCtrlC("run_1", None, "", None, 100.0), Verdict.STOP_TURN),
        (AtCtrlC("run_1", None, "half a line", 99.0, 100.0), Verdict.STOP_TURN),
        (AtCtrlC("run_1", "run_1", "", None, 100.0), Verdict.QUIT),  # it still runs: now
        (AtCtrlC("run_2", "run_1", "", None, 100.0), Verdict.STOP_TURN),  # a later turn
        (AtCtrlC(None, "run_1", "half a line", None, 100.0), Verdict.CLEAR_LINE),
        (AtCtrlC(None, None, "half a line", 99.0, 100.0), Verdict.CLEAR_LINE),
        (AtCtrlC(None, None, "", None, 100.0), Verdict.WARN),
        (AtCtrlC(None, None, "", 100.0 - AGAIN_WITHIN_S, 100.0), Verdict.QUIT),
        (AtCtrlC(None, None, "", 100.0 - AGAIN_WITHIN_S - 0.1, 100.0), Verdict.WARN),
    ],
)
def test_what_ctrl_c_does(chat: AtCtrlC, verdict: Verdict) -> None:
    assert on_ctrl_c(chat) is verdict

"""A refused config edit as the console shows it: the config's problems in the admin's words
(no file name, key path or line number), each tied to the form field it is about, and a
problem of the whole schedule tied to the first field its words name."""

from __future__ import annotations

from adapters.admin.config_form import located
from adapters.admin.schedule_form import refusal

REPORT = """/srv/switchboard/switchboard.toml: 3 problem(s):
  - workspaces[0].schedules[1].cron ("acme", "tick"), line 46: cron '61 * * * *' is not valid
  - workspaces[0].schedules[1] ("acme", "tick"): schedule 'tick' has every = "2h" (line 47)
  - workspaces[0].schedules[0] ("acme", "pulse"), line 40: unknown timezone 'Mars/Olympus'"""


def test_each_problem_is_told_in_words_and_tied_to_its_field() -> None:
    refused = refusal(REPORT, "tick")
    assert refused.fields == {
        "cron": "cron '61 * * * *' is not valid",
        "every": "schedule 'tick' has every = \"2h\"",
    }
    assert refused.problems == [
        "Cron: cron '61 * * * *' is not valid",
        "Every: schedule 'tick' has every = \"2h\"",
        "unknown timezone 'Mars/Olympus'",  # another schedule's: said, not tied to a field
    ]
    said = " ".join(refused.problems)
    assert "workspaces[" not in said and "line" not in said and ".toml" not in said


def test_a_problem_with_no_place_is_kept_as_it_is() -> None:
    stale = "the workspace changed since this page was loaded; load it again"
    assert located(stale) == [stale]
    assert refusal(stale, "tick").fields == {}

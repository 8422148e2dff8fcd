"""The Redactor's quick look (`config/secret_scan.py`): a record with no secret and no pairing
code is not searched field by field (two lines a turn, issue 45), and the quick look never
lets one through, whatever its case or the characters beyond ASCII Python's case-insensitive
match takes for ASCII ones."""

from __future__ import annotations

import logging
import sys

import pytest

from adapters.server import logs
from config.secrets import Secrets

SECRET = "xoxb-sk1-in-secret-token"
# Each the secret to the mask: its other case, and letters beyond ASCII that IGNORECASE
# takes for i, s and k (a library may quote a token re-cased; anyone may write these).
FORMS = [
    SECRET.upper(),
    SECRET.replace("s", "\u017f"),
    SECRET.replace("k", "\u212a"),
    SECRET.upper().replace("I", "\u0130"),
    SECRET.replace("i", "\u0131"),
]


def record(message: str, args: tuple[object, ...] = (), **extra: object) -> logging.LogRecord:
    made = logging.LogRecord("switchboard.test", logging.INFO, __file__, 1, message, args, None)
    made.__dict__.update(extra)
    return made


def written(redactor: logs.Redactor, made: logging.LogRecord) -> str:
    assert redactor.filter(made)
    return logs.KeyValueFormatter().format(made)


@pytest.mark.parametrize("form", FORMS)
def test_no_form_of_a_secret_gets_through(form: str) -> None:
    redactor = logs.Redactor(Secrets([SECRET]))
    assert Secrets([SECRET]).found_in(form), "the mask takes it for the secret"
    for made in (
        record(f"token {form} refused"),
        record("token %s refused", (form,)),
        record("call failed", url=f"https://slack.test/api?token={form}"),
        record("call failed", sent={"headers": [form]}),
    ):
        line = written(redactor, made)
        assert form not in line and "[redacted]" in line, line
    try:
        raise RuntimeError(f"refused {form}")
    except RuntimeError:
        made = record("failed")
        made.exc_info = sys.exc_info()
    line = written(redactor, made)
    assert form not in line and "[redacted]" in line, line


def test_a_pairing_code_in_any_case_gets_no_further() -> None:
    redactor = logs.Redactor([])
    line = written(redactor, record("said", text="Your PA\u0130RING CODE \u0130S ABCD2345."))
    assert "ABCD2345" not in line and "[redacted]" in line, line


def test_a_record_without_a_secret_is_not_searched_field_by_field(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[str] = []
    redact = logs.Redactor.redact

    def counted(self: logs.Redactor, text: str) -> str:
        searched.append(text)
        return redact(self, text)

    monkeypatch.setattr(logs.Redactor, "redact", counted)
    redactor = logs.Redactor(Secrets([SECRET]))
    fields = {"outcome": "answered", "rounds": 1, "session_id": "ses_01a25179", "run_id": "run_1"}
    line = written(redactor, record("turn ended", **fields))
    assert searched == []
    assert line.endswith(
        "turn ended outcome='answered' rounds=1 session_id='ses_01a25179' run_id='run_1'"
    )
    written(redactor, record("turn ended", token=SECRET, **fields))
    assert searched, "one with a secret is"

"""Whatever an admin (or a broken editor) writes, loading answers a valid config or a
ConfigError that names the file: never another exception, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config import ConfigError, SwitchboardConfig
from config.loading import parse

ROOT = Path(__file__).resolve().parents[2]
SOURCE = Path("switchboard.toml")
TEMPLATES = [
    (ROOT / "config/switchboard.toml").read_text(),
    (ROOT / "config/example-full.toml").read_text(),
]
# Long enough for a secret (a trigger's needs 16 characters), so the examples load as written.
VALUE = "a-value-long-enough-for-a-secret"
ENVIRONMENT = {name: VALUE for text in TEMPLATES for name in re.findall(r"\$\{(\w+)\}", text)}
ASSIGNMENT = re.compile(r"^(\s*[A-Za-z_]+\s*=\s*)(.+?)(\s*#.*)?$", re.MULTILINE)

toml_values = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True).map(repr),
    st.booleans().map(lambda b: str(b).lower()),
    st.text(max_size=30).map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.sampled_from(["[]", "{}", "[1, 2]", '["a", 1]', "{ a = 1 }", "1979-05-27", "'${X}'"]),
)


def _outcome(text: str) -> None:
    try:
        config = parse(text, SOURCE, ENVIRONMENT)
    except ConfigError as exc:
        assert str(exc).startswith(f"{SOURCE}:")
    else:
        assert isinstance(config, SwitchboardConfig)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_any_text_is_a_config_or_a_config_error(text: str) -> None:
    _outcome(text)


@settings(max_examples=300, deadline=None)
@given(
    template=st.sampled_from(TEMPLATES),
    picks=st.lists(st.tuples(st.integers(min_value=0), toml_values), min_size=1, max_size=4),
)
def test_any_value_in_a_real_config_may_be_wrong(
    template: str, picks: list[tuple[int, str]]
) -> None:
    """Every key of the real configs, given a value of a random type or range."""
    text = template
    for index, value in picks:
        found = list(ASSIGNMENT.finditer(text))
        match = found[index % len(found)]
        text = text[: match.start(2)] + value + text[match.end(2) :]
    _outcome(text)


@settings(max_examples=200, deadline=None)
@given(
    template=st.sampled_from(TEMPLATES),
    drop=st.lists(st.integers(min_value=0), max_size=3),
    extra=st.lists(st.tuples(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), toml_values)),
)
def test_lines_removed_or_keys_added_anywhere(
    template: str, drop: list[int], extra: list[tuple[str, str]]
) -> None:
    lines = template.splitlines()
    for index in drop:
        if lines:
            del lines[index % len(lines)]
    for i, (key, value) in enumerate(extra):
        lines.insert((i * 7) % (len(lines) + 1), f"{key} = {value}")
    _outcome("\n".join(lines))

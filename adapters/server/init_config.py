"""What `switchboard init` writes: the TOML with `${NAME}` references, and the secrets in
the env file beside it (mode 0600, read with the config). A credential that was not checked
(the probe skipped, or its platform unreachable) is named at the top of the TOML with the
command that checks it."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from adapters.platform_setup import Setup
from adapters.server.init_providers import ModelAnswer, section


@dataclass
class Answers:
    setups: dict[str, Setup]  # every platform's part, by name, in the platforms' order
    platforms: list[str] = field(default_factory=list)  # the ones chosen
    model: ModelAnswer | None = None  # None: the offline model
    fallback: ModelAnswer | None = None
    # What was not checked against its platform, and why ("the probe was skipped", ...).
    unchecked: dict[str, str] = field(default_factory=dict)

    def chosen(self) -> list[Setup]:
        """The chosen platforms' parts, in the platforms' order."""
        return [setup for name, setup in self.setups.items() if name in self.platforms]

    def models(self) -> list[tuple[ModelAnswer, bool]]:
        """The model's connection and its fallback's, each with whether it is the fallback."""
        return [(m, f) for m, f in ((self.model, False), (self.fallback, True)) if m is not None]

    def operator_lines(self) -> list[str]:
        """The operator's id on each platform given one (none: they pair by DM)."""
        return [line for s in self.setups.values() if (line := s.operator_line()) is not None]


def write(path: Path, env: Path, a: Answers, check: str) -> None:
    """`check`: the command that checks the credentials later."""
    secrets = {k: v for setup in a.chosen() for k, v in setup.secrets().items()}
    secrets |= {k: v for m, f in a.models() for k, v in section(m, fallback=f)[1].items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(env, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode on open: set it
    with os.fdopen(fd, "w") as out:
        out.write("# Secrets for the config beside this file; read by switchboard with it.\n")
        out.writelines(f"{k}={v}\n" for k, v in secrets.items() if v)
    path.write_text(_toml(a, path, check), encoding="utf-8")


def _toml(a: Answers, path: Path, check: str) -> str:
    pairing = not a.operator_lines()
    lines = [
        f"# Written by `switchboard init`. Secrets are ${{NAME}}s, set in {path.stem}.env",
        "# beside this file (or in the environment, which wins).",
    ]
    if a.unchecked:
        lines.append(
            "# Probe skipped: these were not checked against their platforms when written."
        )
        lines += [f"#   {what}: {' '.join(why.split())}" for what, why in a.unchecked.items()]
        lines.append(f"# Check them with: {check}")
    lines += ["", "[storage]", f'path = "var/{path.stem}.db"', "", "[provider]"]
    lines += _providers(a)
    lines += ["", "[[workspaces]]", 'id = "main"', 'default_agent = "assistant"']
    lines += [line for setup in a.chosen() for line in setup.section()]
    lines += ["", "  [workspaces.pairing]", f"  enabled = {'true' if pairing else 'false'}"]
    lines += ["", "  [[workspaces.operators]]", '  id = "owner"', "  primary = true"]
    lines += a.operator_lines()
    lines += [
        "",
        "  [[workspaces.agents]]",
        '  id = "assistant"',
        '  system_prompt = "You are a helpful assistant."',
        "",
    ]
    return "\n".join(lines)


def _providers(a: Answers) -> list[str]:
    """`[provider]`, and the fallback's `[providers.<kind>]` entry."""
    if a.model is None:
        return ['kind = "offline"']
    lines = section(a.model, fallback=False)[0]
    if a.fallback is None:
        return lines
    lines += [
        f'fallback = ["{a.fallback.kind}"]  # tried in order when this one cannot answer',
        "# allow_costlier = true  # a fallback dearer than this model is used only then",
        "",
        f"[providers.{a.fallback.kind}]",
    ]
    return lines + section(a.fallback, fallback=True)[0]

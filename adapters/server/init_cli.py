"""`switchboard init`: a config for your own bot. Each answer's shape is checked on this
machine, then each credential against its platform (unless `--no-probe`); a platform that
cannot be reached is told apart from one that refuses. It writes the TOML with `${NAME}`
references and the secrets in the env file beside it (init_config.py), never overwrites a
config without `--force`, and ends with the one command that starts the bot (and the one
that checks what was not checked). Every question has a flag; `--non-interactive` takes
only flags and names each one missing or of the wrong shape."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from adapters.platform_setup import Given
from adapters.platforms import platforms
from adapters.server import init_providers
from adapters.server.credential_shapes import problem
from adapters.server.init_checks import outcome
from adapters.server.init_config import Answers, write
from adapters.server.init_interview import SKIPPED, Interview
from adapters.server.init_providers import FALLBACK
from config.loading import env_file_of

DEFAULT_CONFIG = Path("config/bot.toml")


class InitError(Exception):
    """Setup cannot go on; the message says why and what to do."""


def add_parser(sub: Any, config: argparse.ArgumentParser) -> None:
    """`config`, the shared `--config`, is not a parent here: init's default path is its own."""
    text = (
        f"set up a config for your bot (default {DEFAULT_CONFIG}, its secrets in "
        f"{env_file_of(DEFAULT_CONFIG)}), checking each token with its platform as you give it"
    )
    init = sub.add_parser("init", help=text, description=text)
    init.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help=f"where to write the config (default {DEFAULT_CONFIG}; the .env file goes beside)",
    )
    init.add_argument("--force", action="store_true", help="overwrite an existing config")
    init.add_argument("--non-interactive", action="store_true", help="take only these flags")
    init.add_argument(
        "--no-probe",
        action="store_true",
        help=(
            "write the config without checking the tokens with their platforms (no network "
            "needed); check them later with `switchboard check-config --config PATH --probe`"
        ),
    )
    names = [p.name for p in platforms()]
    init.add_argument("--platform", action="append", choices=names)
    for platform in platforms():
        platform.setup.flags(init)
    init.add_argument("--anthropic-key", help="Anthropic's API with this key")
    init.add_argument("--offline", action="store_true", help="the offline model, no key")
    init_providers.add_flags(init)
    init.add_argument("--pairing", action="store_true", help="become an operator by DM pairing")
    for name in [*names, "anthropic"]:  # a self-hosted Bot API server, a proxy, a fake
        init.add_argument(f"--{name}-api-base-url", help=argparse.SUPPRESS)


def init_command(args: argparse.Namespace, path: Path) -> int:
    path = path if getattr(args, "config", None) else DEFAULT_CONFIG
    env = env_file_of(path)
    if path.exists() and not args.force:
        print(f"switchboard: {path} exists; pass --force to replace it", file=sys.stderr)
        return 2
    me = _program()
    check = f"{me} check-config --config {path} --probe"
    answers = Answers({p.name: p.setup.setup(args) for p in platforms()})
    try:
        if args.non_interactive:
            _check_all(args, _from_flags(args, answers), check)
        else:
            Interview(args, answers, probing=not args.no_probe).run()
    except InitError as exc:
        print(f"switchboard: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, EOFError):
        print("\nswitchboard: setup stopped; nothing was written", file=sys.stderr)
        return 130
    write(path, env, answers, check)
    print(f"Wrote {path} and {env} (your secrets, readable by you only).")
    if answers.unchecked:
        print("The probe was skipped for: " + ", ".join(answers.unchecked) + ".")
        print(f"Check them once this machine reaches their platforms:  {check}")
    print(f"Start your bot:  {me} run --config {path}")
    if not answers.operator_lines():
        print(
            "Then write to your bot: it answers with a pairing code. Approve yourself with\n"
            f"  {me} pairing approve CODE --config {path}"
        )
    return 0


def _program() -> str:
    """How to run this program again from here: `switchboard` when that is what the shell
    finds, else the path it was started by (`.venv/bin/switchboard`)."""
    started = Path(sys.argv[0])
    found = shutil.which("switchboard")
    if found and Path(found).resolve() == started.resolve():
        return "switchboard"
    try:
        return str(started.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(started)


# -- the flags alone (--non-interactive) ------------------------------------------------


def _from_flags(args: argparse.Namespace, answers: Answers) -> Answers:
    answers.platforms = args.platform or []
    answers.model = init_providers.from_flags(args)
    answers.fallback = init_providers.from_flags(args, FALLBACK) if answers.model else None
    missing = _missing_flags(args, answers)
    wrong = _wrong_shapes(args, answers)
    if missing or wrong:
        needs = ["--non-interactive needs: " + "; ".join(missing)] if missing else []
        raise InitError("\n  ".join(["nothing was sent or written:", *needs, *wrong]))
    return answers


def _missing_flags(args: argparse.Namespace, a: Answers) -> list[str]:
    """Every flag --non-interactive needs and was not given, in the order of the flags."""
    names = "|".join(a.setups)
    missing = [] if a.platforms else [f"--platform {names}"]
    missing += [flag for setup in a.chosen() for flag in setup.missing()]
    missing += init_providers.missing(args)
    if not (any(s.operator() for s in a.setups.values()) or args.pairing):
        flags = [p.setup.operator_flag for p in platforms()]
        missing.append(f"{', '.join(flags)} or --pairing")
    return missing


def _given(args: argparse.Namespace, a: Answers) -> list[Given]:
    """Every credential given, in the order they are checked: the platforms', then the
    model's answers (each connection is checked whole, by `_check_all`)."""
    models = [*init_providers.given(a.model), *init_providers.given(a.fallback, FALLBACK)]
    return [*(g for setup in a.chosen() for g in setup.credentials()), *models]


def _wrong_shapes(args: argparse.Namespace, a: Answers) -> list[str]:
    """Every answer of the wrong shape: nothing is sent before they are all right."""
    operators = [g for s in a.setups.values() if (g := s.operator()) is not None]
    return [
        f"{g.flag}: {said}"
        for g in [*_given(args, a), *operators]
        if g.value is not None and (said := problem(g.value, g.shape)) is not None
    ]


def _check_all(args: argparse.Namespace, a: Answers, check: str) -> None:
    """Each credential against its platform (none with --no-probe); the first refused or
    unreachable one stops it, and nothing is written."""
    checks: list[tuple[str, Callable[[], Awaitable[str]], list[str]]] = [
        (g.label, partial(g.check, g.value), [g.value])
        for g in _given(args, a)
        if g.value and g.check
    ]
    checks += [(m.label, m.check(), m.secrets()) for m, _ in a.models()]
    if args.no_probe:
        a.unchecked = {label: SKIPPED for label, _, _ in checks}
        return
    for label, run, secrets in checks:
        result = outcome(run(), *secrets)
        if result.kind == "wrong":
            raise InitError(f"{label}: {result.said}; nothing was written")
        if result.kind == "unreachable":
            raise InitError(
                f"{label}: {result.said}; it was not checked, and nothing was written. "
                f"Pass --no-probe to write the config unchecked, then run `{check}` once this "
                "machine reaches the platform"
            )
        print(f"  ok: {result.said}")
    for setup in a.chosen():
        setup.checked()

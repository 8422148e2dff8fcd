"""`switchboard init` on a terminal: one question at a time, each asked again until its
answer can be taken. A credential's shape is checked here first; then the platform is asked.
A credential the platform refuses is asked again, alone (every other answer is kept); one
whose platform cannot be reached may be kept unchecked, and the config says so. Each
platform's questions are its own (`adapters/platform_setup.py`), asked through this; the
model's are in init_provider_questions.py."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from adapters.platform_setup import Check, Shape
from adapters.server.init_checks import outcome
from adapters.server.init_config import Answers
from adapters.server.init_prompts import ask, choices, optional, platforms, required, yes
from adapters.server.init_provider_questions import ask_models
from adapters.server.init_providers import ModelAnswer

SKIPPED = "the probe was skipped (--no-probe)"


class Interview:
    def __init__(self, args: argparse.Namespace, answers: Answers, *, probing: bool) -> None:
        """`probing` False: nothing is sent anywhere (`--no-probe`)."""
        self.args = args
        self.answers = answers
        self.probing = probing

    def run(self) -> Answers:
        a = self.answers
        how = "each token is checked with its platform as you give it"
        if not self.probing:
            how = "no token is checked (--no-probe)"
        print(f"Switchboard setup: {how}. Ctrl-C stops and writes nothing.")
        first = next(iter(a.setups))
        asked = f"Platforms: {choices()} [{first}]: "
        a.platforms = self.args.platform or ask(asked, platforms)
        for setup in a.chosen():
            setup.ask(self)
        a.model, a.fallback = ask_models(self)
        for setup in a.chosen():
            setup.ask_operator(self)
        return a

    def text(self, prompt: str, shape: Shape, *, hidden: bool = False) -> str:
        return ask(prompt, required(shape), hidden=hidden)

    def optional(self, prompt: str, shape: Shape) -> str | None:
        return ask(prompt, optional(shape))

    def credential(
        self,
        label: str,
        shape: Shape,
        prompt: str,
        check: Check,
        *,
        can_be_empty: bool = False,
    ) -> str | None:
        """The credential, of its shape, checked unless the probe is skipped; asked again
        while its platform refuses it."""
        take = optional(shape) if can_be_empty else required(shape)
        while True:
            value = ask(prompt, take, hidden=True)
            if value is None:
                return None
            if not self.probing:
                self.answers.unchecked[label] = SKIPPED
                return value
            result = outcome(check(value), value)
            if result.kind == "ok":
                print(f"  ok: {result.said}")
                return value
            if result.kind == "wrong":
                print(f"  wrong: {result.said}. Type it again; your other answers are kept.")
                continue
            print(f"  unreachable: {result.said}; the {label} was not checked.")
            if yes("  Keep it unchecked and go on? (n: type it again)", default=True):
                self.answers.unchecked[label] = result.said
                return value

    def connection(self, answer: Callable[[], ModelAnswer]) -> ModelAnswer:
        """A model's connection, its questions asked by `answer`, checked whole unless the
        probe is skipped; asked again while its provider refuses it."""
        while True:
            given = answer()
            if not self.probing:
                self.answers.unchecked[given.label] = SKIPPED
                return given
            result = outcome(given.check()(), *given.secrets())
            if result.kind == "ok":
                print(f"  ok: {result.said}")
                return given
            if result.kind == "wrong":
                print(f"  wrong: {result.said}. Answer again; your other answers are kept.")
                continue
            print(f"  unreachable: {result.said}; {given.label} was not checked.")
            if yes("  Keep it unchecked and go on? (n: answer again)", default=True):
                self.answers.unchecked[given.label] = result.said
                return given

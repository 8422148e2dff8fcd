"""What `switchboard init` asks of the toy: its token (checked by `probe.py`), and the
operator's toy id."""

from __future__ import annotations

import argparse
import re

from adapters.platform_setup import Asker, Given, SetupKind, Shape
from tests.adapters.toy_platform.probe import whose

TOKEN = Shape("a toy token", re.compile(r"toy-[a-z]+"), "starts with toy-")
USER_ID = Shape("a toy user id", re.compile(r"[a-z]+"), "is lower-case letters")
SECRET = "SWITCHBOARD_TOY_TOKEN"


def _flags(init: argparse.ArgumentParser) -> None:
    init.add_argument("--toy-token")
    init.add_argument("--operator-toy-id")


class ToySetup:
    def __init__(self, args: argparse.Namespace) -> None:
        self.token: str | None = args.toy_token
        self.user_id: str | None = args.operator_toy_id

    def missing(self) -> list[str]:
        return [] if self.token else ["--toy-token"]

    def credentials(self) -> list[Given]:
        return [Given("Toy token", "--toy-token", self.token, TOKEN, whose)]

    def checked(self) -> None:
        pass

    def ask(self, asker: Asker) -> None:
        self.token = asker.credential("Toy token", TOKEN, "Toy token (hidden): ", whose)

    def ask_operator(self, asker: Asker) -> None:
        self.user_id = asker.optional("Your toy user id (empty: pair by DM): ", USER_ID)

    def operator(self) -> Given | None:
        if self.user_id is None:
            return None
        return Given("Toy user id", "--operator-toy-id", self.user_id, USER_ID)

    def secrets(self) -> dict[str, str | None]:
        return {SECRET: self.token}

    def section(self) -> list[str]:
        lines = ["", "  [workspaces.toy]", f'  token = "${{{SECRET}}}"', '  rooms = ["#ops"]']
        return lines if self.token else []

    def operator_line(self) -> str | None:
        return f'  toy_user_id = "{self.user_id}"' if self.user_id else None


TOY_SETUP = SetupKind(_flags, "--operator-toy-id", ToySetup, (TOKEN,))

"""`[workspaces.toy]`: the toy's token and its rooms; an operator's `toy_user_id`."""

from __future__ import annotations

from pydantic import SecretStr, field_validator

from config import PlatformSection
from config.platforms import present
from config.strict import Strict


class ToyConfig(Strict):
    token: SecretStr
    rooms: list[str] = []

    _present = field_validator("token")(present)


TOY_SECTION = PlatformSection(
    name="toy",
    title="Toy",
    model=ToyConfig,
    operator_key="toy_user_id",
    numbers=False,
    allowed="rooms",
    conversation="room",
)

"""The base of the config's models: an unknown key is an error (a typo must never be
silently ignored), and a loaded config does not change."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

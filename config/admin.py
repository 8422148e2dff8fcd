"""Who may open the admin console (`/admin`): one global admin, and each workspace's own."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

MIN_TOKEN_CHARS = 16
TOKEN_HINT = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def strong(token: SecretStr | None) -> SecretStr | None:
    """Tokens (an admin's, the metrics') are passwords an attacker can try over HTTP: refuse
    short ones."""
    if token is not None and len(token.get_secret_value()) < MIN_TOKEN_CHARS:
        raise ValueError(
            f"a token must be at least {MIN_TOKEN_CHARS} characters; make one with "
            f"{TOKEN_HINT} and pass it as ${{VAR}} from the environment"
        )
    return token


class AdminConfig(BaseModel):
    """`[admin]`: the global admin sees and steers every workspace."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    token: SecretStr | None = None
    session_ttl_s: float = Field(8 * 3600, ge=1)  # a login lasts this long

    _strong = field_validator("token")(strong)


class WorkspaceAdminConfig(BaseModel):
    """`[[workspaces.admins]]`: sees and steers only its own workspace."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    token: SecretStr

    _strong = field_validator("token")(strong)

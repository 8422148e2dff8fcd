"""Logged-in admins: a random cookie value maps to who logged in, their CSRF token and when
the login expires. Kept in memory: a restart logs everyone out, which is the safe side."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from config.schema import SwitchboardConfig

# A wrong token is answered 429 after this many failures from one address within the window.
MAX_FAILURES = 5
FAILURE_WINDOW_S = 60.0


@dataclass(frozen=True, slots=True)
class Admin:
    id: str
    workspace_id: str | None  # None: the global admin

    @property
    def label(self) -> str:
        """How audit events and logs name this admin."""
        return self.id if self.workspace_id is None else f"{self.workspace_id}/{self.id}"

    def can(self, workspace_id: str) -> bool:
        return self.workspace_id is None or self.workspace_id == workspace_id


@dataclass(slots=True)
class Login:
    admin: Admin
    csrf: str
    expires_at: float
    fingerprint: str  # of the token used: a login ends when the admin's token changes
    flashes: list[str] = field(default_factory=list)  # said once, on the next page shown


def fingerprint(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def admins(config: SwitchboardConfig) -> list[tuple[Admin, str]]:
    """Every admin the config names, with their token."""
    found = []
    if config.admin.token is not None:
        found.append((Admin("admin", None), config.admin.token.get_secret_value()))
    for w in config.workspaces:
        found += [(Admin(a.id, w.id), a.token.get_secret_value()) for a in w.admins]
    return found


def identify(config: SwitchboardConfig, token: str) -> Admin | None:
    """The admin whose token this is; every token is compared, in constant time each."""
    match = None
    for admin, expected in admins(config):
        if hmac.compare_digest(token.encode(), expected.encode()):
            match = admin
    return match


class Logins:
    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._logins: dict[str, Login] = {}
        self._failures: dict[str, deque[float]] = {}

    def open(self, admin: Admin, token: str, ttl_s: float) -> str:
        """A new login; its cookie value."""
        self._forget_expired()
        cookie = secrets.token_urlsafe(32)
        self._logins[cookie] = Login(
            admin, secrets.token_urlsafe(32), self._now() + ttl_s, fingerprint(token)
        )
        return cookie

    def find(self, cookie: str | None, config: SwitchboardConfig) -> Login | None:
        """The live login of this cookie: not expired, and its admin still has the token
        they logged in with (a reload that removes or changes it ends the login)."""
        login = self._logins.get(cookie) if cookie else None
        if login is None:
            return None
        current = {a: fingerprint(t) for a, t in admins(config)}
        if login.expires_at <= self._now() or current.get(login.admin) != login.fingerprint:
            self._logins.pop(cookie or "", None)
            return None
        return login

    def close(self, cookie: str | None) -> None:
        self._logins.pop(cookie or "", None)

    def blocked_for(self, address: str) -> float:
        """Seconds until this address may try a token again; 0 if it may now."""
        recent = self._recent(address)
        if not recent:
            self._failures.pop(address, None)
        if len(recent) < MAX_FAILURES:
            return 0.0
        return max(0.0, recent[0] + FAILURE_WINDOW_S - self._now())

    def failed(self, address: str) -> None:
        self._recent(address).append(self._now())

    def _recent(self, address: str) -> deque[float]:
        recent = self._failures.setdefault(address, deque(maxlen=MAX_FAILURES))
        while recent and recent[0] <= self._now() - FAILURE_WINDOW_S:
            recent.popleft()
        return recent

    def _forget_expired(self) -> None:
        now = self._now()
        for cookie in [c for c, login in self._logins.items() if login.expires_at <= now]:
            del self._logins[cookie]

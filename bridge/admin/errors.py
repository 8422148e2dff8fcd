"""What the console's reads and actions raise for an admin to act on."""

from __future__ import annotations

from config.errors import SwitchboardError


class NotInWorkspace(SwitchboardError):
    """The session, delivery or notification named is not one of this workspace's (or no
    longer exists): the page answers 404."""


class NotPossible(SwitchboardError):
    """The action does not apply to the object as it stands (a delivery that is not failed,
    an operator with no route): the message says why."""

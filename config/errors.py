"""The root of Switchboard's exception tree.

It lives in `config`, the leaf package every layer may import, so that runtime, bridge
and adapter errors can all share one root without breaking the import direction.
"""


class SwitchboardError(Exception):
    """Base class of every error Switchboard raises on purpose."""


class ConfigError(SwitchboardError, ValueError):
    """The admin's configuration is invalid; the message says where and how to fix it."""


class CredentialRefused(SwitchboardError):
    """A platform or the model refused a credential (or could not be reached to check it);
    the message is the platform's own reason."""

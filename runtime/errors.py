"""Errors the runtime raises; a caller can act on each subclass."""

from enum import StrEnum

from config.errors import SwitchboardError


class RuntimeFault(SwitchboardError):
    """Base class of runtime errors."""


class UnknownSessionError(RuntimeFault, LookupError):
    """No session has this id."""


class UnknownRunError(RuntimeFault, LookupError):
    """No run of this session has this id."""


class StaleRunError(RuntimeFault):
    """The run named has already finished; there is nothing to stop."""


class TranscriptInvariantError(RuntimeFault):
    """A provider request would break the transcript invariants; it was not sent."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("refusing to send an invalid provider request: " + "; ".join(problems))


class Failure(StrEnum):
    """What kind of provider failure, whichever provider: what a fallback does about it
    (runtime/providers/fallback.py). Each provider module maps its SDK's errors to one."""

    RATE_LIMITED = "rate_limited"  # 429: wait for Retry-After, then the next key or provider
    OVERLOADED = "overloaded"  # 529 and 5xx: the circuit opens, a half-open probe closes it
    UNREACHABLE = "unreachable"  # no answer: connection refused or reset, a timeout
    BILLING = "billing"  # 402, quota or credit exhausted: held for hours
    AUTH = "auth"  # 401, 403: this key is refused; the admin is told
    INVALID = "invalid"  # 400 and the rest: the request itself; never falls back
    CONTEXT = "context"  # the request does not fit the window: compaction's, never falls back


# A status's failure, where the body says nothing more precise.
_BY_STATUS = {401: Failure.AUTH, 403: Failure.AUTH, 402: Failure.BILLING, 429: Failure.RATE_LIMITED}
RETRYABLE = frozenset({Failure.RATE_LIMITED, Failure.OVERLOADED, Failure.UNREACHABLE})


def failure_of(status: int | None) -> Failure:
    """The failure an HTTP status means (None: no answer at all)."""
    if status is None:
        return Failure.UNREACHABLE
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status in (408, 409) or status >= 500:
        return Failure.OVERLOADED
    return Failure.INVALID


class ProviderError(RuntimeFault):
    """The model provider failed. `failure` says what kind (from `status` unless given);
    `retryable` whether a later try may succeed; `retry_after` how long the provider asked
    to wait (seconds), if it said."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool | None = None,
        failure: Failure | None = None,
        retry_after: float | None = None,
    ):
        self.status = status
        self.failure = failure or failure_of(status)
        self.retryable = self.failure in RETRYABLE if retryable is None else retryable
        self.retry_after = retry_after
        super().__init__(message)


class ContextWindowExceededError(ProviderError):
    """The request does not fit the model's context window. Sending it again cannot help; a
    smaller one (the transcript compacted, or a lower max_tokens) may."""

    def __init__(
        self, message: str, *, status: int | None = None, request_tokens: int | None = None
    ):
        super().__init__(message, status=status, retryable=False, failure=Failure.CONTEXT)
        self.request_tokens = request_tokens  # the provider's count of the refused request


class StoreBusyError(RuntimeFault):
    """Another process is running this database."""


class StoreConflictError(RuntimeFault):
    """A write broke a uniqueness rule: the record it would add is already there (a platform
    retry racing the original, for one)."""


class StoreUnavailableError(RuntimeFault):
    """The database cannot be reached (PostgreSQL: the server, or its credentials)."""


class ConditionFailedError(RuntimeFault):
    """A conditional statement of a write touched other than the rows it had to (its
    condition no longer held when it ran): nothing of the transaction was kept."""


class LeaseLostError(ConditionFailedError):
    """This process no longer holds the lease a write was fenced by: another replica took
    the work over, and the write was not kept."""

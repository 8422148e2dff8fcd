"""Errors the runtime raises; a caller can act on each subclass."""

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


class ProviderError(RuntimeFault):
    """The model provider failed; `retryable` says whether a later try may succeed."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False):
        self.status = status
        self.retryable = retryable
        super().__init__(message)


class ContextWindowExceededError(ProviderError):
    """The request does not fit the model's context window. Sending it again cannot help; a
    smaller one (the transcript compacted, or a lower max_tokens) may."""

    def __init__(
        self, message: str, *, status: int | None = None, request_tokens: int | None = None
    ):
        super().__init__(message, status=status, retryable=False)
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

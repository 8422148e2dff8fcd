"""Model providers behind one interface."""

from runtime.providers.anthropic import AnthropicProvider, lower_request
from runtime.providers.base import Provider, ProviderRequest, ProviderResponse, StopReason
from runtime.providers.offline import OfflineProvider

__all__ = [
    "AnthropicProvider",
    "OfflineProvider",
    "Provider",
    "ProviderRequest",
    "ProviderResponse",
    "StopReason",
    "lower_request",
]

"""Model providers behind one async interface (see base.py)."""

from ebtui.providers.base import Completion, Delta, ModelClient, ProviderError, Retrying, StreamItem, Usage

__all__ = ["Completion", "Delta", "ModelClient", "ProviderError", "Retrying", "StreamItem", "Usage"]

"""The agent room's refusals, in a module of their own.

The run service catches them around every launch and drive; keeping them apart from the
client table (:mod:`.clients`) and the adapters (:mod:`.adapters`) lets it do so without
loading either, which a run of a built-in agent never needs.
"""


class ClientError(Exception):
    """A client that cannot be installed, verified or used, with the reason."""


class AdapterError(ValueError):
    """A client configuration srb refuses (bad effort level, unsupported option)."""


__all__ = ["AdapterError", "ClientError"]

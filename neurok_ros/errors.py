"""Errors raised on bad input. Each message names the problem in one line."""


class NeurokInputError(ValueError):
    """Input that cannot be used (a mesh, an action, a file); the message says why."""


class MeshError(NeurokInputError):
    """A mesh that cannot be read or used: empty, non-finite, bad indices, unreadable bytes."""


class ActionError(NeurokInputError):
    """An action or contact condition that cannot be used."""


class Cancelled(Exception):
    """A computation stopped early because its caller asked it to: the `should_stop` hook it was
    given (predict_motion and the integrators below it) returned True."""

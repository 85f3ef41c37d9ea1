"""rudnn's typed errors, one class per status of the C++ API.

Every failure of rudnn raises one of these; nothing is written to any
output when one is raised. ``InvalidArgument`` is also a ``ValueError`` and
names the argument at fault; ``Unsupported`` is also a
``NotImplementedError``.
"""


class Error(RuntimeError):
    """Any error of rudnn."""


class InvalidArgument(Error, ValueError):
    """A bad argument: its name and what was expected."""

    def __init__(self, message, argument=None):
        super().__init__(message)
        self.argument = argument


class Unsupported(Error, NotImplementedError):
    """A valid request rudnn does not implement (dtype, architecture, ...)."""


class CompileError(Error):
    """A kernel failed to compile: its name, the compiler's log, its source."""


class DeviceError(Error):
    """A CUDA call failed."""


class DeviceUnavailable(Error):
    """No CUDA driver or no device."""


class Internal(Error):
    """A bug in rudnn."""


def invalid(argument, message):
    """An InvalidArgument about `argument`, its name leading the message."""
    return InvalidArgument(f"'{argument}': {message}", argument)

"""amk's errors as Python exceptions.

Every failure of the engine raises an AmkError subclass chosen by the exit code `amk` gives
the same failure (README "Exit codes"), carrying amk's own message, its library error code
and name (``AMK_ENOENT``) and the step that failed.
"""


class AmkError(Exception):
    """A failure of the amk engine.

    Attributes: message (amk's text), code (negative library code), name ("AMK_ENOENT"),
    exit_code (what `amk` exits with for it), category ("usage", "input", "results",
    "nodev", "internal"), step (which step of the command failed, e.g. "results").
    """

    category = "internal"

    def __init__(self, message, code=0, name="", exit_code=5, step=""):
        super().__init__(message)
        self.message = message
        self.code = code
        self.name = name
        self.exit_code = exit_code
        self.step = step

    def __str__(self):
        return self.message


class UsageError(AmkError, ValueError):
    """Exit code 1: an unknown option value (strategy, backend spelling, ...)."""
    category = "usage"


class InputError(AmkError, ValueError):
    """Exit code 2: bad input: unknown kernel/param/dim/target, malformed JSON, bad spec,
    a value not among the choices, an empty space."""
    category = "input"


class ResultsError(AmkError, OSError):
    """Exit code 3: a results file is missing, malformed, foreign or cannot be written."""
    category = "results"


class NoDeviceError(AmkError, RuntimeError):
    """Exit code 4: the backend asked for (gpu) is not available here."""
    category = "nodev"


class InternalError(AmkError, RuntimeError):
    """Exit code 5: out of memory, a backend or worker that broke."""
    category = "internal"


class UnsupportedError(AmkError, NotImplementedError):
    """A Kernel Tuner argument (or value) that amk does not support; the message names it."""
    category = "input"

    def __init__(self, message, argument=None, **kw):
        super().__init__(message, exit_code=kw.pop("exit_code", 2), **kw)
        self.argument = argument


_BY_EXIT = {1: UsageError, 2: InputError, 3: ResultsError, 4: NoDeviceError, 5: InternalError}


def from_engine(err):
    """The AmkError for an amk._amk.Error(message, code, exit_code, step)."""
    from . import _amk
    message, code, exit_code, step = err.args
    name = _amk.error_info(code)[0]
    cls = _BY_EXIT.get(exit_code, InternalError)
    return cls(message, code=code, name=name, exit_code=exit_code, step=step)


class _translate:
    """Context manager: amk._amk.Error raised inside becomes its AmkError subclass."""

    def __enter__(self):
        return self

    def __exit__(self, typ, val, tb):
        from . import _amk
        if typ is not None and issubclass(typ, _amk.Error):
            raise from_engine(val) from None
        return False


translate = _translate()

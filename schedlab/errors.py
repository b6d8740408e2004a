"""Errors the CLI turns into one line and a non-zero exit (no traceback)."""


class SchedlabError(Exception):
    """Base class: the message is complete and user-facing."""


class InputError(SchedlabError):
    """Bad input file or option; the message names the file, line and field when they exist."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        where = ""
        if path is not None:
            where = str(path)
            if line is not None:
                where += f":{line}"
            where += ": "
        if field is not None:
            message = f"field '{field}': {message}"
        super().__init__(where + message)
        self.path = path
        self.line = line
        self.field = field


class UnsupportedProfileError(InputError):
    """A profile type the embedded engine does not model (needs real Batsim)."""


class OutputError(SchedlabError):
    """A file could not be written (a full disk, a permission): exit 1 with the file and the reason;
    the partial file is removed and what was complete before is kept."""


class SimulationError(SchedlabError):
    """A decision or event violated Batsim's rules (what Batsim would abort on)."""


class ProtocolError(SchedlabError):
    """A malformed or illegal Batsim protocol message, or a peer that went away."""


class SchedulerFailure(SchedlabError):
    """A scheduler raised an unexpected exception (a bug); names the event, job and time.
    `scheduler_module`: where the scheduler's class lives (schedlab's, or a user's)."""

    scheduler_module = "schedlab."
    #: whether the message already says which scheduler raised (else the CLI prefixes it)
    names_its_scheduler = False

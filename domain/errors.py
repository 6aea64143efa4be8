"""Domain errors: a rule was broken. Each carries a stable ``code`` clients can match on."""


class DomainError(Exception):
    """A command the rules refuse. ``code`` is stable; ``message`` is for people; ``extra``
    are facts a client can act on (they become members of the problem document)."""

    def __init__(self, code: str, message: str, **extra):
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra


# What applying a stored event of the wrong shape raises (an unknown type, a field missing
# or of another kind): the audit reports it as a failed check, a read as a record that
# does not replay.
MALFORMED = (DomainError, KeyError, TypeError, ValueError, AttributeError, IndexError,
             StopIteration, RecursionError)

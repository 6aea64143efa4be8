"""Domain errors: a rule was broken. Each carries a stable ``code`` clients can match on."""


class DomainError(Exception):
    """A command the rules refuse. ``code`` is stable; ``message`` is for people; ``extra``
    are facts a client can act on (they become members of the problem document)."""

    def __init__(self, code: str, message: str, **extra):
        super().__init__(message)
        self.code = code
        self.message = message
        self.extra = extra

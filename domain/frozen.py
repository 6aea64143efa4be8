"""``replace`` for the domain's frozen states."""


def replace(obj, **changes):
    """``dataclasses.replace`` without re-running ``__init__`` (the states have no
    ``__post_init__``): replaying a hand or a table replaces a state a few times per
    event, so this is the hot path."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__, **changes)
    return new

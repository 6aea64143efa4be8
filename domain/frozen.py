"""Frozen states and events made without their ``__init__``."""


def made(cls, fields: dict):
    """An instance of the frozen dataclass ``cls`` holding ``fields`` (every field, and
    taken as they are: no ``__init__``, whose ``object.__setattr__`` per field is the
    larger part of reading an event back; none of these classes has a ``__post_init__``)."""
    new = object.__new__(cls)
    object.__setattr__(new, "__dict__", fields)  # a frozen class refuses plain assignment
    return new


def replace(obj, **changes):
    """``dataclasses.replace`` without re-running ``__init__``: replaying a hand or a table
    replaces a state a few times per event, so this is the hot path. Copying the whole
    ``__dict__`` and then changing it costs less than filling an empty one."""
    fields = obj.__dict__.copy()
    fields.update(changes)
    return made(type(obj), fields)

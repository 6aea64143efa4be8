"""``replace`` for the domain's frozen states."""


def replace(obj, **changes):
    """``dataclasses.replace`` without re-running ``__init__`` (the states have no
    ``__post_init__``): replaying a hand or a table replaces a state a few times per
    event, so this is the hot path. Copying the whole ``__dict__`` and then changing it
    costs less than filling an empty one."""
    new = object.__new__(type(obj))
    fields = obj.__dict__.copy()
    fields.update(changes)
    object.__setattr__(new, "__dict__", fields)  # a frozen class refuses plain assignment
    return new

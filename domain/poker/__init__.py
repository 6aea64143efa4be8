"""One poker engine for every variant: a variant is a spec (data), the engine runs it."""

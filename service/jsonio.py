"""JSON in and out of the API and its logs, by orjson (several times faster than the
standard library, and every request is answered in JSON).

Where orjson reads or writes a value otherwise than the standard library (an integer
past 64 bits, which it would read as a float or refuse to write; a document nested
deeper than it reads), the standard library decides, so nothing is answered differently
for being rare. Only the escaping of the output differs: orjson writes UTF-8, not
``\\u`` escapes, which any JSON reader reads the same. ``loads`` refuses, as orjson
does, what is not JSON text that can be stored and read back: a lone surrogate
(``"\\ud800"``), ``NaN`` and ``Infinity`` (no JSON values, though Python's reader takes
them), a number past a float's range (``1e400``), and a document nested too deeply for
the standard library to read.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

import orjson
from flask.json.provider import DefaultJSONProvider

from domain.fairness import canonical_json

_NON_STR_KEYS = orjson.OPT_NON_STR_KEYS  # as json.dumps, an int key becomes a string
# 19 digits in a row (past 64 bits, orjson.loads reads a float), found where every digit
# of the text is made a 0 and all else a dot: several times faster than a regex's search
_LONG_NUMBER = b"0" * 19
_DIGITS = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x2E for byte in range(256))
# canonical_json's rules, no more: what the standard library would not write is refused
_SORTED = (orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
           | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS)
# A float sought with each byte that may start, sign, make or end one replaced by its class
# (``:,[`` by ``:``, a digit by ``0``, ``.eE`` by ``e``; the others are none of these): the
# pattern then starts with one byte, which ``re`` scans for faster than for a set of them.
_CLASSES = bytes.maketrans(b",[123456789.E", b"::000000000ee")
_FLOAT = re.compile(rb":-?0+e")


def dumps(value: Any, default=None) -> str:
    """``value`` as compact JSON, keys in their order."""
    for option in (None, _NON_STR_KEYS):  # keys that are all strings are written faster
        try:
            return orjson.dumps(value, default=default, option=option).decode()
        except TypeError:  # orjson.JSONEncodeError is one
            pass
    return json.dumps(value, default=default, separators=(",", ":"), ensure_ascii=False)


def canonical(value: Any) -> str:
    """``domain.fairness.canonical_json(value)``: by orjson where it writes the same text
    (``canonical_by_orjson``), else by ``canonical_json`` itself."""
    text = canonical_by_orjson(value)
    return canonical_json(value) if text is None else text.decode()


def canonical_by_orjson(value: Any) -> bytes | None:
    """orjson's text of ``value``, keys sorted, where it is exactly ``canonical_json``'s,
    else None. orjson writes the same bytes for any value without a float
    (``tests/test_fairness.py`` holds it to that), and in a compact JSON object a float is
    a value (after ``:``, ``,`` or ``[``) of digits and a fraction or an exponent: so an
    object in whose text no such value may be."""
    try:
        text = orjson.dumps(value, option=_SORTED)
    except TypeError:  # an integer past 64 bits, a key not a string, a type JSON lacks
        return None
    return text if text[:1] == b"{" and not _FLOAT.search(text.translate(_CLASSES)) else None


def loads(text: str | bytes) -> Any:
    """The value of a JSON text; ValueError if it is none, or one refused (see above)."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    # find, not ``in``: ``in`` first tries the bytes as an integer, and raises and clears
    # a TypeError for it, which costs more than the search
    if raw.translate(_DIGITS).find(_LONG_NUMBER) < 0:
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite,
                           parse_int=_integer)
    except RecursionError:
        raise Refused("it nests deeper than about a thousand levels") from None
    try:
        json.dumps(value, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        raise Refused("it holds a lone surrogate (a \\ud800 to \\udfff escape not in a "
                      "pair), which UTF-8 cannot carry") from None
    return value


class Refused(ValueError):
    """JSON text that ``loads`` reads but refuses; its message says why, to the client."""


def _no_constant(name: str) -> None:
    raise Refused(f"it holds {name}, which is no JSON value")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise Refused(f"it holds {_short(text)}, past the range of a number")
    return number


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # past sys.get_int_max_str_digits(), 4,300 by default
        raise Refused(f"it holds an integer of {len(text.lstrip('-')):,} digits, past the "
                      f"{sys.get_int_max_str_digits():,} a number may have") from None


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:40]}... ({len(text):,} characters)"


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON (``app.json``) by ``dumps`` and ``loads``; indented output (debug
    mode, say) and sorted keys stay the standard library's."""

    sort_keys = False

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        if kwargs.get("indent") or kwargs.get("sort_keys", self.sort_keys):
            return super().dumps(obj, **kwargs)
        return dumps(obj, default=kwargs.get("default", self.default))

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return super().loads(s, **kwargs) if kwargs else loads(s)

"""Numbers as Batsim reads them: RapidJSON 1.1.0's default parsing mode, then `GetDouble()`.

Batsim parses every message a decision process sends with `doc.Parse(...)` and no flags
(protocol.cpp), so a fraction is read by RapidJSON's "normal precision" path: up to 17 significant
digits are accumulated (exactly into a 64-bit integer while it stays below 2^53, then one
floating-point multiply-add per digit), and the result is scaled by a single multiplication or
division by a power of ten (reader.h `ParseNumber`, internal/strtod.h `StrtodNormalPrecision`,
`FastPath`). That is not always the nearest double: "26462.444038499998" is read one ulp high.
Integers are read exactly and converted by `GetDouble()`. This module reproduces that reading
bit for bit (tests/test_batsim_numbers.py compares it with RapidJSON itself).
"""

from __future__ import annotations

import json
import re
from typing import Any

_POW10 = [float(f"1e{n}") for n in range(309)]  # RapidJSON's Pow10 table: the literals 1e0 ... 1e308
_UINT32_LIMIT = 429496729  # i >= this may overflow 2^32 - 1 with one more digit (non-negative numbers)
_INT32_LIMIT = 214748364  # the same for negative numbers (2^31)
_UINT64_LIMIT = 0x1999999999999999  # 2^64 - 1 // 10
_INT64_LIMIT = 0x0CCCCCCCCCCCCCCC  # 2^63 // 10
_FAST_PATH_LIMIT = (1 << 53) - 1
_DBL_MAX_TENTH = 1.7976931348623157e307
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\Z")


class NumberError(ValueError):
    """RapidJSON refuses the number (Batsim then aborts: "Invalid JSON message: could not be parsed");
    `token`: the text refused."""

    def __init__(self, message: str, token: str = "") -> None:
        super().__init__(message)
        self.token = token


def _fast_path(significand: float, exp: int) -> float:
    if exp < -308:
        return 0.0
    if exp >= 0:
        return significand * _POW10[exp]
    return significand / _POW10[-exp]


def _scale(d: float, p: int) -> float:
    """StrtodNormalPrecision."""
    if p < -308:  # two steps, so that Pow10 stays within its table
        return _fast_path(_fast_path(d, -308), p + 308)
    return _fast_path(d, p)


def read_double(text: str) -> float:
    """The double Batsim gets from the JSON number `text` (a JSON number literal, nothing else)."""
    if not _JSON_NUMBER.match(text):
        raise NumberError(f"not a JSON number: {text!r}", text)
    pos, n = 0, len(text)
    minus = text[0] == "-"
    if minus:
        pos = 1
    # integer part: 32 bits, then 64 bits, then a double (reader.h's three loops)
    i = ord(text[pos]) - 48
    pos += 1
    significant = 0
    use64 = use_double = False
    d = 0.0
    if i != 0:
        limit = _INT32_LIMIT if minus else _UINT32_LIMIT
        top = "8" if minus else "5"
        while pos < n and text[pos].isdigit():
            if i >= limit and (i != limit or text[pos] > top):
                use64 = True
                break
            i = i * 10 + ord(text[pos]) - 48
            pos += 1
            significant += 1
    if use64:
        limit = _INT64_LIMIT if minus else _UINT64_LIMIT
        top = "8" if minus else "5"
        while pos < n and text[pos].isdigit():
            if i >= limit and (i != limit or text[pos] > top):
                d = float(i)
                use_double = True
                break
            i = i * 10 + ord(text[pos]) - 48
            pos += 1
            significant += 1
    if use_double:
        while pos < n and text[pos].isdigit():
            if d >= _DBL_MAX_TENTH:
                raise NumberError(f"number too big: {text!r}", text)
            d = d * 10.0 + float(ord(text[pos]) - 48)
            pos += 1
    # fraction
    exp_frac = 0
    if pos < n and text[pos] == ".":
        pos += 1
        if not use_double:
            while pos < n and text[pos].isdigit():
                if i > _FAST_PATH_LIMIT:
                    break
                i = i * 10 + ord(text[pos]) - 48
                pos += 1
                exp_frac -= 1
                if i != 0:
                    significant += 1
            d = float(i)  # a uint64 -> double conversion, rounded to nearest even
            use_double = True
        while pos < n and text[pos].isdigit():
            if significant < 17:
                d = d * 10.0 + float(ord(text[pos]) - 48)
                exp_frac -= 1
                if d > 0.0:
                    significant += 1
            pos += 1
    # exponent
    exp = 0
    if pos < n and text[pos] in "eE":
        pos += 1
        if not use_double:
            d = float(i)
            use_double = True
        exp_minus = text[pos] == "-"
        if text[pos] in "+-":
            pos += 1
        exp = ord(text[pos]) - 48
        pos += 1
        if exp_minus:
            while pos < n:
                exp = exp * 10 + ord(text[pos]) - 48
                pos += 1
                if exp >= 214748364:  # RapidJSON stops accumulating (issue #313) and skips the rest
                    break
        else:
            max_exp = 308 - exp_frac
            while pos < n:
                exp = exp * 10 + ord(text[pos]) - 48
                pos += 1
                if exp > max_exp:
                    raise NumberError(f"number too big: {text!r}", text)
        if exp_minus:
            exp = -exp
    if use_double:
        d = _scale(d, exp + exp_frac)
        return -d if minus else d
    return float(-i if minus else i)  # an Int/Uint/Int64/Uint64 value; GetDouble converts it


def reads_as(value: float) -> float:
    """What Batsim reads when a Python decision process writes `value` (json writes float's repr,
    for a numpy float too)."""
    value = float(value)
    text = float.__repr__(value)
    if text in ("inf", "-inf", "nan"):
        raise NumberError(f"{text} is not JSON", text)
    if len(text) <= 16 and "e" not in text:  # at most 15 digits: RapidJSON's fast path is exact
        return value
    return read_double(text)


def _read_fraction(text: str) -> float:
    """read_double, with Python's own reading where it is the same (at most 15 digits)."""
    if len(text) <= 16 and "e" not in text and "E" not in text:
        return float(text)
    return read_double(text)


def _read_fraction_or_inf(text: str) -> float:
    try:
        return _read_fraction(text)
    except NumberError:
        return float(text)  # too big: infinite, for the field's own check to name it


def _read_integer(text: str) -> int | float:
    """Integers up to 2^64 stay exact (GetDouble converts them); longer ones are read as doubles."""
    return int(text) if len(text) < 20 else read_double(text)


def _refuse_constant(text: str) -> Any:
    raise NumberError(f"{text} is not JSON (RapidJSON's default mode refuses it)", text)


def loads(raw: bytes | str, *, strict: bool = True) -> Any:
    """json.loads with every number read as Batsim reads it (a decision process's reply, a workload
    file). What RapidJSON refuses (NaN, Infinity, numbers too big) is NumberError, or, not `strict`,
    read as Python reads it (a workload's field checks then name the field and line)."""
    if not strict:  # integers stay Python's: they differ from RapidJSON's only beyond 2^64 (a workload's
        # integer is a size, an id or a time in seconds; the hook would cost a third of the load time)
        return json.loads(raw, parse_float=_read_fraction_or_inf)
    return json.loads(raw, parse_float=_read_fraction, parse_int=_read_integer, parse_constant=_refuse_constant)

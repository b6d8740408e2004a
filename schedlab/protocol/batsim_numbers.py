"""Numbers as Batsim reads them: RapidJSON 1.1.0's default parsing mode, then `GetDouble()`.

Batsim parses every message a decision process sends with `doc.Parse(...)` and no flags
(protocol.cpp), so a fraction is read by RapidJSON's "normal precision" path: up to 17 significant
digits are accumulated (exactly into a 64-bit integer while it stays below 2^53, then one
floating-point multiply-add per digit), and the result is scaled by a single multiplication or
division by a power of ten (reader.h `ParseNumber`, internal/strtod.h `StrtodNormalPrecision`,
`FastPath`). That is not always the nearest double: "26462.444038499998" is read one ulp high.
Integers are read exactly and converted by `GetDouble()`. This module reproduces that reading
bit for bit, and RapidJSON's writing of a double (`Writer::Double`: Grisu2, not always the shortest
text), with which Batsim keeps a job's description (tests/test_batsim_numbers.py compares both with
RapidJSON itself).
"""

from __future__ import annotations

import functools
import re
import struct
from typing import Any

from schedlab.parsing import json_loads

_POW10 = [float(f"1e{n}") for n in range(309)]  # RapidJSON's Pow10 table: the literals 1e0 ... 1e308
_UINT32_LIMIT = 429496729  # i >= this may overflow 2^32 - 1 with one more digit (non-negative numbers)
_INT32_LIMIT = 214748364  # the same for negative numbers (2^31)
_UINT64_LIMIT = 0x1999999999999999  # 2^64 - 1 // 10
_INT64_LIMIT = 0x0CCCCCCCCCCCCCCC  # 2^63 // 10
_FAST_PATH_LIMIT = (1 << 53) - 1
_DBL_MAX_TENTH = 1.7976931348623157e307
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?\Z", re.ASCII)


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


def _integer_digits(text: str, pos: int, i: int, limit: int, top: str) -> tuple[int, int, int, bool]:
    """One of reader.h's integer loops: digits into `i` while one more cannot overflow (`limit` is
    the bound over ten, `top` its last digit); (i, position, digits added, whether it overflowed)."""
    added = 0
    while pos < len(text) and text[pos].isdigit():
        if i >= limit and (i != limit or text[pos] > top):
            return i, pos, added, True
        i = i * 10 + ord(text[pos]) - 48
        pos += 1
        added += 1
    return i, pos, added, False


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
    use_double = False
    d = 0.0
    top = "8" if minus else "5"  # the last digit of 2^31 (2^63) or of 2^32 - 1 (2^64 - 1)
    if i != 0:
        i, pos, added, use64 = _integer_digits(text, pos, i, _INT32_LIMIT if minus else _UINT32_LIMIT, top)
        significant += added
        if use64:
            i, pos, added, use_double = _integer_digits(text, pos, i, _INT64_LIMIT if minus else _UINT64_LIMIT, top)
            significant += added
            if use_double:
                d = float(i)
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


def _power_of_ten(k: int) -> tuple[int, int]:
    """10^k as a 64-bit significand (top bit set, rounded to nearest) and a binary exponent."""
    if k < 0:
        divisor = 10**-k
        shift = 63 + divisor.bit_length()
        return ((1 << shift) + divisor // 2) // divisor, -shift
    n = 10**k
    shift = n.bit_length() - 64
    if shift <= 0:
        return n << -shift, shift
    return (n + (1 << (shift - 1))) >> shift, shift  # never rounds up to 2^64 for these k


# Grisu's cached powers (internal/diyfp.h): 10^-348, 10^-340, ..., 10^340; the test compares them
# with the header's table
_CACHED_POWERS = [_power_of_ten(k) for k in range(-348, 341, 8)]
_MASK64 = (1 << 64) - 1
_SIGNIFICAND_MASK = (1 << 52) - 1
_HIDDEN_BIT = 1 << 52
_INT_POW10 = [10**n for n in range(25)]  # DigitGen's kPow10 (uint32) is the first ten
_DOUBLE_BITS = struct.Struct("<d")
_UINT64 = struct.Struct("<Q")


def _cached_power(upper_e: int) -> tuple[int, int, int]:
    """GetCachedPower for the upper boundary's binary exponent: (c_mk's significand, s, K), DigitGen's
    unit being 2^-s (s = -Mp.e, 34 to 60) and the digits' scale 10^K."""
    dk = (-61 - upper_e) * 0.30102999566398114 + 347  # a double, as in C++
    k = int(dk)
    if dk - k > 0.0:
        k += 1
    index = (k >> 3) + 1
    c_f, c_e = _CACHED_POWERS[index]
    return c_f, -(upper_e + c_e + 64), 348 - 8 * index


_LOWEST_UPPER_E = -1137  # the upper boundary of the least subnormal: 3 << 62, exponent -1075 - 62


@functools.cache
def _power_table() -> list[tuple[int, int, int]]:
    """_cached_power of every upper-boundary exponent, made on the first write (not at start-up)."""
    return [_cached_power(e) for e in range(_LOWEST_UPPER_E, 961)]


def _times(f: int, g: int) -> int:
    """DiyFp's product's significand: the upper 64 bits of the 128-bit product, rounded half up."""
    return (f * g + (1 << 63)) >> 64


def _grisu_round(digits: str, delta: int, rest: int, ten_kappa: int, wp_w: int) -> str:
    """GrisuRound: lower the last digit while the text stays in the interval and nears the value
    (no wrap-around: the tests short-circuit as in C++, and rest stays at most delta)."""
    steps = 0
    while rest < wp_w and delta - rest >= ten_kappa and (
            rest + ten_kappa < wp_w or wp_w - rest > rest + ten_kappa - wp_w):
        steps += 1
        rest += ten_kappa
    return digits[:-1] + chr(ord(digits[-1]) - steps) if steps else digits


def _grisu2(bits: int) -> tuple[str, int]:
    """internal/dtoa.h's Grisu2 of a positive finite double's bits: (digits, K), the value being
    digits * 10^K."""
    biased_exponent, f = bits >> 52, bits & _SIGNIFICAND_MASK
    if biased_exponent:
        f |= _HIDDEN_BIT
        e = biased_exponent - 1075
    else:
        e = -1074
    # NormalizedBoundaries: the upper boundary's top bit at 63, the lower one on the same exponent
    upper = (f << 1) + 1
    shift = 64 - upper.bit_length()
    upper <<= shift
    upper_e = e - 1 - shift
    closer = 2 if f == _HIDDEN_BIT else 1  # below a power of two, the lower boundary is twice closer
    lower = ((f << closer) - 1) << (e - closer - upper_e)
    c_f, s, big_k = _power_table()[upper_e - _LOWEST_UPPER_E]
    w = _times(f << (64 - f.bit_length()), c_f)  # Normalize() * c_mk, on the same exponent as upper
    mp = (_times(upper, c_f) - 1) & _MASK64
    delta = (mp - ((_times(lower, c_f) + 1) & _MASK64)) & _MASK64
    wp_w = (mp - w) & _MASK64
    # DigitGen: the digits of Mp * 2^-s (its integer part p1 is 1 to 798,336,123: all its digits are
    # written, none above 9) up to the first place where what is cut off is at most delta
    for kappa in range(len(str(mp >> s)) - 1, -1, -1):
        unit = _INT_POW10[kappa] << s  # below 2^64 (10^kappa <= p1)
        rest = mp % unit
        if rest <= delta:
            return _grisu_round(str(mp // unit), delta, rest, unit, wp_w), big_k + kappa
    one = 1 << s
    p2 = mp & (one - 1)
    places = 0  # -kappa, kappa being unsigned in C++; delta * 10 stays below 2^64 (delta < p2 < 2^60)
    while True:
        p2 = p2 * 10 & (one - 1)
        delta *= 10
        places += 1
        if p2 < delta:  # strictly, here
            scale = _INT_POW10[places] if places < 9 else 0  # sic: kPow10 has no 10^9 and beyond
            digits = str(mp * _INT_POW10[places] >> s)
            return _grisu_round(digits, delta, p2, one, wp_w * scale & _MASK64), big_k - places


def _prettify(digits: str, k: int) -> str:
    """Prettify (maxDecimalPlaces 324 never truncates a double's at most 17 digits)."""
    length = len(digits)
    kk = length + k  # 10^(kk-1) <= value < 10^kk
    if k >= 0 and kk <= 21:
        return digits + "0" * k + ".0"  # 1234e7 -> 12340000000.0
    if 0 < kk <= 21:
        return f"{digits[:kk]}.{digits[kk:]}"  # 1234e-2 -> 12.34
    if -6 < kk <= 0:
        return "0." + "0" * -kk + digits  # 1234e-6 -> 0.001234
    if kk < -324:
        return "0.0"
    if length == 1:
        return f"{digits}e{kk - 1}"  # 1e30
    return f"{digits[0]}.{digits[1:]}e{kk - 1}"  # 1234e30 -> 1.234e33


def _repr_if_grisu_agrees(value: float, bits: int) -> str | None:
    """repr(value) where it is provably Grisu2's text: 1e-4 <= value < 2^53 (a fixed-point repr, both
    writers' forms), at most 15 significant digits, and that decimal at least 1/128 ulp inside
    the rounding interval. Then it is the interval's only decimal that short (the interval is
    narrower than their spacing) and none shorter is in it (repr is shortest and the boundaries
    have over 15 digits), and Grisu's error, at most 2 units of at least 2^62 (< 1/256 ulp) on
    each boundary, cannot exclude it: DigitGen stops on it and GrisuRound cannot move it."""
    text = float.__repr__(value)
    if "e" in text or value >= 9007199254740992.0:
        return None
    digits = text.replace(".", "").lstrip("0")
    if len(digits) > 15:
        return None
    places = len(text) - text.index(".") - 1
    f = bits & _SIGNIFICAND_MASK | _HIDDEN_BIT  # value = f * 2^e, e < 0 (not an integer)
    scale = _INT_POW10[places]
    # (decimal - value) * 10^places * 2^-e, against the half-gaps (a quarter ulp below a power of two)
    excess = (int(digits) << (1075 - (bits >> 52))) - f * scale
    if excess >= 0:
        return text if excess << 7 <= 63 * scale else None
    return text if -excess << 7 <= (31 if f == _HIDDEN_BIT else 63) * scale else None


def write_double(value: float) -> str:
    """The text RapidJSON 1.1.0's `Writer<StringBuffer>::Double` makes of `value` (internal/dtoa.h:
    Grisu2, then Prettify), bit for bit. Batsim keeps each job's description as this writer's text
    of the workload's job object (jobs.cpp) and reads it back to send JOB_SUBMITTED (protocol.cpp),
    so a workload's double reaches a scheduler through this text, which is not always Python's repr
    (Grisu2 is not always shortest). NaN and infinities: NumberError (`Double` returns false)."""
    value = float(value)
    if value.is_integer() and 0 < abs(value) < 9007199254740992.0:
        # exact shortcut: the integer is the interval's only text as short as its digits less trailing
        # zeros, and it lies ~2^-62 from Grisu's scaled value, far inside its narrowed interval
        return f"{int(value)}.0"
    bits = _UINT64.unpack(_DOUBLE_BITS.pack(value))[0]
    sign = "-" if bits >> 63 else ""
    bits &= _MASK64 >> 1
    if bits >= 0x7FF0000000000000:
        raise NumberError(f"{value!r} is not JSON (RapidJSON's Writer refuses it)", repr(value))
    if not bits:
        return sign + "0.0"  # -0.0 keeps its sign (RapidJSON issue #289)
    if bits >= 0x3F1A36E2EB1C432D:  # 1e-4: a short fixed-point repr may be Grisu's text
        text = _repr_if_grisu_agrees(abs(value), bits)
        if text is not None:
            return sign + text
    return sign + _prettify(*_grisu2(bits))


def job_value_as_sent(value: float) -> float:
    """A job's double (a workload's field) as a scheduler gets it in JOB_SUBMITTED: written by
    RapidJSON into the job's description, read back, then printed by Batsim with "%6f"."""
    if value.is_integer() and abs(value) < 2.0**53:  # written "N.0", read exactly, printed exactly
        return value
    return float(f"{_read_fraction(write_double(value)):f}")


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
        return json_loads(raw, parse_float=_read_fraction_or_inf)
    return json_loads(raw, parse_float=_read_fraction, parse_int=_read_integer, parse_constant=_refuse_constant)

"""Numbers as Batsim reads and writes them (schedlab.protocol.batsim_numbers) against RapidJSON itself:
a tiny reader and a tiny writer compiled against the Debian package Batsim is built with
(tests/rapidjson/read_numbers.cpp and write_numbers.cpp, marker `batsim`), value by value on random
and adversarial decimal strings and doubles; and, without a compiler, the values the issue found,
known texts of the writer and the hooks that use the reading."""

from __future__ import annotations

import math
import random
import re
import shutil
import struct
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from schedlab.protocol import batsim_numbers
from schedlab.protocol.batsim_numbers import NumberError, job_value_as_sent, loads, read_double, reads_as, write_double
from schedlab.protocol.messages import parse_reply
from tests.helpers.data import THOROUGH

READER_SOURCE = Path(__file__).resolve().parent / "rapidjson" / "read_numbers.cpp"
WRITER_SOURCE = Path(__file__).resolve().parent / "rapidjson" / "write_numbers.cpp"
RAPIDJSON = Path("/usr/include/rapidjson")


def bits(value: float) -> str:
    return struct.pack(">d", value).hex()


def test_a_seventeen_digit_timestamp_is_read_one_ulp_high():
    text = "26462.444038499998"  # easy-pp's CALL_ME_LATER where real Batsim and the engine diverged
    assert read_double(text) == 26462.444038500002 != float(text)
    assert read_double(text) - float(text) == pytest.approx(3.637978807091713e-12)
    assert reads_as(26462.444038499998) == 26462.444038500002


@pytest.mark.parametrize("text", ["0", "1", "-0.0", "5298.000012", "0.5", "1e-05", "123456789.123456",
                                  "4294967295", "4294967296", "9007199254740993", "18446744073709551615"])
def test_short_numbers_are_read_as_python_reads_them(text):
    assert bits(read_double(text)) == bits(float(text) if "." in text or "e" in text else float(int(text)))


@pytest.mark.parametrize("text", ["1e400", "NaN", "Infinity", "01", "1.", ".5", "+1", "1e", "--1", "", "1\u0663"])
def test_what_rapidjson_refuses_is_refused(text):
    with pytest.raises(NumberError):
        read_double(text)


def test_replies_are_read_as_batsim_reads_them():
    """The engine's Batsim side (`--external`) reads a decision process's reply with RapidJSON's
    reading: timestamps, `now` and a CALL_ME_LATER's time."""
    reply = ('{"now":26462.444038499998,"events":[{"timestamp":26462.444038499998,"type":"CALL_ME_LATER",'
             '"data":{"timestamp":26462.444038499998}}]}')
    now, [(ts, call)] = parse_reply(reply)
    assert now == ts == call.at_s == 26462.444038500002
    assert loads("[1, 2.5, 123456789012345678901234]") == [1, 2.5, read_double("123456789012345678901234")]
    with pytest.raises(NumberError):
        loads('{"now": NaN}')


def test_a_numpy_float_is_read_as_json_writes_it():
    import numpy as np

    value = 100.12525678901235
    assert reads_as(np.float64(value)) == reads_as(value) == read_double(repr(value))


def test_strict_reading_refuses_what_rapidjson_refuses_and_a_workload_names_its_line(tmp_path, capsys):
    from schedlab.cli import main

    with pytest.raises(NumberError):
        loads('{"now": 1' + "0" * 400 + "}")
    huge = tmp_path / "huge.json"  # an integer beyond any double in a field: the field is named
    for digits, said in ((400, "field 'walltime'"), (5000, "a number of more than 4,300 digits")):
        huge.write_text('{"nb_res": 4,\n"jobs": [\n{"id": 1, "subtime": 0, "res": 1, "walltime": 1' + "0" * digits
                        + ', "profile": "1"}\n],\n"profiles": {"1": {"type": "delay", "delay": 3}}}\n')
        assert main(["workload", "check", str(huge)]) == 2
        assert f"{huge}:3: {said}" in capsys.readouterr().err
    for token in ("NaN", "1e400"):  # in a field no check reads: Batsim still cannot load the file
        path = tmp_path / f"w{token}.json"
        path.write_text('{"nb_res": 4,\n"jobs": [\n{"id": 1, "subtime": 0, "res": 1, "walltime": 10, "profile": "1", '
                        f'"note": {token}}}\n],\n"profiles": {{"1": {{"type": "delay", "delay": 3}}}}}}\n')
        assert main(["workload", "check", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{path}:3:" in err and token in err and "RapidJSON" in err


def _adversarial(rng: random.Random, count: int) -> list[str]:
    """Decimal strings where a one-multiply reading goes wrong: 16 to 25 significant digits, halfway
    and near-halfway values, the integer loops' overflow limits, large and tiny exponents."""
    texts = ["26462.444038499998", "0.1", "0.3", "2.2250738585072011e-308", "4.9e-324", "1e-400", "1e308",
             "1.7976931348623157e308", "1.7976931348623159e308", "9007199254740993.5", "0.30000000000000004",
             "-0", "-0.0", "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
             "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
             "18446744073709551615", "18446744073709551616", "184467440737095516150.25", "1e22", "1e23",
             "8.98846567431158e307", "123456789012345678901234567890e-20", "0.0000000000000000000000000001",
             "1" + "0" * 310, "1" + "0" * 300 + "e8", "1e-2147483648", "0e999999999999"]
    for value in (2.0**53, 2.0**53 + 2, 2.0**64, 2.0**63):
        texts += [repr(value), f"{value:.0f}", f"{value:.0f}.5"]
    for _ in range(count):
        kind = rng.randrange(6)
        if kind == 0:  # repr of a random time, as Python's json writes it
            texts.append(repr(rng.uniform(0, 10 ** rng.randint(0, 9))))
        elif kind == 1:  # times with 16 to 20 significant digits
            whole = rng.randint(1, 10**rng.randint(1, 9))
            texts.append(f"{whole}.{rng.randint(0, 10**rng.randint(8, 14)):0{rng.randint(8, 14)}d}")
        elif kind == 2:  # long digit strings around a decimal point
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(1, 30))).lstrip("0") or "0"
            point = rng.randint(0, len(digits))
            whole, frac = digits[:point] or "0", digits[point:]
            texts.append(f"{'-' if rng.random() < 0.2 else ''}{whole.lstrip('0') or '0'}{'.' + frac if frac else ''}")
        elif kind == 3:  # exponents, large and small
            mantissa = f"{rng.randint(1, 9)}.{rng.randint(0, 10**16):016d}"
            texts.append(f"{mantissa}e{rng.randint(-340, 310)}")
        elif kind == 4:  # a double's exact halfway neighbour, printed with 17 to 25 digits
            value = rng.uniform(1, 1e7)
            texts.append(f"{value * (1 + 2**-53):.{rng.randint(10, 18)}f}")
        else:  # integers near the 32- and 64-bit limits
            base = rng.choice([2**31, 2**32, 2**53, 2**63, 2**64, 10**19])
            texts.append(f"{'-' if rng.random() < 0.3 else ''}{base + rng.randint(-20, 20)}")
    return texts


def _build(tmp_path_factory, source: Path) -> Path:
    compiler = shutil.which("g++") or shutil.which("c++")
    if not compiler:
        pytest.skip("no C++ compiler (scripts/install-batsim.sh installs one)")
    if not (RAPIDJSON / "document.h").exists():
        pytest.skip("RapidJSON's headers are absent (scripts/install-batsim.sh installs rapidjson-dev)")
    binary = tmp_path_factory.mktemp("rapidjson") / source.stem
    subprocess.run([compiler, "-std=c++17", "-O2", "-o", str(binary), str(source)], check=True)
    return binary


@pytest.fixture(scope="module")
def rapidjson_reader(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, READER_SOURCE)


@pytest.fixture(scope="module")
def rapidjson_writer(tmp_path_factory) -> Path:
    return _build(tmp_path_factory, WRITER_SOURCE)


@pytest.mark.batsim
def test_the_reading_equals_rapidjson_value_for_value(rapidjson_reader):
    texts = _adversarial(random.Random(41), 200_000 if THOROUGH else 20_000)
    done = subprocess.run([str(rapidjson_reader)], input="\n".join(texts) + "\n", capture_output=True, text=True,
                          check=True)
    theirs = done.stdout.split()
    assert len(theirs) == len(texts)
    differ = []
    for text, their in zip(texts, theirs, strict=True):
        try:
            ours = bits(read_double(text))
        except NumberError:
            ours = "error"
        if ours != their:
            differ.append((text, ours, their))
    assert not differ, f"{len(differ)} of {len(texts)} differ, first: {differ[:5]}"
    # the comparison has teeth: Python's own (correctly rounded) reading differs on many of them
    correctly_rounded = sum(1 for text, their in zip(texts, theirs, strict=True)
                            if their != "error" and bits(float(text)) != their)
    assert correctly_rounded > len(texts) // 50


@pytest.mark.parametrize("value, text", [
    (0.0, "0.0"), (-0.0, "-0.0"), (1.0, "1.0"), (-2.5, "-2.5"), (0.1, "0.1"), (12345.678, "12345.678"),
    (1e-5, "0.00001"), (1.5e-6, "0.0000015"), (1e-7, "1e-7"), (5e-324, "5e-324"), (2.0**53, "9007199254740992.0"),
    (1e20, "100000000000000000000.0"), (1.2345678901234568e20, "123456789012345680000.0"), (1e21, "1e21"),
    (1.5e21, "1.5e21"), (1e22, "1e22"), (1.7976931348623157e308, "1.7976931348623157e308"),
    # Grisu2 is not always shortest, nor the nearest of its length
    (1e23, "9.999999999999999e22"), (0.30000000000000004, "0.30000000000000007"),
    (924432081.5231045, "924432081.5231046"), (503737319.08263844, "503737319.08263847")])
def test_known_texts_of_rapidjsons_writer(value, text):
    assert write_double(value) == text


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_the_writer_refuses_nan_and_infinities(value):
    with pytest.raises(NumberError):
        write_double(value)


def test_a_jobs_double_as_a_scheduler_sees_it():
    """Written by RapidJSON into the job's description, read back, printed with 6 decimals: rarely
    another value than Python's repr read back would give."""
    value = 503737319.08263844
    assert read_double(repr(value)) == 503737319.0826384 and read_double(write_double(value)) == 503737319.0826385
    assert job_value_as_sent(value) == 503737319.082639 != float(f"{read_double(repr(value)):f}")
    assert job_value_as_sent(5298.000012) == 5298.000012 and job_value_as_sent(-0.0) == 0.0


def test_the_writers_constants_are_rapidjsons():
    """Grisu's cached powers, computed here, are the header's table; DigitGen's integer part is 1 to 9
    digits for every exponent (the digits are taken from str of it)."""
    for upper_e, (c_f, s, _k) in enumerate(batsim_numbers._power_table(), batsim_numbers._LOWEST_UPPER_E):
        assert 34 <= s <= 60, upper_e
        assert (batsim_numbers._times(1 << 63, c_f) - 1) >> s >= 1
        assert batsim_numbers._times((1 << 64) - 1, c_f) >> s < 10**9
    header = RAPIDJSON / "internal" / "diyfp.h"
    if not header.exists():
        pytest.skip("RapidJSON's headers are absent")
    text = header.read_text()
    table_f = text.split("kCachedPowers_F[] =")[1].split("};")[0]
    table_e = text.split("kCachedPowers_E[] =")[1].split("};")[0]
    theirs = list(zip([int(hi + lo, 16) for hi, lo in re.findall(r"0x([0-9a-f]{8}), 0x([0-9a-f]{8})", table_f)],
                      [int(n) for n in re.findall(r"-?\d+", table_e)], strict=True))
    assert theirs == batsim_numbers._CACHED_POWERS


def _doubles(rng: random.Random, count: int) -> list[float]:
    """Doubles for the writer: random bit patterns (every exponent, subnormals, NaN, infinities),
    random times (17 digits), short decimals (the exact shortcut), doubles beside powers of ten and
    halfway decimals, integers (near 2^53 too), around 1e21 where Prettify turns to exponents."""
    values = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
              1e21, 1e22, 1e23, 0.30000000000000004, math.nan, math.inf, -math.inf]
    for k in range(-323, 309):
        power = float(f"1e{k}")
        values += [power, math.nextafter(power, 0.0), math.nextafter(power, math.inf)]
    values += [2.0**k for k in range(-1074, 1024, 3)] + [2.0**53 + i for i in range(-40, 41)]
    while len(values) < count:
        kind = rng.randrange(6)
        if kind == 0:
            value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        elif kind == 1:  # a time's repr: up to 17 digits
            value = rng.uniform(0, 10 ** rng.randint(0, 9))
        elif kind == 2:  # a short decimal
            value = round(rng.uniform(0, 10 ** rng.randint(-4, 15)), rng.randint(0, 10))
        elif kind == 3:  # beside a halfway decimal
            halfway = float(f"{rng.randint(1, 10 ** rng.randint(1, 16))}5e{rng.randint(-30, 20)}")
            value = math.nextafter(halfway, rng.choice([0.0, math.inf]))
        elif kind == 4:  # an integer
            value = float(rng.randint(1, 2 ** rng.randint(1, 64)))
        else:  # where Prettify turns to exponents, and the powers of two's closer lower boundary
            value = rng.choice([rng.uniform(1e19, 1e23), rng.uniform(1e-8, 1e-5), 2.0 ** rng.randint(-1074, 1023)])
        values.append(-value if rng.random() < 0.2 else value)
    return values


@pytest.mark.batsim
def test_the_writing_equals_rapidjson_value_for_value(rapidjson_writer, rapidjson_reader):
    values = _doubles(random.Random(43), 200_000 if THOROUGH else 20_000)
    done = subprocess.run([str(rapidjson_writer)], input="".join(bits(value) + "\n" for value in values),
                          capture_output=True, text=True, check=True)
    theirs = done.stdout.split()
    assert len(theirs) == len(values)
    differ = []
    for value, their in zip(values, theirs, strict=True):
        try:
            ours = write_double(value)
        except NumberError:
            ours = "error"
        if ours != their:
            differ.append((value, ours, their))
    assert not differ, f"{len(differ)} of {len(values)} differ, first: {differ[:5]}"
    # the comparison has teeth: RapidJSON's text often is another decimal than repr's (Grisu2 is not
    # always shortest, nor the nearest of its length), sometimes a longer one
    texts = [(value, their) for value, their in zip(values, theirs, strict=True) if their != "error"]
    other = [(value, their) for value, their in texts if Decimal(their) != Decimal(repr(value))]
    longer = [(value, their) for value, their in other
              if len(Decimal(their).as_tuple().digits) > len(Decimal(repr(value)).as_tuple().digits)]
    assert len(other) > len(values) // 20 and longer
    assert all(float(their) == value for value, their in texts)  # yet they round-trip (correctly rounded)
    # and Batsim reads them back as read_double does
    done = subprocess.run([str(rapidjson_reader)], input="".join(their + "\n" for _value, their in texts),
                          capture_output=True, text=True, check=True)
    assert [bits(read_double(their)) for _value, their in texts] == done.stdout.split()

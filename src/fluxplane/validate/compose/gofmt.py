"""Go's ``fmt.Sprintf`` over decoded JSON values, for the ``Format`` string transform and ``string`` combines.

function-patch-and-transform formats with Go's fmt, so a composition's output depends on its rules: an
integer from the XR is an ``int64`` (``%s`` of it prints ``%!s(int64=3)``), a missing argument prints
``%!s(MISSING)``, an unused one ``%!(EXTRA string=x)``, maps print as ``map[k:v]`` with sorted keys and
arrays as ``[a b]``. Supported: the verbs ``v s q d b o O x X c U t e E f F g G %`` (not ``b x X`` of a
float: those print as a wrong verb), the flags ``+ - # 0`` and space, width and precision (also
``*``), and explicit argument indexes (``%[2]s``).
Values are what a JSON document decodes to: str, int (int64), float (float64), bool, None, list, dict.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from fluxplane.validate.compose.fieldpath import go_type

_MAX_NUM = 1_000_000


@dataclass
class _Flags:
    plus: bool = False
    minus: bool = False
    sharp: bool = False
    space: bool = False
    zero: bool = False
    plus_v: bool = False
    sharp_v: bool = False
    width: int | None = None
    precision: int | None = None


def _pad(text: str, flags: _Flags, numeric: bool = False) -> str:
    width = flags.width
    if width is None or len(text) >= width:
        return text
    fill = width - len(text)
    if flags.minus:
        return text + " " * fill
    if flags.zero and numeric:
        sign = text[0] if text[:1] in ("+", "-", " ") else ""
        return sign + "0" * fill + text[len(sign) :]
    return " " * fill + text


def _quote(text: str, ascii_only: bool = False) -> str:
    """strconv.Quote: Go escapes, non-printable runes as \\x, \\u or \\U."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char in "\a\b\f\n\r\t\v":
            out.append(
                {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}[char]
            )
        elif char.isprintable() and (code < 0x80 or not ascii_only):
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-trip decimal digits of ``abs(value)`` and the decimal point position."""
    _, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    text = "".join(str(digit) for digit in digits).rstrip("0")
    assert isinstance(exponent, int)
    if not text:
        return "0", 1
    point = len(digits) + exponent
    return text, point


def format_float(value: float, verb: str, precision: int | None, flags: _Flags | None = None) -> str:
    """strconv.FormatFloat with Go's %e/%f/%g rules (precision None is the shortest representation)."""
    flags = flags or _Flags()
    if math.isnan(value):
        text = "NaN"
    elif math.isinf(value):
        text = "+Inf" if value > 0 else "-Inf"
        if value > 0 and not flags.plus:
            text = "Inf" if not flags.space else " Inf"
    else:
        text = _finite(value, verb, precision)
        if flags.plus and not text.startswith("-"):
            text = "+" + text
        elif flags.space and not text.startswith("-"):
            text = " " + text
    return text


def _exp_suffix(exponent: int, upper: bool) -> str:
    sign = "-" if exponent < 0 else "+"
    return ("E" if upper else "e") + sign + f"{abs(exponent):02d}"


def _finite(value: float, verb: str, precision: int | None) -> str:
    negative = math.copysign(1.0, value) < 0
    prefix = "-" if negative else ""
    upper = verb in ("E", "G")
    lower = verb.lower()
    if lower == "f":
        if precision is None:
            digits, point = _shortest_digits(value)
            if point <= 0:
                body = "0." + "0" * -point + digits
            elif point >= len(digits):
                body = digits + "0" * (point - len(digits))
            else:
                body = digits[:point] + "." + digits[point:]
            return prefix + body
        return prefix + f"{abs(value):.{precision}f}"
    if lower == "e":
        if precision is None:
            digits, point = _shortest_digits(value)
            mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
            exponent = point - 1 if digits != "0" else 0
            return prefix + mantissa + _exp_suffix(exponent, upper)
        text = f"{abs(value):.{precision}e}"
        mantissa, _, exponent_text = text.partition("e")
        return prefix + mantissa + _exp_suffix(int(exponent_text), upper)
    # g / G
    if precision is None:
        # strconv's shortest %g: %e when the exponent is below -4 or at least 6
        digits, point = _shortest_digits(value)
        if digits == "0":
            return prefix + "0"
        exponent = point - 1
        if exponent < -4 or exponent >= 6:
            mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
            return prefix + mantissa + _exp_suffix(exponent, upper)
        if point <= 0:
            return prefix + "0." + "0" * -point + digits
        if point >= len(digits):
            return prefix + digits + "0" * (point - len(digits))
        return prefix + digits[:point] + "." + digits[point:]
    text = f"{abs(value):.{max(precision, 1)}g}"
    if "e" in text:
        mantissa, _, exponent_text = text.partition("e")
        text = mantissa + _exp_suffix(int(exponent_text), upper)
    return prefix + text


def _fmt_integer(value: int, verb: str, flags: _Flags) -> str | None:
    negative = value < 0
    magnitude = abs(value)
    if verb in ("v", "d"):
        digits = str(magnitude)
    elif verb == "b":
        digits = format(magnitude, "b")
    elif verb in ("o", "O"):
        digits = format(magnitude, "o")
    elif verb == "x":
        digits = format(magnitude, "x")
    elif verb == "X":
        digits = format(magnitude, "X")
    elif verb == "c":
        return _pad(chr(value) if 0 <= value <= 0x10FFFF else "\ufffd", flags)
    elif verb == "q":
        char = chr(value) if 0 <= value <= 0x10FFFF else "\ufffd"
        inner = "\\'" if char == "'" else '"' if char == '"' else _quote(char)[1:-1]
        return _pad("'" + inner + "'", flags)
    elif verb == "U":
        return _pad(f"U+{value:04X}", flags)
    else:
        return None
    if flags.precision is not None:
        digits = digits.rjust(flags.precision, "0") if not (flags.precision == 0 and magnitude == 0) else ""
    if flags.sharp:
        digits = {"b": "0b", "o": "0", "x": "0x", "X": "0X"}.get(verb, "") + digits
    if verb == "O":
        digits = "0o" + digits
    sign = "-" if negative else "+" if flags.plus else " " if flags.space else ""
    zero_ok = flags.precision is None
    return _pad(sign + digits, flags, numeric=zero_ok)


def _fmt_float(value: float, verb: str, flags: _Flags) -> str | None:
    default: int | None
    if verb == "v":
        verb, default = "g", None
    elif verb in ("g", "G"):
        default = None
    elif verb in ("e", "E", "f", "F"):
        default = 6
    else:
        # %b, %x and %X of a float (binary and hexadecimal exponents) are not implemented
        return None
    precision = flags.precision if flags.precision is not None else default
    text = format_float(value, "f" if verb == "F" else verb, precision, flags)
    return _pad(text, flags, numeric=not math.isinf(value) and not math.isnan(value))


def _fmt_string(value: str, verb: str, flags: _Flags) -> str | None:
    if flags.precision is not None:
        value = value[: flags.precision]
    if verb == "v" and flags.sharp_v:
        return _pad(_quote(value), flags)
    if verb in ("v", "s"):
        return _pad(value, flags)
    if verb in ("x", "X"):
        data = value.encode()
        hexed = data.hex() if verb == "x" else data.hex().upper()
        if flags.space:
            prefix = ("0x" if verb == "x" else "0X") if flags.sharp else ""
            hexed = " ".join(prefix + hexed[i : i + 2] for i in range(0, len(hexed), 2))
        elif flags.sharp:
            hexed = ("0x" if verb == "x" else "0X") + hexed
        return _pad(hexed, flags)
    if verb == "q":
        if flags.sharp and "`" not in value and all(c.isprintable() or c == "\t" for c in value):
            return _pad("`" + value + "`", flags)
        return _pad(_quote(value, ascii_only=flags.plus), flags)
    return None


class _Printer:
    def __init__(self) -> None:
        self.out: list[str] = []

    def bad_verb(self, verb: str, value: Any, present: bool) -> None:
        if not present:
            self.out.append(f"%!{verb}(<nil>)")
            return
        self.out.append(f"%!{verb}({go_type(value)}=")
        self.print_value(value, "v", _Flags(), depth=1)
        self.out.append(")")

    def print_arg(self, value: Any, verb: str, flags: _Flags) -> None:
        if value is None:
            if verb in ("T", "v"):
                self.out.append(_pad("<nil>", flags))
            else:
                self.bad_verb(verb, None, present=False)
            return
        if verb == "T":
            self.out.append(_pad(go_type(value), flags))
            return
        self.print_value(value, verb, flags, depth=0)

    def print_value(self, value: Any, verb: str, flags: _Flags, depth: int) -> None:
        text: str | None
        if value is None:
            # a null element of an array or map (an interface holding nil)
            self.out.append("<nil>")
            return
        if isinstance(value, bool):
            text = _pad("true" if value else "false", flags) if verb in ("t", "v") else None
        elif isinstance(value, int):
            text = _fmt_integer(value, verb, flags)
        elif isinstance(value, float):
            text = _fmt_float(value, verb, flags)
        elif isinstance(value, str):
            text = _fmt_string(value, verb, flags)
        elif isinstance(value, dict):
            self.out.append("map[")
            for index, key in enumerate(sorted(value)):
                if index:
                    self.out.append(" ")
                self.print_value(key, verb, flags, depth + 1)
                self.out.append(":")
                self.print_value(value[key], verb, flags, depth + 1)
            self.out.append("]")
            return
        elif isinstance(value, list):
            self.out.append("[")
            for index, item in enumerate(value):
                if index:
                    self.out.append(" ")
                self.print_value(item, verb, flags, depth + 1)
            self.out.append("]")
            return
        else:
            text = None
        if text is None:
            self.bad_verb(verb, value, present=True)
        else:
            self.out.append(text)


def _parse_number(text: str, start: int, end: int) -> tuple[int | None, int]:
    index = start
    number = 0
    while index < end and text[index].isdigit() and text[index].isascii():
        number = number * 10 + int(text[index])
        if number > _MAX_NUM:
            return None, index
        index += 1
    return (number if index > start else None), index


def sprintf(fmt: str, args: list[Any]) -> str:
    """``fmt.Sprintf(fmt, args...)`` as Go prints these values."""
    printer = _Printer()
    out = printer.out
    arg_num = 0
    reordered = False
    end = len(fmt)
    i = 0
    while i < end:
        good_arg_num = True
        start = i
        while i < end and fmt[i] != "%":
            i += 1
        if i > start:
            out.append(fmt[start:i])
        if i >= end:
            break
        i += 1
        flags = _Flags()
        while i < end and fmt[i] in "#0+- ":
            char = fmt[i]
            if char == "#":
                flags.sharp = True
            elif char == "0":
                flags.zero = not flags.minus
            elif char == "+":
                flags.plus = True
            elif char == "-":
                flags.minus = True
                flags.zero = False
            else:
                flags.space = True
            i += 1

        def arg_number(position: int) -> tuple[int, bool, bool]:
            """(new position, index was given, the given index is good); sets arg_num when good."""
            nonlocal arg_num, reordered
            if position >= end or fmt[position] != "[":
                return position, False, True
            reordered = True
            close = fmt.find("]", position + 1)
            if close < 0:
                return position + 1, False, False
            number, stop = _parse_number(fmt, position + 1, close)
            if number is None or stop != close or not 1 <= number <= len(args):
                return close + 1, False, False
            arg_num = number - 1
            return close + 1, True, True

        i, after_index, ok = arg_number(i)
        good_arg_num = good_arg_num and ok
        if i < end and fmt[i] == "*":
            i += 1
            if arg_num < len(args) and isinstance(args[arg_num], int) and not isinstance(args[arg_num], bool):
                width = args[arg_num]
                if width < 0:
                    flags.minus, flags.zero, width = True, False, -width
                flags.width = width
            else:
                out.append("%!(BADWIDTH)")
            arg_num += 1
            after_index = False
        else:
            flags.width, i = _parse_number(fmt, i, end)
            if after_index and flags.width is not None:
                good_arg_num = False
        if i + 1 < end and fmt[i] == ".":
            i += 1
            if after_index:
                good_arg_num = False
            i, after_index, ok = arg_number(i)
            good_arg_num = good_arg_num and ok
            if i < end and fmt[i] == "*":
                i += 1
                if arg_num < len(args) and isinstance(args[arg_num], int) and not isinstance(args[arg_num], bool):
                    flags.precision = args[arg_num] if args[arg_num] >= 0 else None
                else:
                    out.append("%!(BADPREC)")
                arg_num += 1
                after_index = False
            else:
                flags.precision, i = _parse_number(fmt, i, end)
                if flags.precision is None:
                    flags.precision = 0
        if not after_index:
            i, after_index, ok = arg_number(i)
            good_arg_num = good_arg_num and ok
        if i >= end:
            out.append("%!(NOVERB)")
            break
        verb = fmt[i]
        i += 1
        if verb == "%":
            out.append("%")
        elif not good_arg_num:
            out.append(f"%!{verb}(BADINDEX)")
        elif arg_num >= len(args):
            out.append(f"%!{verb}(MISSING)")
        else:
            if verb == "v":
                flags.sharp_v, flags.sharp = flags.sharp, False
                flags.plus_v, flags.plus = flags.plus, False
            printer.print_arg(args[arg_num], verb, flags)
            arg_num += 1
    if not reordered and arg_num < len(args):
        out.append("%!(EXTRA ")
        for index, arg in enumerate(args[arg_num:]):
            if index:
                out.append(", ")
            if arg is None:
                out.append("<nil>")
            else:
                out.append(go_type(arg) + "=")
                printer.print_arg(arg, "v", _Flags())
        out.append(")")
    return "".join(out)


def go_json(value: Any) -> str:
    """encoding/json.Marshal of decoded JSON: sorted keys, no spaces, HTML characters escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _json_default(value: Any) -> Any:
    raise TypeError(f"json: unsupported type: {type(value).__name__}")

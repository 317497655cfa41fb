"""Properties of fluxplane's YAML writer over generated strings: every string reads back as the same
string in YAML 1.2, which the controllers, kustomize and Flux read dist/ with, and in YAML 1.1."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from fluxplane.core.codec import dump_documents, dump_value, parse_documents

YAML_1_2 = YAML(typ="safe", pure=True)


def _joined(*parts: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.tuples(*parts).map("".join)


def _maybe(part: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(part, st.just(""))


#: Digits, with the ``_`` separators go-yaml skips.
digits = st.text("0123456789_", min_size=1, max_size=6)
sign = st.sampled_from(["", "+", "-"])
exponent = _joined(st.sampled_from("eE"), sign, digits)
#: Numbers in the notations YAML readers know (exponents, 0o/0x/0b prefixes, leading zeros and dots,
#: infinities), with a sign or not, and near misses that a stray character makes strings again.
number_like = _joined(
    sign,
    st.one_of(
        _joined(digits, _maybe(_joined(st.just("."), _maybe(digits))), exponent),
        _joined(
            st.sampled_from(["0o", "0O", "0x", "0X", "0b", "0B"]),
            st.text("0123456789abcdefABCDEF_", min_size=1, max_size=6),
        ),
        _joined(digits, _maybe(_joined(st.just("."), _maybe(digits)))),
        _joined(st.just("."), digits, _maybe(exponent)),
        st.sampled_from([".inf", ".Inf", ".INF", ".nan", ".NaN"]),
    ),
    st.sampled_from(["", "", "", "m", ":", " ", "a", "."]),
)
keywords = st.sampled_from(
    ["y", "n", "Y", "N", "yes", "No", "on", "OFF", "true", "False", "null", "~", "Null", "=", "<<", ""]
)


def _round_trips(value: str) -> None:
    document = {"value": value, "keys": {value: [value]}}
    text = dump_documents([document])
    assert YAML_1_2.load(text) == document
    assert YAML_1_2.load(dump_value([value])) == [value]
    assert parse_documents(text) == [document]


@given(number_like)
def test_number_like_strings_read_back_as_themselves_in_yaml_1_2_and_1_1(value: str) -> None:
    # GIVEN a string that some YAML reader takes for a number, or nearly
    # WHEN fluxplane writes it as a value, a key and a list item, in a document and in a patch
    # THEN a YAML 1.2 reader and a YAML 1.1 reader get the same strings back
    _round_trips(value)


@given(st.one_of(keywords, st.text()))
def test_any_string_reads_back_as_itself_in_yaml_1_2_and_1_1(value: str) -> None:
    # GIVEN YAML's words for booleans and null, or any text: control characters, line breaks, quotes,
    # indicators, any Unicode
    # WHEN / THEN it reads back unchanged, as above
    _round_trips(value)

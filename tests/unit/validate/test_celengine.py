"""Tests for fluxplane.validate.celengine: the two dialects, compiling once, running, and the Kubernetes
library functions written in Python."""

from __future__ import annotations

from fluxplane.validate.celengine import FLUX, KUBERNETES, CelResult, Compiled, compile_expression, without_literals


def test_expressions_are_compiled_once() -> None:
    assert compile_expression("self.a == 1") is compile_expression("self.a == 1")
    assert compile_expression("status.?x.orValue(1) == 1", FLUX).program is not None
    assert compile_expression("self.a ==").error.startswith("Syntax error")


def test_the_kubernetes_library_functions_run_in_the_flux_dialect_too() -> None:
    # GIVEN an expression using isCIDR, isSorted, find and the sets extension, compiled for Flux
    compiled = compile_expression(
        "isCIDR('10.0.0.0/16') && [1, 2].isSorted() && 'ab12'.find('[0-9]+') == '12' && sets.intersects([1], [1, 2])",
        FLUX,
    )
    # WHEN run THEN each function answers as Kubernetes' does
    assert compiled.program is not None
    assert compiled.program.run({}) == CelResult(value=True)


def test_a_missing_key_and_a_failing_library_function_are_errors_not_values() -> None:
    # GIVEN a rule reading a key the value lacks, and one taking the minimum of an empty list
    missing = compile_expression("self.a == 1", KUBERNETES).program
    least = compile_expression("self.items.min()", KUBERNETES).program
    assert missing is not None and least is not None
    # WHEN run THEN each gives the engine's error as the API server words it, and no value
    assert missing.returns == "bool"
    assert missing.run({"self": {}}) == CelResult(error="no such key: a")
    assert least.run({"self": {"items": []}}) == CelResult(error="min called on empty list")


def test_a_function_the_engine_lacks_does_not_compile() -> None:
    # GIVEN a Kubernetes library function fluxplane does not provide WHEN compiled THEN the reason is kept
    assert compile_expression('quantity("1Gi")') == Compiled(
        None, "undeclared reference to 'quantity' (in container '')"
    )


def test_without_literals_empties_every_string_literal() -> None:
    # GIVEN an expression with quoted and raw strings WHEN emptied THEN only the identifiers are left to read
    assert without_literals("oldSelf == 'oldSelf' && \"x\" == r'y'") == "oldSelf == '' && '' == ''"

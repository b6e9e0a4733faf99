"""`tileir run --check 'argN = EXPR'`: EXPR is Python evaluated in one namespace (lambdas and
comprehensions see argN and np), with the user's rights and no pretended sandbox, as the help,
the README and the notebook say; an expression that is not Python, or fails, is a one-line
error (exit 2), never a traceback, and a syntax error stops the command before the kernel runs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from compiler import cli
from compiler.runtime.argspec import SpecError, parse_check, run_check
from tests.corpus import REPO, VADD_RUN_ARGS, read

VADD = REPO / "examples" / "vector_add.tileir"
VADD_ARGS = ("run", str(VADD), *VADD_RUN_ARGS)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = cli.main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return status, out, err


def _vectors() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.array([1.0, 2.0, 3.0], np.float32)
    y = np.array([10.0, 20.0, 40.0], np.float32)
    return x, y, x + y


@pytest.mark.parametrize(
    "text",
    [
        "arg2 = (lambda x: x + arg1)(arg0)",  # the lambda's body sees arg1 (one namespace)
        "arg2 = (lambda: np.add(arg0, arg1))()",  # ... and np
        "arg2 = np.array([a + b for a, b in zip(arg0, arg1)])",  # a comprehension's scope too
        "arg2 = arg0 + arg1 * (len(arg0) // 3)",  # builtins are there
    ],
)
def test_python_expressions_see_the_arguments(text: str) -> None:
    x, y, z = _vectors()
    outcome = run_check(parse_check(text), [x, y, np.zeros_like(z)], [x, y, z], None, None)
    assert outcome.ok, outcome.message


def test_a_wrong_lambda_result_fails_the_check() -> None:
    x, y, z = _vectors()
    outcome = run_check(parse_check("arg2 = (lambda x: x - arg1)(arg0)"), [x, y, z * 0], [x, y, z], None, None)
    assert not outcome.ok and "FAILED: 3 of 3 elements differ" in outcome.message


def test_the_expression_is_python_with_the_users_rights(tmp_path) -> None:
    """What the help documents: no sandbox. The expression can reach anything Python can (here,
    import a module and read a file), so nobody is led to think untrusted text is safe there."""
    data = tmp_path / "ref.npy"
    np.save(data, np.array([11.0, 22.0, 43.0], np.float32))
    x, y, z = _vectors()
    text = f"arg2 = __import__('numpy').load({str(data)!r})"
    outcome = run_check(parse_check(text), [x, y, z * 0], [x, y, z], None, None)
    assert outcome.ok, outcome.message  # the file holds arg0 + arg1


def test_help_and_docs_say_it_is_python_with_the_users_rights(capsys) -> None:
    assert cli.main(["run", "--help"]) == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Python" in help_text and "with your rights" in help_text and "not a sandbox" in help_text
    readme = read(REPO / "README.md")
    row = next(line for line in readme.splitlines() if line.lstrip().startswith("--check 'argN = EXPR'"))
    block = readme[readme.index(row) : readme.index(row) + 600]
    assert "Python" in row and "with your rights" in block and "not a sandbox" in block
    magic = read(REPO / "tile_kernel" / "magic.py")
    assert "EXPR runs with your rights" in magic and "no sandbox" in magic
    assert "sandbox" not in read(REPO / "compiler" / "runtime" / "argspec.py").replace("no sandbox", "")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("arg2 = arg0 +", "not a Python expression: invalid syntax"),
        ("arg2 = (arg0 + arg1", "not a Python expression: '(' was never closed"),
        ("arg2 = x = 1", "not a Python expression"),  # a statement, not an expression
    ],
)
def test_an_expression_that_is_not_python_is_refused_before_the_run(capsys, text: str, reason: str) -> None:
    with pytest.raises(SpecError, match="^--check '.*': " + re.escape(reason)):
        parse_check(text)
    status, out, err = run(capsys, *VADD_ARGS, "--check", text)
    assert status == 2
    assert err.count("\n") == 1 and err.startswith(f"tileir: error: --check '{text}': not a Python expression")
    assert "kernel @" not in out  # refused before the launch


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("arg2 = arg0[99999]", "IndexError"),
        ("arg2 = (lambda x: x + nosuch)(arg0)", "NameError: name 'nosuch' is not defined"),
        ("arg2 = arg0.reshape(7, 3)", "ValueError"),
        ("arg2 = [arg0, 'x']", "ValueError"),
        ("arg2 = 'abc'", "TypeError: it gives a str_, not real numbers"),  # was an internal error
        ("arg2 = np.array(['1.0'] * 4000)", "it gives a str_, not real numbers"),  # was taken as numbers
        ("arg2 = np.zeros(4000, complex)", "it gives complex numbers, not real numbers"),
    ],
)
def test_an_expression_that_fails_is_a_one_line_error(capsys, text: str, error: str) -> None:
    status, out, err = run(capsys, *VADD_ARGS, "--check", text)
    assert status == 2
    assert err.count("\n") == 1, err
    assert err.startswith(f"tileir: error: --check '{text}': cannot evaluate the expression: ")
    assert error in err


def test_a_multi_line_expression_gives_one_line(capsys) -> None:
    text = "arg2 = (arg0 +\n  nosuch)"
    status, _, err = run(capsys, *VADD_ARGS, "--check", text)
    assert status == 2 and err.count("\n") == 1
    assert "--check 'arg2 = (arg0 + nosuch)': cannot evaluate the expression: NameError" in err


def test_lambda_through_the_command(capsys) -> None:
    status, out, _ = run(capsys, *VADD_ARGS, "-q", "--check", "arg2 = (lambda x: x + arg1)(arg0)")
    assert status == 0, out
    status, out, _ = run(capsys, *VADD_ARGS, "--check", "arg2 = (lambda x: x + arg1)(arg0)")
    assert status == 0 and "check arg2 = (lambda x: x + arg1)(arg0): ok (4000 elements" in out


def test_a_nan_on_one_side_only_is_counted_in_the_verdict() -> None:
    """The largest error is taken over finite differences; a result that is NaN where a number
    was expected (or the reverse) is said, or "max abs error 0" beside FAILED would mislead."""
    x, y, z = _vectors()
    outcome = run_check(parse_check("arg2 = (arg0 + arg1) * float('nan')"), [x, y, z * 0], [x, y, z], None, None)
    assert not outcome.ok
    assert f"{z.size} of them NaN on one side only" in outcome.message

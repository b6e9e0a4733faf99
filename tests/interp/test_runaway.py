"""Runaway kernels: a `loop` whose `break` never fires and a `for` over 0..2^63 stop at the
launch's step budget (`RunOptions.max_steps`, `tileir run --max-steps`) or time limit
(`timeout`, `--timeout`) with a one-line report naming the loop's line and a tile block
still in it, through `launch`, the CLI (exit status 1) and, for the time limit, under
Triton's interpreter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compiler import cli
from compiler.cli import launch as cli_launch
from compiler.interp import DEFAULT_MAX_STEPS, InterpError, Machine, RunOptions
from compiler.runtime import find_kernel, launch, load_module
from tests.corpus import REPO
from tests.interp.util import kernel

# The break's condition (%i < 0) never holds: %i counts up from 0.
LOOP = kernel("""
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %r = loop iter_values(%i = %c0) : tile<i32> -> tile<i32> {
      %neg = cmpi less_than %i, %c0, signed : tile<i32> -> tile<i1>
      if %neg {
        break %i : tile<i32>
      }
      %n = addi %i, %c1 : tile<i32>
      continue %n : tile<i32>
    }
""")

# 2^63 - 1 iterations.
FOR = kernel("""
    %c0 = constant <i64: 0> : tile<i64>
    %c1 = constant <i64: 1> : tile<i64>
    %top = constant <i64: 9223372036854775807> : tile<i64>
    %s = for %iv in (%c0 to %top, step %c1) : tile<i64> iter_values(%acc = %c0) -> (tile<i64>) {
      %n = addi %acc, %iv : tile<i64>
      continue %n : tile<i64>
    }
""")

RUNAWAYS = {"loop": LOOP, "for": FOR}


def line_of(text: str, start: str) -> tuple[int, int]:
    """(line, column), 1-based, of the op written as `start` (e.g. `%r = loop`) in `text`."""
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(start):
            return n, len(line) - len(line.lstrip()) + 1
    raise AssertionError(f"{start!r} is not in the kernel")


def loop_line(text: str, mnemonic: str) -> str:
    """`line:col` of the first `mnemonic` op (`%x = loop ...` / `%x = for ...`)."""
    for n, line in enumerate(text.splitlines(), 1):
        code = line.lstrip()
        if code.partition("=")[2].lstrip().startswith(mnemonic + " "):
            return f"{n}:{len(line) - len(code) + 1}"
    raise AssertionError(f"no {mnemonic} in the kernel")


def run_machine(text: str, grid=(1,), **options) -> tuple[Machine, InterpError | None]:
    module = load_module(text)
    machine = Machine(module, options=RunOptions(**options))
    try:
        machine.run(find_kernel(module, None), grid, [])
    except InterpError as e:
        return machine, e
    return machine, None


@pytest.mark.parametrize("mnemonic", ["loop", "for"])
def test_runaway_stops_at_the_step_budget_naming_the_loop(mnemonic):
    text = RUNAWAYS[mnemonic]
    # 16 blocks run as one group: one iteration of the group counts once.
    machine, error = run_machine(text, grid=(16,), max_steps=500)
    assert error is not None
    assert machine.steps == 501  # the 501st iteration was refused
    report = str(error)
    assert report.startswith(f"<input>:{loop_line(text, mnemonic)}: error: {mnemonic}: ")
    assert "ran past 500 loop iterations (--max-steps 500)" in report
    assert "(tile block (0, 0, 0))" in report
    assert "\n" not in report


@pytest.mark.parametrize("mnemonic", ["loop", "for"])
def test_runaway_through_launch(mnemonic):
    with pytest.raises(InterpError) as e:
        launch(RUNAWAYS[mnemonic], grid=(3, 2), backend="cpu", options=RunOptions(max_steps=300))
    assert f":{loop_line(RUNAWAYS[mnemonic], mnemonic)}: error: {mnemonic}: " in str(e.value)
    assert "--max-steps 300" in str(e.value)


def test_the_budget_counts_every_group_of_the_launch():
    # 10 iterations per group; group_budget=1 runs each of the 8 blocks as its own group.
    text = kernel("""
        %c0 = constant <i32: 0> : tile<i32>
        %c1 = constant <i32: 1> : tile<i32>
        %c10 = constant <i32: 10> : tile<i32>
        %s = for %iv in (%c0 to %c10, step %c1) : tile<i32> iter_values(%a = %c0) -> (tile<i32>) {
          %n = addi %a, %iv : tile<i32>
          continue %n : tile<i32>
        }
    """)
    machine, error = run_machine(text, grid=(8,), group_budget=1, max_steps=80)
    assert error is None and machine.steps == 80
    machine, error = run_machine(text, grid=(8,), group_budget=1, max_steps=79)
    assert error is not None and "(tile block (7, 0, 0))" in str(error)
    # One group of 8 blocks: 10 iterations in all.
    machine, error = run_machine(text, grid=(8,), max_steps=10)
    assert error is None and machine.steps == 10


def test_the_block_named_is_one_still_looping():
    # Every block but x = 3 breaks at iteration x; block 3 never does.
    text = kernel("""
        %bx, %by, %bz = get_tile_block_id : tile<i32>
        %c0 = constant <i32: 0> : tile<i32>
        %c1 = constant <i32: 1> : tile<i32>
        %c3 = constant <i32: 3> : tile<i32>
        %r = loop iter_values(%i = %c0) : tile<i32> -> tile<i32> {
          %at = cmpi equal %i, %bx, signed : tile<i32> -> tile<i1>
          %not3 = cmpi not_equal %bx, %c3, signed : tile<i32> -> tile<i1>
          %stop = andi %at, %not3 : tile<i1>
          if %stop {
            break %i : tile<i32>
          }
          %n = addi %i, %c1 : tile<i32>
          continue %n : tile<i32>
        }
    """)
    _, error = run_machine(text, grid=(6,), max_steps=200)
    assert error is not None and "(tile block (3, 0, 0))" in str(error)


def test_the_loop_named_is_the_one_that_ran_longest():
    # An outer loop that never ends around a `for` of 4 iterations: the budget runs out
    # inside the `for`, but the runaway is the outer loop.
    outer = kernel("""
        %c0 = constant <i32: 0> : tile<i32>
        %c1 = constant <i32: 1> : tile<i32>
        %c4 = constant <i32: 4> : tile<i32>
        %r = loop iter_values(%i = %c0) : tile<i32> -> tile<i32> {
          %neg = cmpi less_than %i, %c0, signed : tile<i32> -> tile<i1>
          if %neg {
            break %i : tile<i32>
          }
          %s = for %iv in (%c0 to %c4, step %c1) : tile<i32> iter_values(%a = %i) -> (tile<i32>) {
            %n = addi %a, %c1 : tile<i32>
            continue %n : tile<i32>
          }
          continue %s : tile<i32>
        }
    """)
    _, error = run_machine(outer, max_steps=1000)
    assert error is not None
    assert str(error).startswith(f"<input>:{loop_line(outer, 'loop')}: error: loop: ")
    # A runaway `for` inside a `for` of 3 iterations: the inner one is named.
    inner = kernel("""
        %c0 = constant <i64: 0> : tile<i64>
        %c1 = constant <i64: 1> : tile<i64>
        %c3 = constant <i64: 3> : tile<i64>
        %top = constant <i64: 9223372036854775807> : tile<i64>
        %o = for %j in (%c0 to %c3, step %c1) : tile<i64> iter_values(%b = %c0) -> (tile<i64>) {
          %s = for %iv in (%c0 to %top, step %c1) : tile<i64> iter_values(%a = %b) -> (tile<i64>) {
            %n = addi %a, %iv : tile<i64>
            continue %n : tile<i64>
          }
          continue %s : tile<i64>
        }
    """)
    _, error = run_machine(inner, max_steps=1000)
    assert error is not None
    inner_line, _ = line_of(inner, "%s = for")
    assert str(error).startswith(f"<input>:{inner_line}:")


def test_timeout_stops_a_runaway_without_a_step_budget():
    start = time.perf_counter()
    _, error = run_machine(LOOP, max_steps=0, timeout=0.3)
    elapsed = time.perf_counter() - start
    assert error is not None
    report = str(error)
    assert report.startswith(f"<input>:{loop_line(LOOP, 'loop')}: error: loop: ")
    assert "ran past its time limit of 0.3 s (--timeout 0.3)" in report
    assert 0.3 <= elapsed < 30  # generous: the machine may be loaded


def test_default_budget_and_no_limit():
    assert RunOptions().max_steps == DEFAULT_MAX_STEPS and not RunOptions().timeout
    # The CLI repeats the default so that `tileir --help` need not import the interpreter.
    assert cli_launch.DEFAULT_MAX_STEPS == DEFAULT_MAX_STEPS
    # A finite loop of 2000 iterations passes a budget of 0 (no limit) and of exactly 2000.
    text = FOR.replace("<i64: 9223372036854775807>", "<i64: 2000>")
    for steps in (0, 2000):
        machine, error = run_machine(text, max_steps=steps)
        assert error is None and machine.steps == 2000


# -- the CLI -----------------------------------------------------------------------------------


@pytest.fixture
def kernels(tmp_path: Path) -> dict[str, Path]:
    paths = {}
    for name, text in RUNAWAYS.items():
        paths[name] = tmp_path / f"{name}.tileir"
        paths[name].write_text(text)
    return paths


@pytest.mark.parametrize("mnemonic", ["loop", "for"])
def test_cli_run_stops_a_runaway_with_status_1(kernels, mnemonic, capsys):
    path = kernels[mnemonic]
    status = cli.main(["run", str(path), "--grid", "2", "--backend", "cpu", "--max-steps", "400"])
    out, err = capsys.readouterr()
    assert status == 1
    first = err.splitlines()[0]
    assert first.startswith(f"{path}:{loop_line(RUNAWAYS[mnemonic], mnemonic)}: error: {mnemonic}: ")
    assert "--max-steps 400" in first and "Traceback" not in err


def test_cli_run_timeout_in_a_subprocess(kernels):
    # The real entry point, as a user runs it: no step budget, a time limit, exit status 1.
    env = {**os.environ, "TILEIR_NO_GPU": "1"}
    command = [sys.executable, "-m", "compiler.cli", "run", str(kernels["for"]), "--grid", "2"]
    proc = subprocess.run(
        [*command, "--backend", "cpu", "--max-steps", "0", "--timeout", "0.5"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith(f"{kernels['for']}:{loop_line(FOR, 'for')}: error: for: ")
    assert "time limit of 0.5 s (--timeout 0.5)" in first
    proc = subprocess.run(
        [*command, "--max-steps", "-3"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    assert "--max-steps: -3: give 0 (no limit) or more" in proc.stderr


# -- Triton's interpreter ------------------------------------------------------------------


@pytest.mark.parametrize("mnemonic", ["loop", "for"])
def test_timeout_stops_a_runaway_under_tritons_interpreter(mnemonic):
    pytest.importorskip("triton", reason="the triton-interpret backend needs triton")
    pytest.importorskip("torch", reason="the triton-interpret backend needs torch")
    text = RUNAWAYS[mnemonic]
    with pytest.raises(InterpError) as e:
        launch(text, grid=(2,), backend="triton-interpret", options=RunOptions(timeout=0.5))
    report = str(e.value)
    assert report.startswith(f"<input>:{loop_line(text, mnemonic)}: error: {mnemonic}: ")
    assert "time limit of 0.5 s (--timeout 0.5) under Triton's interpreter" in report
    assert "(tile block (0, 0, 0))" in report
    # The timer is gone: a finite kernel runs to its end afterwards.
    launch(FOR.replace("<i64: 9223372036854775807>", "<i64: 3>"), grid=(2,), backend="triton-interpret")


def test_a_time_limit_inside_a_helper_names_the_loop_that_called_it():
    """The alarm may land in a helper of the generated file (`_predicate`, whose lines are no
    op's) called from the loop's body: the report names the loop, not the entry (seen when
    a busy machine moved the moment of the alarm)."""
    from types import SimpleNamespace

    from compiler.lower.codegen import Target, lower_entry
    from compiler.runtime.interpret import interrupted_loop

    module = load_module(LOOP)
    entry = find_kernel(module, None)
    src = lower_entry(module, entry, Target.parse(None))
    lines = src.text.splitlines()
    helper = next(n for n, text in enumerate(lines, 1) if text.startswith("def _")) + 1  # its body's first line
    assert src.op_at(helper) is None
    body = next(n for n in range(1, len(lines) + 1) if (op := src.op_at(n)) is not None and op.name == "cuda_tile.cmpi")

    def frame(file: str, line: int, back=None):
        return SimpleNamespace(f_code=SimpleNamespace(co_filename=file), f_lineno=line, f_back=back)

    kernel_frame = frame("k.py", body, frame("interpreter.py", 1))
    innermost = frame("semantic.py", 3, frame("k.py", helper, frame("interpreter.py", 2, kernel_frame)))
    loop = interrupted_loop(innermost, "k.py", src)
    assert loop is not None and loop.name == "cuda_tile.loop"
    assert interrupted_loop(frame("interpreter.py", 1), "k.py", src) is None  # not in the kernel: the caller says entry


def test_keyword_spelling_and_an_interrupt_name_the_loop(kernels, capsys):
    """A Python launch spells the limits as keywords (RunOptions.limits_spelled); Ctrl-C in
    a loop is an InterruptedLaunch (still a KeyboardInterrupt) naming the loop and its
    iteration, and `tileir run` prints that in its one line."""
    import signal

    from compiler.interp import InterruptedLaunch, RunawayError

    with pytest.raises(RunawayError) as e:
        launch(FOR, grid=(1,), backend="cpu", options=RunOptions(max_steps=50, limits_spelled="keyword"))
    assert "(max_steps=50)" in str(e.value) and "raise or lift the limit with max_steps=N" in str(e.value)

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        with pytest.raises(InterruptedLaunch) as stopped:
            launch(FOR, grid=(1,), backend="cpu", options=RunOptions(max_steps=0))
        assert isinstance(stopped.value, KeyboardInterrupt)
        assert re.fullmatch(
            rf"<input>:{loop_line(FOR, 'for')}: for: @k was interrupted at iteration \d+ of this loop "
            r"\(tile block \(0, 0, 0\)\)",
            stopped.value.report(),
        ), stopped.value.report()
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        status = cli.main(["run", str(kernels["for"]), "--grid", "1", "--backend", "cpu", "--max-steps", "0"])
        assert status == 130
        assert re.match(
            rf"tileir: interrupted: {kernels['for']}:\d+:\d+: for: @k was interrupted", capsys.readouterr().err
        )
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

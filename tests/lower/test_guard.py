"""compiler/lower/guard.py with plain Python work in place of Triton's compile: both ways it
runs (a forked child, a thread), what each returns for a value, an exception, a death and a
compile past its limit, and how much of what the compile wrote comes back.

The guard forks only a process without other threads, and reads file descriptor 2, which
any thread may write to; a whole test run has threads left alive by earlier tests (a language
server's, a notebook client's). So each check runs in this process where it has no other
thread, else in a new Python process (`fresh`)."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from compiler.lower import LowerError, guard
from tests.corpus import REPO


def fresh(check, *args, alone: bool = False) -> None:
    """`check(*args)` (a function of this module; args: str, int, bool) here where this
    process has no other thread, else (and always with `alone`) in a new Python process."""
    if threading.active_count() == 1 and not alone:
        check(*args)
        return
    call = f"import tests.lower.test_guard as t; t.{check.__name__}(*{args!r})"
    done = subprocess.run([sys.executable, "-c", call], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]


def writes_then(value, *, fd2: bytes = b"", stdout: str = "", exc: Exception | None = None):
    def work():
        os.write(2, fd2)
        print(stdout, end="")
        if exc is not None:
            raise exc
        return value

    return work


@pytest.mark.parametrize("isolate", [True, False])
def test_a_value_an_exception_and_what_was_written(isolate: bool) -> None:
    fresh(check_values, isolate)


def check_values(isolate: bool) -> None:
    out = guard.run_guarded(writes_then({"ptx": "x"}, fd2=b"warning: w\n"), 30, "t", isolate)
    assert out.value == {"ptx": "x"} and out.failure is None and out.died is None
    assert out.report == "warning: w\n"
    error = RuntimeError("bad")  # (as Triton's CompilationError, it may carry a line)
    error.lineno = 7
    out = guard.run_guarded(writes_then(None, fd2=b"E\n", exc=error), 30, "t", isolate)
    assert out.value is None and out.failure == guard.Failure("RuntimeError", "bad", 7) and out.report == "E\n"


def test_isolated_the_child_s_prints_are_the_report_too() -> None:
    fresh(check_prints)


def check_prints() -> None:
    out = guard.run_guarded(writes_then(1, stdout="printed\n"), 30, "t", isolate=True)
    assert out.value == 1 and out.report == "printed\n"


def test_only_a_process_without_threads_forks() -> None:
    """A thread alive here (as in a language server): the compile runs on a thread, even when
    isolation is asked for (a fork copies one thread, and a lock another held stays held)."""
    fresh(check_threads)


def check_threads() -> None:
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        out = guard.run_guarded(lambda: os.getpid(), 30, "t", isolate=True)
    finally:
        stop.set()
        helper.join()
    assert out.value == os.getpid()
    assert guard.run_guarded(lambda: os.getpid(), 30, "t", isolate=True).value != os.getpid()


DEATHS = {
    "exit": (lambda: os._exit(3), "ended with status 3"),
    "segfault": (lambda: ctypes.string_at(0), "killed by SIGSEGV"),
    "abort": (lambda: os.kill(os.getpid(), signal.SIGABRT), "killed by SIGABRT"),
}


@pytest.mark.parametrize("death", sorted(DEATHS))
def test_a_child_that_dies_says_how(death: str) -> None:
    fresh(check_death, death)


def check_death(death: str) -> None:
    work, how = DEATHS[death]
    out = guard.run_guarded(work, 30, "t", isolate=True)
    assert out.value is None and out.failure is None and out.died == how and not out.stopped


def test_a_child_stopped_by_a_signal_sent_to_it_is_no_crash() -> None:
    """SIGTERM or SIGINT sent to the compile's process (by someone: not a crash of Triton's)
    is said as such, without "a bug in the lowering" or a report kept for it; and the child dies
    of it where this process handles or blocks it (both are inherited; a CI run's child once
    finished its work instead). In a process of its own, whose signal state the check changes."""
    fresh(check_stopped, alone=True)


def check_stopped() -> None:
    from compiler.lower import lower
    from compiler.lower.build import _compile_error
    from compiler.runtime import load_module

    src = lower(load_module(str(REPO / "examples" / "vector_add.tileir")), None, "sm_90")
    stopping = (signal.SIGTERM, signal.SIGINT)
    for sig in stopping:
        signal.signal(sig, lambda *_: None)
    signal.pthread_sigmask(signal.SIG_BLOCK, stopping)
    outs = [guard.run_guarded(lambda sig=sig: os.kill(os.getpid(), sig), 30, "t", isolate=True) for sig in stopping]
    for out, name in zip(outs, ("SIGTERM", "SIGINT")):
        assert out.stopped and out.died == f"killed by {name}"
        error = _compile_error(src, out)
        assert error.message == (
            f"Triton's compile of @vector_add was stopped from outside (its process killed by {name}); compile it again"
        )
        assert error.kept is None


def test_a_compile_goes_on_where_its_caller_ignores_ctrl_c() -> None:
    """A process that ignores SIGINT (started in the background by a shell, say) is not
    interrupted by a Ctrl-C aimed at its process group, and neither is its compile: the child
    kept the parent's choice (it set SIGINT to the default, died, and the parent went on to
    call that a crash of Triton's). Run in a session of its own, whose group the work signals."""
    call = (
        "import os, signal; from compiler.lower import guard\n"
        "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
        "out = guard.run_guarded(lambda: (os.killpg(os.getpgrp(), signal.SIGINT), 42)[1], 30, 't', isolate=True)\n"
        "print(out.value, out.died)\n"
    )
    done = subprocess.run([sys.executable, "-c", call], cwd=REPO, capture_output=True, text=True, timeout=120,
                          start_new_session=True)  # fmt: skip
    assert done.returncode == 0 and done.stdout == "42 None\n", (done.stdout, done.stderr[-2000:])


@pytest.mark.parametrize("isolate", [True, False])
def test_past_the_limit(isolate: bool) -> None:
    """TimedOut with what was written by then; an isolated child is killed (its pid is gone)."""
    fresh(check_limit, isolate)


def check_limit(isolate: bool) -> None:
    def slow():
        os.write(2, f"in a pass {os.getpid()}\n".encode())
        time.sleep(60)

    start = time.monotonic()
    try:
        guard.run_guarded(slow, 0.5, "t", isolate)
        raise AssertionError("no TimedOut")
    except guard.TimedOut as late:
        report = late.report
    assert time.monotonic() - start < 10 and report.startswith("in a pass "), report
    pid = int(report.split()[-1])
    assert (pid != os.getpid()) == isolate
    if isolate:
        try:
            os.kill(pid, 0)
            raise AssertionError("the child is still there")
        except ProcessLookupError:
            pass  # killed and reaped


PARENT = """
import os, sys, time
from compiler.lower import guard

def slow():
    with open(sys.argv[1], "w") as f:
        f.write(str(os.getpid()))
    time.sleep(120)

guard.run_guarded(slow, None, "t", isolate=True)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "\nState:\tZ" not in f.read()  # (a zombie is dead, waiting for its reaper)
    except FileNotFoundError:
        return False


def test_a_child_dies_with_its_parent(tmp_path) -> None:
    """A parent killed outright (SIGKILL: no finally, no Ctrl-C handling) takes its compile
    along, instead of leaving it running, perhaps forever, on its own."""
    pid_file = tmp_path / "child"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(pid_file)], cwd=REPO)
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and parent.poll() is None
            time.sleep(0.05)
        child = int(pid_file.read_text())
        assert _alive(child)
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 10
    while _alive(child):
        assert time.monotonic() < deadline, "the child outlived its parent"
        time.sleep(0.05)


def test_where_no_child_can_be_made_the_compile_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused():
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    assert guard.run_guarded(lambda: os.getpid(), 30, "t", isolate=True).value == os.getpid()


def test_what_comes_back_is_bounded() -> None:
    fresh(check_bound)


def check_bound() -> None:
    saved, guard.READ_LIMIT = guard.READ_LIMIT, 10
    try:
        out = guard.run_guarded(writes_then(1, fd2=b"0123456789abcdef"), 30, "t", isolate=True)
    finally:
        guard.READ_LIMIT = saved
    assert out.report == "[the first 6 bytes are left out]\n6789abcdef"


def test_time_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(guard.TIME_LIMIT_ENV, raising=False)
    assert guard.time_limit() == guard.DEFAULT_TIME_LIMIT
    for text, limit in (("2.5", 2.5), ("0", None), (" 10 ", 10.0)):
        monkeypatch.setenv(guard.TIME_LIMIT_ENV, text)
        assert guard.time_limit() == limit
    for bad in ("soon", "-1", "inf", "nan"):
        monkeypatch.setenv(guard.TIME_LIMIT_ENV, bad)
        with pytest.raises(LowerError, match="is not a number of seconds"):
            guard.time_limit()


def test_summary_reads_what_triton_wrote() -> None:
    report = """<unknown>:0: error: colStride must be 1, 2, or 4 but got 0
python: StorageUniquerSupport.h:180: static ConcreteT get(): Assertion `succeeded(verify())' failed.
module {
}
/cache/source/k_0123456789abcdef0123.py:41:0: error: Failures have been detected while processing an MLIR pass pipeline
/cache/source/k_0123456789abcdef0123.py:41:0: note: Pipeline failed while executing [`TritonGPUAccelerateMatmul` on
"""
    assert guard.summary(report, "k_0123456789abcdef0123.py") == (
        "in TritonGPUAccelerateMatmul; assertion 'succeeded(verify())' failed; colStride must be 1, 2, or 4 but got 0",
        41,
    )
    assert guard.summary("LLVM ERROR: Cannot select: t5: i1 = fcmp\n", "k.py") == ("Cannot select: t5: i1 = fcmp", None)
    assert guard.summary("nothing it knows\n", "k_0123456789abcdef0123.py") == ("", None)


if sys.platform != "linux":  # pragma: no cover - fork and the signals are Linux's here
    pytestmark = pytest.mark.skip(reason="the guard's tests run on Linux")


def test_a_report_kept_for_a_bug_report(monkeypatch: pytest.MonkeyPatch) -> None:
    assert guard.keep(" \n", "tileir-test-") is None
    monkeypatch.setattr(guard, "KEEP_LIMIT", 4)
    path = guard.keep("abcdefgh\n", "tileir-test-")
    try:
        assert os.path.basename(path).startswith("tileir-test-") and path.endswith(".log")
        with open(path) as f:
            assert f.read() == "[the first 4 characters are left out]\nefgh\n"
    finally:
        os.unlink(path)

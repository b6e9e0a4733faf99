"""Running Triton's compile so that it can be stopped and what it writes can be read.

Triton's passes release the GIL but never return to Python while they run, and Python runs
a signal's handler between bytecodes of the main thread: with the compile on the main
thread, a compile that never ended (Triton 3.6 and 3.9 on a tile permuted in a loop, before
ops_shape gathered instead) could not be stopped by Ctrl-C, only killed. And Triton's C++
side writes straight to file descriptor 2: a failing pass prints its assertion, MLIR's
errors and the whole module as a reproducer, a wall of text before our one-line diagnostic;
a crash that MLIR does not recover (LLVM's `report_fatal_error`, a segmentation fault)
ended the process with no diagnostic at all.

So `run_guarded(work, limit, isolate)` runs `work()` (the compile; it returns plain data)
one of two ways, while the caller waits in Python (Ctrl-C stops the wait; so does `limit`,
with TimedOut):

- isolated (`isolate` and a process that can fork safely: no other Python thread, e.g.
  `tileir compile`): in a forked child, whose stdout and stderr go to a file. A child that
  runs past the limit or is interrupted is killed; one that dies says how
  (`Outcome.died`), with what it wrote.
- otherwise (a language server or a notebook kernel, which run threads and must not fork):
  on a thread of its own, with file descriptor 2 redirected to a file for the duration. A
  thread left behind by the limit or Ctrl-C is a daemon: it does not keep the process
  alive, but a process cannot take it back.

A compile server's worker (compiler/cli/server.py, `run_here`) is itself a disposable fork,
and the one that reports a crash of it is its server (which then has the caller run the
command itself, isolated, unless the worker had used the caller's streams): there an isolated
compile runs on a thread too. A child would cost ~20 ms for nothing: the pages a compile
writes (~4,600 for a vector add) are shared with the parent and copied on the first write,
once more in every process forked (measured with getrusage); a server's warm spare worker
has copied them before its command comes.

`Outcome.report` is what the compile wrote there; `summary` picks out what names a failure,
and `keep` puts the whole in a file for the bug report.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import re
import select
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any

from .codegen import LowerError

TIME_LIMIT_ENV = "TILEIR_COMPILE_TIMEOUT"
DEFAULT_TIME_LIMIT = 300.0  # seconds: hundreds of times what a kernel here takes (attention for sm_100: 0.8 s)


def time_limit() -> float | None:
    """How long one Triton compile may take, in seconds, from $TILEIR_COMPILE_TIMEOUT
    (default 300; 0: no limit); a LowerError for a value that is no number of seconds."""
    text = os.environ.get(TIME_LIMIT_ENV, "").strip()
    if not text:
        return DEFAULT_TIME_LIMIT
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise LowerError(f"{TIME_LIMIT_ENV}={text!r} is not a number of seconds (0: no limit)")
    return seconds or None


@dataclass(slots=True)
class Failure:
    """An exception the compile raised, as plain data (it may come from a child process)."""

    kind: str  # the exception's type name
    message: str
    lineno: int | None = None  # the generated source's line, where Triton's front end names one


@dataclass(slots=True)
class Outcome:
    value: Any = None  # what work() returned
    failure: Failure | None = None  # what it raised instead
    died: str | None = None  # isolated: how the child ended without an answer ("killed by SIGSEGV")
    report: str = ""  # what the compile wrote on stderr (and, isolated, on stdout)
    stopped: bool = False  # died of a signal that someone sends to stop a process (STOPPING)


# Signals that end a child because someone asked (a `kill`, Ctrl-C aimed at the group while
# this process ignores it), not because the compile crashed.
STOPPING = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


class TimedOut(TimeoutError):
    """The compile ran past its limit; `report` is what it had written by then (with
    MLIR_ENABLE_DUMP, the pass it was in)."""

    def __init__(self, report: str) -> None:
        super().__init__("the compile ran past its time limit")
        self.report = report


# One compile at a time in a process: Triton's cache setting and a redirected file
# descriptor 2 are the process's, not a thread's.
_ONE_AT_A_TIME = threading.Lock()

_SERVED_PID: int | None = None  # the compile server's worker this process is (module doc)


def run_here() -> None:
    """This process is a compile server's worker: isolated compiles run on a thread of it."""
    global _SERVED_PID
    _SERVED_PID = os.getpid()


def run_guarded(work: Any, limit: float | None, name: str, isolate: bool = False) -> Outcome:
    """`work()` run as the module's doc says; TimedOut past `limit` seconds (None: no
    limit); KeyboardInterrupt passes through (an isolated child is killed first)."""
    with _ONE_AT_A_TIME:
        if isolate and hasattr(os, "fork") and threading.active_count() == 1 and os.getpid() != _SERVED_PID:
            try:
                return _in_child(work, limit)
            except _NoFork:
                pass  # (no memory or processes left for a child: the compile runs here)
        return _in_thread(work, limit, name)


class _NoFork(Exception):
    pass


def _failure(exc: BaseException) -> Failure:
    lineno = getattr(exc, "lineno", None)
    return Failure(type(exc).__name__, str(exc).strip(), lineno if isinstance(lineno, int) else None)


def _deadline(limit: float | None) -> float | None:
    return None if limit is None else time.monotonic() + limit


def _wait_step(deadline: float | None) -> float:
    """How long to wait before looking again: at most half a second, and not past the deadline."""
    return 0.5 if deadline is None else max(0.0, min(0.5, deadline - time.monotonic()))


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.monotonic() >= deadline


# -- on a thread ---------------------------------------------------------------------------


def _in_thread(work: Any, limit: float | None, name: str) -> Outcome:
    outcome = Outcome()
    finished = threading.Event()

    def run() -> None:
        try:
            outcome.value = work()
        except Exception as exc:  # noqa: BLE001 - handed to the waiting thread as data
            outcome.failure = _failure(exc)
        finally:
            finished.set()

    late = False
    with _fd2_captured() as report:
        thread = threading.Thread(target=run, name=name, daemon=True)
        thread.start()
        deadline = _deadline(limit)
        while not finished.wait(_wait_step(deadline)):
            if _past(deadline):
                late = True
                break
    if late:
        raise TimedOut(report[0])
    outcome.report = report[0]
    return outcome


@contextlib.contextmanager
def _fd2_captured():
    """File descriptor 2 into a temporary file for the duration; its text is in the list
    yielded, afterwards. Where fd 2 cannot be redirected (closed), nothing is."""
    report = [""]
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield report
        return
    with tempfile.TemporaryFile() as f:
        os.dup2(f.fileno(), 2)
        try:
            yield report
        finally:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            report[0] = _read(f)


# What is read back of what a compile wrote: a dump the user asked for (MLIR_ENABLE_DUMP) of
# an ordinary kernel is a few MB, but one of a kernel whose code blows up wrote 1.7 GB in 40 s.
READ_LIMIT = 64 << 20


def _read(f: Any) -> str:
    """The text of the file `f` (at its end), the last READ_LIMIT bytes where it is longer."""
    size = f.seek(0, os.SEEK_END)
    start = max(0, size - READ_LIMIT)
    f.seek(start)
    text = f.read().decode("utf-8", "replace")
    return f"[the first {start} bytes are left out]\n{text}" if start else text


# -- in a child process --------------------------------------------------------------------


def _in_child(work: Any, limit: float | None) -> Outcome:
    import pickle

    with tempfile.TemporaryFile() as log:
        read_end, write_end = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            raise _NoFork from None
        if pid == 0:  # pragma: no cover - the child, measured through its answer
            _child(work, write_end, read_end, log.fileno(), parent)
        os.close(write_end)
        chunks: list[bytes] = []
        late = False
        try:
            deadline = _deadline(limit)
            while True:
                ready, _, _ = select.select([read_end], [], [], _wait_step(deadline))
                if ready:
                    chunk = os.read(read_end, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
                elif _past(deadline):
                    late = True
                    break
            if not late:
                _, status = os.waitpid(pid, 0)
                pid = 0
        finally:
            os.close(read_end)
            if pid:  # past the limit, or interrupted: the compile will not be waited for
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
        report = _read(log)
    data = b"".join(chunks)
    if late:
        raise TimedOut(report)
    if status != 0 or not data:
        stopped = os.WIFSIGNALED(status) and os.WTERMSIG(status) in STOPPING
        return Outcome(died=how_it_ended(status), report=report, stopped=stopped)
    value, failure = pickle.loads(data)
    return Outcome(value=value, failure=failure, report=report)


def _child(work: Any, write_end: int, read_end: int, log: int, parent: int) -> None:  # pragma: no cover
    # Nothing of the parent's runs here after the work: no atexit handlers, no flushing of the
    # stdio buffers inherited from it (they would print the parent's output twice).
    import pickle

    status = 1
    try:
        _die_with(parent)
        faulthandler.disable()  # a crash is reported by the parent, not by a traceback dump here
        os.close(read_end)
        # A signal that stops a process stops this one, whatever the parent does with it: not
        # its handler (Python's Ctrl-C, LLVM's, which Triton loads), nor its mask (a CI run's
        # child finished its work after a SIGTERM), nor its event loop's wake-up pipe. Ctrl-C
        # reaches the group, so the parent decides; one it ignores (started in the background by
        # a shell, say) the compile ignores too.
        signal.set_wakeup_fd(-1)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPPING)  # (a mask is inherited too)
        for number in STOPPING:
            if signal.getsignal(number) is not signal.SIG_IGN:
                signal.signal(number, signal.SIG_DFL)
        os.dup2(log, 1)
        os.dup2(log, 2)
        sys.stdout = sys.stderr = open(log, "w", closefd=False)  # noqa: SIM115 - (the process ends here)
        try:
            answer: tuple[Any, Failure | None] = (work(), None)
        except Exception as exc:  # noqa: BLE001 - handed to the parent as data
            answer = (None, _failure(exc))
        data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        sys.stdout.flush()
        status = 0
    except BaseException:  # noqa: BLE001 - the parent reads an empty answer as a death
        pass
    finally:
        os._exit(status)


def _die_with(parent: int) -> None:  # pragma: no cover - the child's
    """Ask Linux to kill this child when its parent dies (prctl PR_SET_PDEATHSIG): a parent
    killed outright (SIGKILL) must not leave a compile that never ends running on its own."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before that took effect
        os._exit(1)


def how_it_ended(status: int) -> str:
    """How a child that gave no answer ended, from its wait status: "killed by SIGSEGV"."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"killed by signal {number}"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return f"ended with status {code}" if code else "ended without an answer"


# -- reading the report --------------------------------------------------------------------


KEEP_LIMIT = 4 << 20  # characters of a failure's report kept in its file


def keep(report: str, prefix: str) -> str | None:
    """The path of a new file in the temporary directory (its name starting with `prefix`)
    holding `report` for a bug report, its end where it is longer than KEEP_LIMIT (the end
    says what failed); None where the report is empty or no file can be written."""
    report = report.strip()
    if not report:
        return None
    if len(report) > KEEP_LIMIT:
        report = f"[the first {len(report) - KEEP_LIMIT} characters are left out]\n" + report[-KEEP_LIMIT:]
    try:
        fd, path = tempfile.mkstemp(prefix=prefix, suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(report + "\n")
    except OSError:
        return None
    return path


def summary(report: str, source_name: str) -> tuple[str, int | None]:
    """(what Triton's report says failed, the generated source's line it names): the pass,
    an assertion, MLIR's or LLVM's first error; "" where it says none of these."""
    parts = []
    passed = re.search(r"Pipeline failed while executing \[`([^`]+)`", report)
    if passed:
        parts.append(f"in {passed.group(1)}")
    assertion = re.search(r"Assertion `(.+?)' failed", report)
    if assertion:
        parts.append(f"assertion {assertion.group(1)!r} failed")
    errors = [m.group(1).strip() for m in re.finditer(r"^[^\n]*?:\d+(?::\d+)?: error: (.*)$", report, re.M)]
    errors = [e for e in errors if not e.startswith("Failures have been detected")]
    errors += [m.group(1).strip() for m in re.finditer(r"^LLVM ERROR: (.*)$", report, re.M)]
    if errors:
        parts.append(errors[0])
    line = re.search(rf"\b{re.escape(source_name)}:(\d+):\d+: error:", report)
    return "; ".join(parts)[:300], int(line.group(1)) if line else None

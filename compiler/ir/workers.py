"""Run independent parts of one job in forked copies of this process.

The text path's big files (`tileir fmt`, `check`, `disasm` of thousands of kernels) spend
their time in Python, one op at a time; the kernels of a module are independent, so the
commands cut the module into parts and hand all but the first to forked children, which
inherit everything already imported and built (no start-up, nothing pickled but the
answers). A part's answer comes back pickled through a pipe.

`fork_map` is all-or-nothing: where a part fails (its task raises, a child dies, the
platform cannot fork) it returns None and the caller does the whole job in this process,
so that what the user sees (a diagnostic, an exception) is exactly what one process gives.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing`'s: importing typing costs every command's start-up ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

MAX_WORKERS = 8
# TILEIR_JOBS=N caps the processes one command uses (1: never fork).
JOBS_ENV = "TILEIR_JOBS"


def available_workers() -> int:
    """How many processes may work at once: the CPUs this process may run on, capped by
    $TILEIR_JOBS (and by MAX_WORKERS); 1 where the platform cannot fork."""
    if not hasattr(os, "fork"):
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    limit = MAX_WORKERS
    wanted = os.environ.get(JOBS_ENV, "").strip()
    if wanted:
        try:
            limit = max(1, min(limit, int(wanted)))
        except ValueError:
            pass  # not a number: as if unset (the commands have no way to report it mid-job)
    return max(1, min(cpus, limit))


def fork_map(tasks: Sequence[Callable[[], object]]) -> list[object] | None:
    """The results of `tasks`, the first run here and the others in forked children, or
    None when any of them failed (the caller then does the work itself)."""
    if len(tasks) < 2 or not hasattr(os, "fork") or _threaded():
        return None
    import pickle  # only where a job is split (a few ms of every command's start-up otherwise)
    import signal

    children: list[tuple[int, int]] = []
    try:
        for task in tasks[1:]:
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child, measured through its answer
                _child(task, read_end, write_end)
            os.close(write_end)
            children.append((pid, read_end))
        results = [tasks[0]()]
        while children:
            pid, read_end = children.pop(0)
            with os.fdopen(read_end, "rb") as pipe:
                data = pipe.read()  # until the child exits (or dies)
            _, status = os.waitpid(pid, 0)
            if status != 0 or not data:
                return None
            results.append(pickle.loads(data))
        return results
    except OSError:
        return None
    finally:
        for pid, read_end in children:  # left after a failure: stop them, free their pipes
            try:
                os.close(read_end)
            except OSError:
                pass
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass


def _threaded() -> bool:
    """Whether other threads run here (a language server, a test runner's helpers): a fork
    copies only this one, and a lock another held (the import lock, a logger's) would stay
    locked in the child forever."""
    threading = sys.modules.get("threading")
    return threading is not None and threading.active_count() > 1


def _child(task: Callable[[], object], read_end: int, write_end: int) -> None:  # pragma: no cover
    # Nothing of the parent's runs here after the task: no atexit handlers, no flushing of
    # the stdio buffers inherited from it (they would print the parent's output twice).
    import pickle

    status = 1
    try:
        os.close(read_end)
        data = pickle.dumps(task(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
        status = 0
    except BaseException:
        pass
    finally:
        os._exit(status)

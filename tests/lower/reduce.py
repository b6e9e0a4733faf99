"""Cut a failing fuzz kernel down to the ops the failure needs.

    python -m tests.lower.reduce SEED [--weight KIND=W ...] [--backend triton] [-o OUT]
    python -m tests.lower.reduce FILE.tileir [--until tileiras-error --arch sm_100]   (a kernel --keep wrote:
                                                  its first line names the seed and weights)

The kernel keeps its entry signature, so the seed's arguments (tests/lower/fuzz.py's
`arguments`) still fit every smaller kernel. Statements (an op with its regions) are deleted
one at a time, last first, while the kernel still verifies and still fails the same way: some
output differs between the CPU interpreter and `--backend` (bitwise, as tests/lower/harness.py
compares), or, with `--until timeout`, Triton's compile still takes longer than `--limit`
seconds (checked in a child process that is killed then), or, with `--until compile-error`,
Triton still fails to compile it for `--arch` in the same pass with the same assertion
(`failure_key`), or, with `--until tileiras-error`, NVIDIA's tileiras still refuses it for
`--arch` with the same first line (value names aside), or, with `--until spills`, its cubin
for `--arch` still spills (`fuzz --compile` names such seeds). Passes repeat until one deletes
nothing. Each smaller kernel found is written to OUT at once, so a reduction stopped early
leaves the smallest kernel so far.

On a GPU backend set TILEIR_CACHE_DIR where the compiles may go; a backend's comparison is the
harness's, so `TILEIR_GPU_BACKENDS` is set to `--backend` here."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.lower import guard

if TYPE_CHECKING:
    from compiler.lower import Compiled

_HEADER = re.compile(r"// seed (\d+)(?: \(--weight ([^)]*)\))?( --hints)?( --asm)?( --large)?")


def statements(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) line of each deletable statement: an op line with the region lines that
    follow it (a `reduce`'s `(%a, %b) {` line and body, a `for`'s body up to its `}`), not the
    module's and entry's own lines, nor region terminators, nor closing braces."""
    found = []
    depth = 0
    opens = []  # the depth before each line
    for line in lines:
        opens.append(depth)
        depth += line.count("{") - line.count("}")
    for i, line in enumerate(lines):
        s = line.strip()
        if not s.startswith("%") and not re.match(r"(store_|atomic_|print_tko|assert|global )", s):
            continue
        j = i
        while True:
            after = opens[j + 1] if j + 1 < len(lines) else 0
            nxt = lines[j + 1].strip() if j + 1 < len(lines) else ""
            if after == opens[i] and not nxt.startswith("("):
                break
            j += 1
        found.append((i, j))
    return found


def _verifies(text: str) -> bool:
    from compiler.runtime import load_module

    try:
        load_module(text)
    except Exception:  # noqa: BLE001 - any refusal: not a candidate
        return False
    return True


def _outcome(backend: str, grid, args) -> Callable[[str], str]:
    """How the kernel fares on `backend` against the CPU interpreter: "differs", "same", or
    "error: ..." (it fails in another way)."""
    from tests.lower import harness

    def outcome(text: str) -> str:
        try:
            harness.run_both(text, "k", grid, args)
        except AssertionError as e:
            return "differs" if "elements differ" in str(e) else f"error: {str(e)[:200]}"
        except Exception as e:  # noqa: BLE001 - another failure is not this one
            return f"error: {type(e).__name__}: {str(e)[:200]}"
        return "same"

    harness.GPU_BACKENDS[:] = [backend] if backend != "triton-interpret" else []
    return outcome


def failure_key(message: str) -> str:
    """What names a Triton failure across smaller kernels: the pass and the assertion (MLIR's
    messages name values, whose names change as statements go)."""
    parts = re.findall(r"\bin [A-Za-z]+\b(?=;|\))|assertion '[^']*' failed|crashed compiling|did not finish", message)
    return "; ".join(parts) or message[:80]


def _compile(text: str, arch: str) -> Compiled:
    """Triton's compile of a kernel for `arch`, in a forked child (compiler/lower/guard.py,
    so a crash is a LowerError too)."""
    from compiler.lower import lower
    from compiler.lower.build import compile_source
    from compiler.runtime import load_module

    return compile_source(lower(load_module(text), "k", arch), use_cache=False, isolate=True)


def _compile_fails(arch: str) -> Callable[[str], str | None]:
    """The failure key of Triton's compile of a kernel for `arch`, or None where it compiles."""
    from compiler.lower import LowerError

    def failure(text: str) -> str | None:
        try:
            _compile(text, arch)
        except LowerError as e:
            return failure_key(e.message)
        return None

    return failure


def _tileiras_fails(arch: str) -> Callable[[str], str | None]:
    """The first line of NVIDIA's tileiras' refusal of a kernel for `arch` (its value names
    blanked: they change as statements go), or None where it compiles."""
    from compiler.modules import LaunchError
    from compiler.runtime import load_module
    from compiler.runtime.tileiras import compile_tileiras

    def failure(text: str) -> str | None:
        try:
            compile_tileiras(load_module(text), arch, use_cache=False)
        except LaunchError as e:
            return re.sub(r"%[\w.$-]+", "%", (str(e).strip().splitlines() or [""])[0])
        return None

    return failure


def _spills(arch: str) -> Callable[[str], bool]:
    """Whether a kernel's cubin for `arch` spills (a compile that fails does not count)."""
    from compiler.lower import LowerError

    def still(text: str) -> bool:
        try:
            return bool(_compile(text, arch).spills)
        except LowerError:
            return False

    return still


def _times_out(arch: str, limit: float) -> Callable[[str], bool]:
    """Whether Triton's compile of a kernel for `arch` outlasts `limit` seconds (0: every
    compile does): the guard's own limit (compiler/lower/guard.py), whose forked compile is
    killed then."""
    failure = _compile_fails(arch)
    seconds = repr(max(limit, 1e-6))  # ($TILEIR_COMPILE_TIMEOUT=0 would be no limit)

    def still(text: str) -> bool:
        saved = os.environ.get(guard.TIME_LIMIT_ENV)
        os.environ[guard.TIME_LIMIT_ENV] = seconds
        try:
            return failure(text) == "did not finish"
        finally:
            if saved is None:
                os.environ.pop(guard.TIME_LIMIT_ENV, None)
            else:
                os.environ[guard.TIME_LIMIT_ENV] = saved

    return still


def reduce(text: str, still: Callable[[str], bool], out: Path | None, log=print, budget: float | None = None) -> str:
    """The smallest kernel found by deleting statements of `text` while `still` holds (within
    `budget` seconds, if given)."""
    lines = text.splitlines()
    tries = 0
    changed = True
    t0 = time.monotonic()
    while changed:
        changed = False
        for first, last in reversed(statements(lines)):
            if last >= len(lines) or (budget is not None and time.monotonic() - t0 > budget):
                continue
            candidate = lines[:first] + lines[last + 1 :]
            cand = "\n".join(candidate) + "\n"
            if not _verifies(cand):
                continue
            tries += 1
            if still(cand):
                lines = candidate
                changed = True
                if out is not None:
                    tmp = out.with_name(out.name + ".tmp")
                    tmp.write_text(cand)
                    os.replace(tmp, out)
                log(f"  {len(lines)} lines ({tries} runs)")
    return "\n".join(lines) + "\n"


# What a mismatch on a GPU backend depends on: each setting is tried on the reduced kernel.
SETTINGS = {
    "default": {},
    "no specialisation": {"TILEIR_SPECIALISE": "0"},
    "no TMA": {"TILEIR_TMA": "off"},
    "1 warp": {"TILEIR_TRITON_OPTIONS": '{"num_warps": 1}'},
    "2 warps": {"TILEIR_TRITON_OPTIONS": '{"num_warps": 2}'},
    "8 warps": {"TILEIR_TRITON_OPTIONS": '{"num_warps": 8}'},
}


def sensitivity(text: str, backend: str, grid, args, outcome: Callable[[str], str], repeat: int = 3) -> list[str]:
    """Whether the mismatch holds under each of SETTINGS, and whether `repeat` launches give
    the same bits (a race between tile blocks would not)."""
    import numpy as np

    from compiler.runtime import launch, load_module

    found = []
    for name, env in SETTINGS.items():
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            found.append(f"{name}: {outcome(text)}")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
    runs = []
    module = load_module(text)
    for _ in range(repeat):
        got = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        launch(module, "k", grid, got, backend=backend)
        runs.append([a.tobytes() for a in got if isinstance(a, np.ndarray)])
    found.append(f"{repeat} launches {'agree' if all(r == runs[0] for r in runs) else 'DISAGREE'}")
    return found


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.lower.reduce", description=__doc__.splitlines()[0])
    p.add_argument("kernel", help="a fuzz seed, or a kernel file whose first line names its seed")
    p.add_argument("--weight", action="append", default=[], metavar="KIND=W", help="the seed's weights")
    p.add_argument("--hints", action="store_true", help="the seed's kernel with its optimization hints")
    p.add_argument("--asm", action="store_true", help="the seed's kernel of fuzz --asm")
    p.add_argument("--large", action="store_true", help="the seed's kernel of fuzz --large")
    p.add_argument("--backend", default="triton", help="triton, tileiras or triton-interpret (default triton)")
    until = ["mismatch", "timeout", "compile-error", "tileiras-error", "spills"]
    p.add_argument("--until", choices=until, default="mismatch")
    p.add_argument("--arch", default="sm_90", help="with --until timeout, spills or *-error: the target compiled for")
    p.add_argument("--limit", type=float, default=60.0, help="with --until timeout: seconds")
    p.add_argument("--budget", type=float, help="stop deleting after this many seconds")
    p.add_argument(
        "--sensitivity",
        action="store_true",
        help="then try the reduced kernel under other Triton settings and launch it 3 times",
    )
    p.add_argument("-o", "--out", help="where the smallest kernel goes (default: reduced-SEED.tileir)")
    a = p.parse_args(argv)
    from tests.lower.fuzz import arguments, kernel, parse_weights

    weights = list(a.weight)
    hints, asm, large = a.hints, a.asm, a.large
    text = None
    if a.kernel.isdigit():
        seed = int(a.kernel)
    else:
        text = Path(a.kernel).read_text()
        m = _HEADER.match(text)
        if not m:
            print(f"{a.kernel}: the first line does not name a fuzz seed ('// seed N ...')", file=sys.stderr)
            return 2
        seed = int(m.group(1))
        weights += m.group(2).split(" --weight ") if m.group(2) else []
        hints = hints or bool(m.group(3))
        asm = asm or bool(m.group(4))
        large = large or bool(m.group(5))
    case = kernel(seed, weights=parse_weights(weights) or None, hints=hints, asm=asm, large=large)
    text = text or case.text
    out = Path(a.out or f"reduced-{seed}.tileir")
    if a.until == "timeout":
        still = _times_out(a.arch, a.limit)
    elif a.until == "spills":
        still = _spills(a.arch)
    elif a.until in ("compile-error", "tileiras-error"):
        failure = (_compile_fails if a.until == "compile-error" else _tileiras_fails)(a.arch)
        first = failure(text)
        if first is not None:
            print(f"seed {seed}: {first}", file=sys.stderr)
        still = lambda small: first is not None and failure(small) == first  # noqa: E731
    else:
        os.environ["TILEIR_GPU_BACKENDS"] = a.backend if a.backend != "triton-interpret" else ""
        outcome = _outcome(a.backend, case.grid, arguments(case))
        still = lambda text: outcome(text) == "differs"  # noqa: E731
    t0 = time.monotonic()
    if not still(text):
        print(f"seed {seed}: the kernel does not fail that way; nothing to reduce", file=sys.stderr)
        return 1
    small = reduce(text, still, out, budget=a.budget)
    print(f"seed {seed}: {len(text.splitlines())} -> {len(small.splitlines())} lines in "
          f"{time.monotonic() - t0:.0f} s: {out}")  # fmt: skip
    if a.sensitivity and a.until == "mismatch" and a.backend != "triton-interpret":
        for line in sensitivity(small, a.backend, case.grid, arguments(case), outcome):
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

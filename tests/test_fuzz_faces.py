"""Fuzzing the faces: every `tileir` subcommand and the language server, fed mutated copies of
the project's own kernels, answer with an exit status (0, 1 or 2) or an LSP response, never an
internal error, a traceback, a hang, or memory beyond a bound (issue 18).

The parser, verifier and bytecode reader have their own fuzz tests (tests/compiler/
test_parser_fuzz.py, test_verify_fuzz.py, tests/bytecode/test_fuzz.py); this one checks what
sits on top of them: each subcommand's own code after the parse (printing, canonicalising,
encoding, lowering, the interpreter, layout pictures, output files) and the server's features.

Inputs: examples/*.tileir and their bytecode (13.3 and 13.1, by our writer), mutated
deterministically (tests/fuzz_faces_worker.py: bit flips, truncation, token deletion and
duplication, lines spliced from another kernel, huge numbers, deep nesting, invalid UTF-8;
for bytecode: byte edits, truncation, spliced bytes, huge varints). The many cases of one
subcommand run in ONE worker process that calls `compiler.cli.main` in a loop (a process per
case would cost half a second each); a few cases also run as real `python -m compiler`
processes. Each worker runs under RLIMIT_AS = MEMORY_LIMIT and each case under CASE_SECONDS.

TILEIR_FUZZ_FACES=N makes N mutations per kind and seed (default 2) for longer local runs, and
TILEIR_FUZZ_SEED=S draws other mutations than CI's.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from compiler.modules import find_tileiras
from tests.corpus import REPO, example_files
from tests.fuzz_faces_worker import BYTECODE_KINDS, TEXT_KINDS, mutate_bytecode, mutate_text

_HAVE_TILEIRAS = find_tileiras() is not None  # (the test extra installs it)

SEED = int(os.environ.get("TILEIR_FUZZ_SEED", "20260618"))
PER_KIND = int(os.environ.get("TILEIR_FUZZ_FACES", "2"))
MEMORY_LIMIT = 2 << 30  # RLIMIT_AS of every process started here (bytes of address space)
CASE_SECONDS = 10.0  # one command on one (small) mutated file; generous for a loaded 2-core CI
OUTPUT_FACTOR = 200  # stdout + stderr at most this many times the input, plus OUTPUT_SLACK
OUTPUT_SLACK = 1 << 20
OK_STATUSES = (0, 1, 2)

# The arguments `tileir run`/`bench` give each example: small, so that a case takes milliseconds.
RUN_ARGS = {
    "vector_add": ["--grid", "2", "--cutile-args", "--arg", "rand:2000:f32", "--arg", "rand:2000:f32",
                   "--arg", "zeros:2000:f32"],
    "softmax": ["--grid", "1", "--cutile-args", "--arg", "rand:4x100:f32", "--arg", "zeros:4x100:f32"],
    "matmul": ["--grid", "1,1", "--cutile-args", "--arg", "rand:64x64:f16", "--arg", "rand:64x64:f16",
               "--arg", "zeros:64x64:f16"],
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Case:
    path: Path
    kernel: str  # the example it was made from (its `run` arguments)
    kind: str  # the mutation, or "seed"
    what: str  # the mutation, in words (for a failure's message)
    bytecode: bool

    @property
    def label(self) -> str:
        return f"{self.path.name} ({self.kernel}, {self.kind}: {self.what})"


def _limit_memory() -> None:  # runs in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Case]:
    """The seeds and their mutations, written to files."""
    from compiler.bytecode import write_bytecode
    from compiler.runtime import load_module

    root = tmp_path_factory.mktemp("fuzz-faces")
    texts = {p.stem: p.read_bytes() for p in example_files()}
    assert set(texts) == set(RUN_ARGS), f"examples changed ({sorted(texts)}): update RUN_ARGS"
    codes = {}
    for name in texts:
        module = load_module(str(REPO / "examples" / f"{name}.tileir"))
        for version in ((13, 3), (13, 1)):
            codes[f"{name}@{version[0]}.{version[1]}"] = write_bytecode(module, version)
    rng = random.Random(SEED)
    cases: list[Case] = []

    def add(name: str, kernel: str, kind: str, what: str, data: bytes, bytecode: bool) -> None:
        path = root / f"{len(cases):04d}-{name}{'.tileirbc' if bytecode else '.tileir'}"
        path.write_bytes(data)
        cases.append(Case(path, kernel, kind, what, bytecode))

    for name, data in texts.items():
        add(name, name, "seed", "unmutated", data, False)
        others = [d for n, d in texts.items() if n != name]
        for kind in TEXT_KINDS:
            for _ in range(PER_KIND):
                mutated, what = mutate_text(data, others, kind, rng)
                add(name, name, kind, what, mutated, False)
    for name, data in codes.items():
        kernel = name.split("@")[0]
        add(name.replace("@", "-"), kernel, "seed", "unmutated", data, True)
        others = [d for n, d in codes.items() if n != name]
        for kind in BYTECODE_KINDS:
            for _ in range(PER_KIND):
                mutated, what = mutate_bytecode(data, others, kind, rng)
                add(name.replace("@", "-"), kernel, kind, what, mutated, True)
    return cases


# --------------------------------------------------------------------------------------------
# The command line

_OUT = "{out}"  # replaced by a fresh output path per job


def _jobs(command: str, case: Case, index: int) -> list[list[str]]:
    """The argv lists of `command` for one case (`index` spreads the costly ones)."""
    p = str(case.path)
    text = not case.bytecode
    run_args = RUN_ARGS[case.kernel]
    if command == "check":
        return [["check", p], ["check", "--target-version", "13.1", "--Wunsupported-hints", p]]
    if command == "fmt":
        # --check and -i take text only (bytecode has one canonical form: `tileir fmt` prints it).
        return [["fmt", p], ["fmt", "--check", p], ["fmt", "-i", "{copy}"]] if text else [["fmt", p]]
    if command == "opt":
        if not text:
            return [["opt", p, "-o", _OUT]]
        return [
            ["opt", p, "-o", _OUT],
            ["opt", "--split-input-file", "--mlir-print-op-generic", "--mlir-print-debuginfo", p, "-o", _OUT],
            ["opt", "--canonicalize", "--default-names", p, "-o", _OUT],
            ["opt", "--verify-diagnostics", p],
        ]
    if command == "asm":
        return [["asm", p, "-o", _OUT], ["asm", p, "-o", _OUT, "--bytecode-version", "13.1"]] if text else []
    if command == "disasm":
        return [["disasm", p, "-o", _OUT], ["disasm", "-g", p, "-o", _OUT]] if not text or index % 4 == 0 else []
    if command == "translate":
        if not text:
            return [["translate", p, "--cudatilebc-to-mlir", "-o", _OUT]]
        return [
            ["translate", p, "--mlir-to-cudatilebc", "--bytecode-version", "13.2", "-o", _OUT],
            ["translate", p, "--test-cudatile-roundtrip", "-o", _OUT],
        ]
    if command == "layout":
        if not text:
            return [["layout", p]]  # bytecode keeps no value names: every view
        view = "px" if case.kernel == "softmax" else "pa"  # --svg draws one view
        return [["layout", p], ["layout", p, "--value", view, "--extent", "0=1000", "--extent", "1=77", "--svg", _OUT]]
    if command == "run":
        return [["run", p, "--backend", "cpu", *run_args, "-q"]]
    if command == "bench":
        # Timing code on top of `run`'s: a third of the cases is enough.
        return [["bench", p, "--backend", "cpu", "--repeat", "1", "--warmup", "0", *run_args]] if index % 3 == 0 else []
    if command == "compile":
        # The lowering to Triton source for every text case; Triton's own compile (TTIR) is
        # Triton's business and costs a second a kernel: a few cases only.
        jobs = [["compile", p, "--emit", "triton", "-q", "-o", _OUT]] if text else []
        if index % 12 == 0:
            jobs.append(["compile", p, "--emit", "ttir", "--arch", "sm_80", "-q", "-o", _OUT])
        if index % 12 == 6 and _HAVE_TILEIRAS:  # NVIDIA's tileiras on what we write of the case
            jobs.append(
                ["compile", p, "--compiler", "tileiras", "--emit", "cubin", "--arch", "sm_100", "-q", "-o", _OUT]
            )
        return jobs
    raise ValueError(command)


COMMANDS = ("check", "fmt", "opt", "asm", "disasm", "translate", "layout", "run", "bench", "compile")

# Seeds (unmutated examples) whose job may exit non-zero, and why: everything else must be 0 on a
# seed, or the fuzzing would test an argv mistake instead of the command.
SEED_NONZERO = {
    ("disasm", False): "text is not bytecode",
    ("asm", True): "asm takes text",
}


def _worker(jobs: list[dict], work: Path, timeout: float) -> list[dict]:
    """Run the jobs in one worker process; its results (a dead worker is a failure that names
    the job it was running)."""
    spec = work / f"jobs-{time.monotonic_ns()}.json"
    spec.write_text(json.dumps({"jobs": jobs, "limit": CASE_SECONDS}))
    env = dict(os.environ, TILEIR_CACHE_DIR=str(work / "cache"), PYTHONPATH=str(REPO))
    env.pop("TILEIR_TRACEBACK", None)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tests.fuzz_faces_worker", str(spec)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            preexec_fn=_limit_memory,
        )
        stdout, returncode, stderr = proc.stdout, proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as exc:
        stdout, returncode, stderr = exc.stdout or "", None, f"the worker ran past {timeout} s"
        if isinstance(stdout, bytes):
            stdout = stdout.decode("utf-8", "replace")
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    results = [r for r in lines if "starting" not in r]
    if returncode != 0 or len(results) != len(jobs):
        started = [r["starting"] for r in lines if "starting" in r]
        last = started[-1] if started else None
        tail = "\n".join(stderr.strip().splitlines()[-15:])
        pytest.fail(f"the worker died (status {returncode}) while running {last}:\n{tail}")
    return results


def _problems(result: dict, input_bytes: int) -> list[str]:
    problems = []
    if result.get("escaped"):
        problems.append(f"an exception escaped main(): {result['escaped']}")
    elif result["status"] not in OK_STATUSES:
        problems.append(f"exit status {result['status']}: {result['stderr'].strip()[-600:]}")
    if "Traceback" in result["stderr"]:
        problems.append(f"a traceback on stderr: {result['stderr'][-1500:]}")
    if result["seconds"] > CASE_SECONDS:
        problems.append(f"took {result['seconds']:.1f} s")
    output = result["stdout_bytes"] + result["stderr_bytes"]
    if output > OUTPUT_FACTOR * input_bytes + OUTPUT_SLACK:
        problems.append(f"wrote {output} bytes of output for {input_bytes} bytes of input")
    return problems


@dataclass(frozen=True, slots=True)
class Defect:
    """A defect this test found in code it does not own; tolerated by the fuzz tests (its
    pattern matches the failure) and reproduced by `test_known_defects`, which is xfail(strict):
    it starts to pass, and fails for it, once the defect is fixed. Remove the entry then."""

    name: str
    reason: str
    pattern: str  # a regex over the failure's description (status line, stderr, traceback)
    argv: tuple[str, ...]  # the reproducer: a `tileir` command line; {input} is the input file
    input: bytes


# None open (the last, decimal literals past 4300 digits, is fixed: tests/compiler/test_int_literals.py).
KNOWN_DEFECTS: tuple[Defect, ...] = ()


def _known(failure: str) -> Defect | None:
    return next((d for d in KNOWN_DEFECTS if re.search(d.pattern, failure, re.S)), None)


def _fuzz_command(command: str, corpus: list[Case], work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    jobs: list[dict] = []
    for index, case in enumerate(corpus):
        for argv in _jobs(command, case, index):
            out = work / f"out-{len(jobs)}"
            copy = work / f"copy-{len(jobs)}{case.path.suffix}"
            if "{copy}" in argv:
                copy.write_bytes(case.path.read_bytes())
            argv = [a.replace(_OUT, str(out)).replace("{copy}", str(copy)) for a in argv]
            jobs.append({"argv": argv, "case": index})
    assert jobs, f"no {command} jobs"
    results = _worker(jobs, work, timeout=60 + CASE_SECONDS * 2 + len(jobs) * 2)
    failures: list[str] = []
    tolerated: list[str] = []
    statuses: dict[int | None, int] = {}
    for result in results:
        case = corpus[result["case"]]
        statuses[result["status"]] = statuses.get(result["status"], 0) + 1
        argv = " ".join(result["argv"])
        if case.kind == "seed" and result["status"] != 0 and (command, case.bytecode) not in SEED_NONZERO:
            failures.append(f"the unmutated seed: `tileir {argv}` exited {result['status']}: {result['stderr'][-500:]}")
        for problem in _problems(result, case.path.stat().st_size):
            described = f"`tileir {argv}` on {case.label}: {problem}\n{result.get('traceback', '')}"
            (tolerated if _known(described) else failures).append(described)
    slowest = max(results, key=lambda r: r["seconds"])
    print(
        f"{command}: {len(results)} runs on {len({r['case'] for r in results})} files, statuses {statuses}, "
        f"slowest {slowest['seconds']:.2f} s ({' '.join(slowest['argv'][:2])}); "
        f"{len(tolerated)} known-defect failures tolerated"
    )
    assert not failures, f"{len(failures)} of {len(results)} `tileir {command}` runs failed:\n\n" + "\n\n".join(
        failures[:8]
    )
    # Not vacuous: the mutations reached errors as well as successes.
    assert statuses.get(0) and (statuses.get(1) or statuses.get(2)), statuses


@pytest.mark.parametrize("command", COMMANDS)
def test_every_subcommand_on_mutated_inputs(command: str, corpus: list[Case], tmp_path: Path) -> None:
    _fuzz_command(command, corpus, tmp_path)


def test_corpus_has_every_kind(corpus: list[Case]) -> None:
    kinds = {c.kind for c in corpus}
    assert set(TEXT_KINDS) | set(BYTECODE_KINDS) | {"seed"} <= kinds
    # The mutations differ from their seeds (a no-op mutation would test the seed again).
    seeds = {(c.kernel, c.bytecode): c.path.read_bytes() for c in corpus if c.kind == "seed"}
    unchanged = [
        c.label
        for c in corpus
        if c.kind not in ("seed", "deep_nesting") and c.path.read_bytes() == seeds.get((c.kernel, c.bytecode))
    ]
    assert len(unchanged) <= len(corpus) // 20, unchanged


# --------------------------------------------------------------------------------------------
# Real processes: what the in-process worker cannot see (a process's start, its real streams,
# its exit status, the memory limit of a whole process). One process each: a few only.

_HUGE = b"9" * 5000  # past Python's 4300-digit limit on int(str)
REAL_CASES = {
    "invalid UTF-8": (b"cuda_tile.module @m {\n  entry @k() {\n    // \xff\xfe caf\xc3\n    return\n  }\n}\n", "check"),
    "a lone surrogate": (b"cuda_tile.module @m { entry @k() { %x = constant <i32: \xed\xa0\x80> : tile<i32> }}", "opt"),
    "deep type nesting": (b"cuda_tile.module @m { entry @k() { %0 = constant <i32: 1> : " + b"tile<" * 50_000, "check"),
    "deep region nesting": (
        b"cuda_tile.module @m {\n entry @k(%c: tile<i1>) {\n" + b"if %c {\n" * 5000 + b"yield\n}\n" * 5000
        + b"return\n}\n}\n", "run"),
    "NUL bytes": (b"\x00" * 1000, "run"),
    "a 250 KB line": (b"cuda_tile.module @m { entry @k() { " + b"%x = " * 50_000 + b"} }", "opt"),
}  # fmt: skip


def _real_process(argv: list[str], tmp_path: Path) -> tuple[int, str, float]:
    env = dict(os.environ, PYTHONPATH=str(REPO), TILEIR_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("TILEIR_TRACEBACK", None)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "compiler", *argv],
        capture_output=True,
        env=env,
        timeout=120,
        preexec_fn=_limit_memory,
    )
    return proc.returncode, proc.stderr.decode("utf-8", "replace"), time.perf_counter() - start


@pytest.mark.parametrize("name", sorted(REAL_CASES))
def test_real_processes(name: str, tmp_path: Path) -> None:
    """`python -m compiler` as a user runs it, on hostile inputs, under the memory limit."""
    data, command = REAL_CASES[name]
    path = tmp_path / "input.tileir"
    path.write_bytes(data)
    argv = {
        "check": ["check", str(path)],
        "opt": ["opt", str(path), "-o", str(tmp_path / "out.tileir")],
        "run": ["run", str(path), "--backend", "cpu", "--grid", "1"],
    }[command]
    status, stderr, elapsed = _real_process(argv, tmp_path)
    what = f"`tileir {' '.join(argv)}` on {name}"
    assert status in (1, 2), f"{what}: exit status {status}: {stderr[-800:]}"
    assert "Traceback" not in stderr, f"{what}: {stderr[-1500:]}"
    assert elapsed < CASE_SECONDS * 3, f"{what}: took {elapsed:.1f} s"
    first = stderr.lstrip().splitlines()[0] if stderr.strip() else ""
    assert first.startswith(("tileir", str(path))), (
        f"{what}: the first line names neither tool nor file: {first[:200]!r}"
    )


def test_hostile_arguments(tmp_path: Path) -> None:
    """Arguments, not files: sizes past memory, numbers past every integer type (one worker)."""
    vadd, softmax = str(REPO / "examples" / "vector_add.tileir"), str(REPO / "examples" / "softmax.tileir")
    run = ["run", vadd, "--backend", "cpu"]
    argvs = [
        [*run, "--grid", "4", "--cutile-args", "--arg", "zeros:100000x100000:f32", "--arg", "rand:4000:f32",
         "--arg", "zeros:4000:f32"],
        [*run, "--grid", "99999999999999999999", "--arg", "1"],
        [*run, "--grid", "0"],
        [*run, "--grid", "4", "--cutile-args", "--arg", "rand:-5:f32"],
        [*run, "--grid", "4", "--arg", "1e999999"],
        [*run, "--grid", "1", "--arg", _HUGE.decode()],
        [*run, "--grid", "1", "--cutile-args", "--arg", f"rand:{_HUGE.decode()}:f32"],
        ["layout", softmax, "--extent", "0=-1"],
        ["layout", softmax, "--line", _HUGE.decode()],
        ["bench", vadd, "--backend", "cpu", "--repeat", "99999999999999999999", "--grid", "1", "--arg", "1"],
        ["compile", vadd, "--emit", "triton", "--num-warps", _HUGE.decode()],
        ["asm", vadd, "--bytecode-version", "99999999999999999999.1", "-o", str(tmp_path / "x")],
    ]  # fmt: skip
    # Accepted, but bounded: the picture of a tensor with 10^20 rows is elided, not drawn.
    accepted = [["layout", softmax, "--extent", "0=99999999999999999999", "--extent", "1=3"]]
    results = _worker([{"argv": a, "case": 0} for a in argvs + accepted], tmp_path, timeout=180)
    failures = []
    for result in results:
        argv = " ".join(result["argv"])[:200]
        problems = [f"`tileir {argv}`: {p}" for p in _problems(result, 10_000)]
        if result["argv"] in argvs and result["status"] not in (1, 2, 3):
            problems.append(f"`tileir {argv}` was accepted (status {result['status']})")
        failures += [p for p in problems if not _known(f"`tileir {' '.join(result['argv'])}`: {p}")]
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not KNOWN_DEFECTS, reason="no known defect is open")
@pytest.mark.parametrize(
    "defect",
    [pytest.param(d, marks=pytest.mark.xfail(strict=True, reason=d.reason), id=d.name) for d in KNOWN_DEFECTS],
)
def test_known_defects(defect: Defect, tmp_path: Path) -> None:
    """Each known defect's reproducer, as a real process: xfail until it is fixed."""
    path = tmp_path / "input.tileir"
    path.write_bytes(defect.input)
    argv = [a.replace("{input}", str(path)).replace("{out}", str(tmp_path / "out")) for a in defect.argv]
    status, stderr, _ = _real_process(argv, tmp_path)
    assert status in OK_STATUSES and "Traceback" not in stderr, f"`tileir {' '.join(argv)}`: {status}: {stderr[-600:]}"


# --------------------------------------------------------------------------------------------
# The language server, through a raw JSON-RPC client over its stdio (so that the test controls
# the framing: a frame that is not UTF-8 or not JSON is sent as well as mutated documents).

REQUEST_SECONDS = 10.0  # one request on one small document; generous for a loaded 2-core CI


class RawClient:
    """The least an LSP client does: Content-Length frames, ids, answers to the server's own
    requests (with null), notifications kept in order, the server's stderr kept."""

    def __init__(self, env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tile_lsp"],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=_limit_memory,
        )
        self.responses: dict[int, dict] = {}
        self.notifications: list[dict] = []
        self.stderr: list[str] = []
        self.closed = False
        self.cond = threading.Condition()
        self._ids = iter(range(1, 1 << 30))
        self._write_lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                assert length is not None, "a frame without Content-Length"
                message = json.loads(stream.read(length))
                if "method" in message and "id" in message:  # the server asks: answer null
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                    continue
                with self.cond:
                    if "id" in message:
                        self.responses[message["id"]] = message
                    else:
                        self.notifications.append(message)
                    self.cond.notify_all()
        finally:
            with self.cond:
                self.closed = True
                self.cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace"))

    def send(self, message: dict | bytes) -> None:
        body = message if isinstance(message, bytes) else json.dumps(message).encode("ascii")
        with self._write_lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict | None, what: str) -> tuple[dict, float]:
        """The response (result or error) and how long it took; fails past REQUEST_SECONDS."""
        ident = next(self._ids)
        start = time.perf_counter()
        self.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        with self.cond:
            answered = self.cond.wait_for(lambda: ident in self.responses or self.closed, timeout=REQUEST_SECONDS * 3)
            if ident not in self.responses:
                state = "the server exited" if self.closed else f"no answer within {REQUEST_SECONDS * 3} s"
                pytest.fail(f"{method} on {what}: {state} ({answered=})\n{''.join(self.stderr[-30:])}")
            return self.responses.pop(ident), time.perf_counter() - start

    def diagnostics(self, uri: str, version: int, what: str, since: int) -> list[dict] | None:
        """Wait for the diagnostics of `uri` at `version` (published after each open/change);
        None when, instead, the server logged a failure of its own after notification `since`."""

        def published() -> dict | None:
            for n in reversed(self.notifications):
                p = n.get("params") or {}
                if n.get("method") == "textDocument/publishDiagnostics" and p.get("uri") == uri:
                    if p.get("version") in (version, None):
                        return p
            return None

        def failed() -> bool:
            return any(_is_bug(n) for n in self.notifications[since:])

        with self.cond:
            if not self.cond.wait_for(
                lambda: published() is not None or failed() or self.closed, timeout=REQUEST_SECONDS * 3
            ):
                pytest.fail(f"no diagnostics for {what} (version {version}) within {REQUEST_SECONDS * 3} s")
            found = published()
            if found is None and not failed():
                pytest.fail(f"the server exited after {what}:\n{''.join(self.stderr[-30:])}")
            return found["diagnostics"] if found is not None else None

    def logged_bugs(self) -> list[str]:
        """What the server reported to the client as its own failures (a feature's exception)."""
        return [n["params"]["message"] for n in self.notifications if _is_bug(n)]

    def stderr_tracebacks(self, until: int | None = None) -> list[str]:
        """Tracebacks in the server's log (stderr) up to line `until`, each with its exception."""
        # One log record per `LEVEL:logger:` line (Python's default format): each record with a
        # traceback, whole, so that its last line (the exception) is there.
        records = re.split(r"\n(?=[A-Z]+:[\w.]+:)", "".join(self.stderr[:until]))
        return [r for r in records if "Traceback" in r]


def _ends(text: str) -> str:
    """A long traceback's first and last lines (where it started, what was raised)."""
    return text if len(text) < 1600 else f"{text[:400]}\n...\n{text[-1200:]}"


def _is_bug(notification: dict) -> bool:
    """A `window/logMessage` in which the server reports an exception of its own."""
    params = notification.get("params") or {}
    return notification.get("method") == "window/logMessage" and "failed (a bug)" in str(params.get("message"))


def _position(text: str, offset: int) -> dict:
    """LSP position (UTF-16 columns) of a character offset."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    column = len(text[start:offset].encode("utf-16-le", "surrogatepass")) // 2
    return {"line": line, "character": column}


def _document_requests(uri: str, text: str, rng: random.Random) -> list[tuple[str, dict]]:
    doc = {"uri": uri}
    lines = text.count("\n")
    positions = [_position(text, rng.randrange(len(text) + 1)) for _ in range(2)]
    positions.append({"line": lines + 5, "character": 300})  # past the end
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": lines + 1, "character": 0}}
    tabs = {"tabSize": 4, "insertSpaces": False}
    requests: list[tuple[str, dict]] = [
        ("textDocument/documentSymbol", {"textDocument": doc}),
        ("textDocument/foldingRange", {"textDocument": doc}),
        ("textDocument/semanticTokens/full", {"textDocument": doc}),
        ("textDocument/semanticTokens/range", {"textDocument": doc, "range": whole}),
        ("textDocument/formatting", {"textDocument": doc, "options": {"tabSize": 2, "insertSpaces": True}}),
        (
            "textDocument/rangeFormatting",
            {"textDocument": doc, "range": whole, "options": tabs},
        ),
        ("textDocument/inlayHint", {"textDocument": doc, "range": whole}),
        ("textDocument/codeAction", {"textDocument": doc, "range": whole, "context": {"diagnostics": []}}),
        ("textDocument/selectionRange", {"textDocument": doc, "positions": positions}),
        ("tileir/convertToBytecode", {"uri": uri}),
    ]
    for pos in positions:
        at = {"textDocument": doc, "position": pos}
        requests += [
            ("textDocument/hover", at),
            ("textDocument/completion", at),
            ("textDocument/signatureHelp", at),
            ("textDocument/definition", at),
            ("textDocument/references", {**at, "context": {"includeDeclaration": True}}),
            ("textDocument/documentHighlight", at),
            ("textDocument/prepareRename", at),
            ("textDocument/rename", {**at, "newName": "renamed"}),
            ("tileir/layout", {**at, "extents": {"0": 10**30, "1": -5}}),
        ]
    return requests


# Errors a request may answer with on purpose (the feature refuses: the document has errors, a
# parameter is wrong); InternalError (-32603) and anything mentioning a traceback are bugs.
_DELIBERATE_ERRORS = (-32803, -32602, -32600)


def _check_response(response: dict, seconds: float, what: str) -> list[str]:
    problems = []
    error = response.get("error")
    if error is not None and (error.get("code") not in _DELIBERATE_ERRORS or "Traceback" in json.dumps(error)):
        problems.append(f"{what}: error response {json.dumps(error)[:800]}")
    if seconds > REQUEST_SECONDS:
        problems.append(f"{what}: answered after {seconds:.1f} s")
    return problems


def test_language_server_on_mutated_documents(corpus: list[Case], tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO), TILEIR_CACHE_DIR=str(tmp_path / "cache"))
    client = RawClient(env)
    rng = random.Random(SEED)
    problems: list[str] = []
    answered = 0
    before_frames = None
    try:
        response, _ = client.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": REPO.as_uri(),
                "capabilities": {},
                "initializationOptions": {"tileir": {"diagnostics": {"debounceMs": 0}}},
            },
            "initialize",
        )
        assert "result" in response, response
        client.notify("initialized", {})
        texts = [c for c in corpus if not c.bytecode]
        for number, case in enumerate(texts):
            data = case.path.read_bytes()
            # What an editor holds for bytes that are not UTF-8: U+FFFD; one document in five
            # keeps them as lone surrogates instead (valid JSON: \udcff escapes).
            text = data.decode("utf-8", "surrogateescape" if number % 5 == 4 else "replace")
            uri = f"file:///fuzz/{case.path.name}"
            mark = len(client.notifications)
            client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": uri, "languageId": "tileir", "version": 1, "text": text}},
            )
            client.diagnostics(uri, 1, case.label, mark)
            for method, params in _document_requests(uri, text, rng):
                response, seconds = client.request(method, params, case.label)
                answered += 1
                problems += _check_response(response, seconds, f"{method} on {case.label}")
            # Then the whole text replaced by another mutation, and an edit in the middle of it.
            other = texts[(number * 7 + 3) % len(texts)]
            text = other.path.read_bytes().decode("utf-8", "replace")
            mark = len(client.notifications)
            client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": text}]},
            )
            client.diagnostics(uri, 2, f"{case.label}, replaced by {other.label}", mark)
            at = _position(text, rng.randrange(len(text) + 1))
            mark = len(client.notifications)
            client.notify(
                "textDocument/didChange",
                {
                    "textDocument": {"uri": uri, "version": 3},
                    "contentChanges": [{"range": {"start": at, "end": at}, "text": "tile<" * 300 + "\n}{%"}],
                },
            )
            client.diagnostics(uri, 3, f"{case.label} after an edit", mark)
            for method, params in _document_requests(uri, text, rng)[:6]:
                response, seconds = client.request(method, params, f"{case.label} v3")
                answered += 1
                problems += _check_response(response, seconds, f"{method} on {case.label} v3")
            client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
        # Bytecode files, mutated, through the bytecode viewer's request.
        for case in (c for c in corpus if c.bytecode):
            response, seconds = client.request("tileir/convertFromBytecode", {"uri": case.path.as_uri()}, case.label)
            answered += 1
            problems += _check_response(response, seconds, f"convertFromBytecode on {case.label}")
        # Frames that are not UTF-8 or not JSON: the server may answer them with an error (and
        # log them: a client's bug) or not at all, but must go on answering.
        before_frames = len(client.stderr)
        client.send(b'{"jsonrpc": "2.0", "id": 999999, "method": "textDocument/hover", "params": {"x": "\xff\xfe"}}')
        client.send(b'{"jsonrpc": "2.0", "id": 999998, "method": ')
        client.send({"jsonrpc": "2.0", "id": 999997, "method": "no/suchMethod", "params": {}})
        response, seconds = client.request("workspace/symbol", {"query": ""}, "after broken frames")
        answered += 1
        assert "result" in response, response
        response, _ = client.request("shutdown", None, "shutdown")
        assert "error" not in response, response
        client.notify("exit", {})
        client.proc.wait(timeout=30)
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()
    if os.environ.get("TILEIR_FUZZ_DUMP"):
        dump = "".join(client.stderr) + "\n=== logged ===\n" + "\n=====\n".join(client.logged_bugs())
        Path(os.environ["TILEIR_FUZZ_DUMP"]).write_text(dump)
    bugs, tolerated = [], 0
    # The tracebacks logged after the broken frames do not count: pygls saying that the client
    # sent garbage, which is true.
    for text in client.logged_bugs() + client.stderr_tracebacks(until=before_frames):
        if _known(text):
            tolerated += 1
        else:
            bugs.append(text)
    print(
        f"language server: {answered} requests answered on {len(corpus)} files; "
        f"{tolerated} failures of known defects tolerated"
    )
    assert not bugs, f"{len(bugs)} failures logged by the server:\n" + "\n\n".join(_ends(b) for b in bugs[:6])
    assert not problems, f"{len(problems)} bad answers:\n" + "\n".join(problems[:10])
    assert client.proc.returncode == 0, f"the server exited with {client.proc.returncode}"


def test_language_server_refusals_leave_no_traceback(tmp_path: Path) -> None:
    """A rename the server refuses (on a type) answers with an error, and logs no traceback
    (pygls logs a handler's JsonRpcException at ERROR level with its traceback; the server's
    deliberate answers must not read as crashes in the editor's output panel)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), TILEIR_CACHE_DIR=str(tmp_path / "cache"))
    client = RawClient(env)
    try:
        client.request("initialize", {"processId": None, "rootUri": None, "capabilities": {}}, "initialize")
        client.notify("initialized", {})
        uri = "file:///fuzz/refusal.tileir"
        text = (REPO / "examples" / "vector_add.tileir").read_text()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "tileir", "version": 1, "text": text}},
        )
        client.diagnostics(uri, 1, "vector_add.tileir", 0)
        at = _position(text, text.index("tile<ptr<f32>>"))
        response, _ = client.request(
            "textDocument/prepareRename", {"textDocument": {"uri": uri}, "position": at}, "a type"
        )
        assert "error" in response, f"renaming a type was not refused: {response}"
        client.request("shutdown", None, "shutdown")
        client.notify("exit", {})
        client.proc.wait(timeout=30)
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
            client.proc.wait()
    assert not client.stderr_tracebacks(), client.stderr_tracebacks()[0][:1500]

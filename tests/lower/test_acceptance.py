"""Acceptance of the Triton lowering: every kernel we have compiles to a cubin for sm_80, sm_90
and sm_100, or is refused on purpose; and the examples and samples compute under Triton's
interpreter what the CPU interpreter computes.

The cases:
* every example (examples/*.tileir);
* every sample of ../shared/samples: the .tileir text and both bytecode versions
  (`_13.1.tileirbc`, `_13.3.tileirbc`, read by our reader);
* every `entry` of every valid conformance file (../shared/conformance/cuda-tile/test/Dialect/
  CudaTile: the files `tests/conformance` verifies cleanly, i.e. those whose RUN lines expect
  no error), each `// -----` chunk parsed on its own. `testing$func` bodies are not kernels.
The shared cases skip cleanly (one skipped test says why) when ../shared is absent.

Compiles or refused. `REFUSALS` maps (case id, arch or "*") to a substring of the LowerError
the lowering gives. Strict both ways: a refusal not in the table fails, a listed case that
compiles fails ("remove it"), and so does a listed case refused for another reason. A refusal
must be a LowerError from the lowering itself: a LowerError saying Triton could not compile our
output is a bug in the lowering and fails whatever the table says, and so does any other
exception.

Cost and the choice made. 3 examples + 9 sample files + 135 conformance entries = 147 cases,
x 3 arches = 441 compiles at 0.1-1 s of CPU each with Triton 3.6 (tiny kernels ~0.15 s, the
matmuls ~1 s): about 1.5 minutes of CPU. Rather than compiling the conformance entries for one
arch only (which would leave the sm_80 and sm_100 paths of most ops unchecked), every (case, arch)
is lowered to Triton source here (5 s for all 441), the sources are deduplicated by `canonical`
(the program up to variable names, with its parameter types, compile options and arch: a
sample's three forms give one program, and so do many conformance entries; 432 lowered -> ~350
distinct), and the distinct sources compile in a
process pool of 2 (CI has 2 cores), through the compile cache, which is the session's private one
(`harness._private_cache`): test_sass.py then finds the examples' and samples' cubins there.
Measured on this 2-core machine while other jobs loaded it (load average 3-7): the compiles take
55-85 s of CPU and 65-120 s of wall clock; the whole file 2.3-2.6 minutes (~70 s of CPU), of which
the Triton-interpreter runs ~15 s. `python -m tests.lower.test_acceptance` prints every case that
does not compile, with its diagnostic, the number of distinct sources and the time.

Triton's interpreter. Each example and sample runs on the CPU interpreter and under Triton's
interpreter with the arguments and grid of tests/runtime/test_samples_run.py's recipes (softmax
on fewer rows: see `_interp_recipes`), and every array must end equal: bitwise where the
kernel's ops are exact, else within the ulp bound of `ULP` below (each with its reason); the
CPU interpreter's result must also be the recipe's NumPy reference. A sample's bytecode forms
are run only when their generated source differs from the text form's (`canonical`).
"""

from __future__ import annotations

import functools
import io
import keyword
import os
import time
import tokenize
import traceback
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from compiler.lower import LowerError, Param, lower
from compiler.lower.codegen import KernelSource
from compiler.runtime import load_module
from tests.corpus import SAMPLES_DIR, SHARED_MISSING, conformance_files, example_files, read, sample_files

from .harness import ARCHES, run_both

# (case id, arch or "*") -> a substring of the LowerError's text. Keep it short: each entry is a
# kernel users cannot compile. Case ids: `examples/NAME`, `samples/NAME[_13.1|_13.3]`,
# `FILE.mlir:CHUNK:KERNEL` (see `cases()`).
# (Empty since f4E2M1FN and i4 tiles are held as bytes: every case compiles.)
REFUSALS: dict[tuple[str, str], str] = {}

# Ulp bounds of the Triton-interpreter comparison, by kernel (file stem without the bytecode
# version); kernels not listed must match bitwise.
ULP: dict[str, tuple[int, str]] = {
    "matmul": (
        1,
        "f16 result of an f32 accumulation in another order: the f32 sums differ by a few f32 ulps "
        "(K * 2^-24 relative, far below an f16 ulp), so the f16 roundings differ by at most one f16 ulp "
        "(measured with Triton 3.6's interpreter, whose tl.dot is NumPy's f32 matmul too: 0)",
    ),
    "softmax": (
        24,
        "f32 exp is within 4 ulp under Triton's interpreter (NumPy's exp2, ops_math); the row sums of up to "
        "1024 of them take the CPU interpreter's pairwise order (compiler/lower/fold.py) but round other inputs at "
        "each of its ceil(log2 1024) = 10 levels: each sum within ~14 ulp of the CPU interpreter's, so the "
        "quotients within ~18, plus the final rounding of each division (measured: 4 ulp over 6 seeds of "
        "both kernels; 11 when Triton's interpreter still folded a tl.reduce sequentially)",
    ),
}

_CONFORMANCE_ENTRY = "cuda_tile.entry"


def canonical(source: str) -> str:
    """`source` up to a consistent renaming of its identifiers (attribute names after a dot
    and keywords kept), comments dropped: two generated modules with the same canonical form
    are the same program with other variable names, so Triton compiles and runs them alike.
    A sample's text and bytecode forms differ exactly so (bytecode keeps no SSA names)."""
    names: dict[str, str] = {}
    out: list[str] = []
    after_dot = False
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type in (tokenize.COMMENT, tokenize.NL):
            continue
        text = tok.string
        if tok.type == tokenize.NAME and not keyword.iskeyword(text) and not after_dot:
            text = names.setdefault(text, f"n{len(names)}")
        out.append(f"{tok.type}:{text}")
        after_dot = tok.type == tokenize.OP and tok.string == "."
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# The cases


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    path: Path
    chunk: int | None = None  # conformance: the `// -----` chunk
    kernel: str | None = None  # the entry's symbol (None: the module's only kernel)


def _entries(module) -> Iterator[Any]:
    todo = list(module.body.ops)
    while todo:
        op = todo.pop(0)
        if op.name == _CONFORMANCE_ENTRY:
            yield op
        else:
            for region in op.regions:
                for block in region.blocks:
                    todo.extend(block.ops)


def valid_conformance_files() -> list[Path]:
    """The conformance files whose RUN lines expect no error (as tests/conformance's VALID_FILES)."""
    out = []
    for f in conformance_files():
        text = read(f)
        if "expected-" not in text and "not cuda-tile-opt" not in text:
            out.append(f)
    return out


@functools.cache
def _chunks(path: Path) -> list[tuple[int, Any]]:
    """(chunk index, verified module) of each chunk of a conformance file (parsed once)."""
    from compiler.text import split_input
    from compiler.verify import check_text

    out = []
    for i, (chunk, offset) in enumerate(split_input(read(path))):
        result, _ = check_text("\n" * offset + chunk, str(path), allow_unregistered=True)
        out.append((i, result.module))
    return out


def cases() -> list[Case]:
    found = [Case(f"examples/{p.stem}", p) for p in example_files()]
    for p in sample_files():
        found.append(Case(f"samples/{p.stem}", p))
        for version in ("13.1", "13.3"):
            bc = p.with_name(f"{p.stem}_{version}.tileirbc")
            if bc.exists():
                found.append(Case(f"samples/{bc.stem}", bc))
    for path in valid_conformance_files():
        for index, module in _chunks(path):
            seen: dict[str, int] = {}
            for entry in _entries(module):
                name = entry.properties["sym_name"].value
                seen[name] = seen.get(name, 0) + 1
                suffix = f"#{seen[name]}" if seen[name] > 1 else ""
                found.append(Case(f"{path.name}:{index}:{name}{suffix}", path, index, name))
    return found


CASES = {c.id: c for c in cases()}


def load(case: Case):
    """(module, entry op) of a case."""
    if case.chunk is None:
        module = load_module(str(case.path))
        entries = list(_entries(module))
        if case.kernel is None and len(entries) == 1:
            return module, entries[0]
    else:
        module = dict(_chunks(case.path))[case.chunk]
        entries = list(_entries(module))
    name, _, nth = (case.kernel or "").partition("#")
    matching = [e for e in entries if e.properties["sym_name"].value == name]
    return module, matching[int(nth) - 1 if nth else 0]


def refusal(case_id: str, arch: str) -> str | None:
    return REFUSALS.get((case_id, arch), REFUSALS.get((case_id, "*")))


# --------------------------------------------------------------------------------------------
# Lowering and compiling every case


@dataclass(slots=True)
class Outcome:
    kind: str  # "ok", "refused" (LowerError from the lowering), "triton" (Triton failed on our output), "crash"
    message: str = ""
    compile_key: tuple[str, str] | None = None  # the deduplicated source this (case, arch) compiled as


def _portable(src: KernelSource) -> KernelSource:
    """The source without what does not cross a process boundary (IR objects): enough for
    `compile_source` (text, name, target, signature, options); Triton errors then point at
    generated lines instead of Tile IR ops, which the parent re-reads when one occurs."""
    params = [Param(p.name, p.kind, p.signature) for p in src.params]
    return replace(src, params=params, line_ops={})


def _compile_in_worker(src: KernelSource) -> tuple[str, str]:
    from compiler.lower import compile_source

    try:
        compile_source(src)
    except LowerError as exc:
        return "triton", exc.report()
    except Exception:  # noqa: BLE001 - every other exception is reported as a crash, with its traceback
        return "crash", traceback.format_exc()
    return "ok", ""


@dataclass(slots=True)
class Run:
    outcomes: dict[tuple[str, str], Outcome]
    distinct: int
    seconds: float

    def __repr__(self) -> str:  # pytest prints fixtures of failing tests: keep it one line
        return f"Run({len(self.outcomes)} outcomes, {self.distinct} distinct sources, {self.seconds:.0f} s)"


def run_all(selected: list[Case], cache: Path, jobs: int = 2) -> Run:
    """Lowers every (case, arch), compiles the distinct sources in a pool of `jobs` processes."""
    start = time.perf_counter()
    outcomes: dict[tuple[str, str], Outcome] = {}
    sources: dict[tuple[str, str], KernelSource] = {}
    for case in selected:
        try:
            module, entry = load(case)
        except Exception:  # noqa: BLE001 - a case that cannot even be loaded is reported, not raised
            for arch in ARCHES:
                outcomes[(case.id, arch)] = Outcome("crash", "loading: " + traceback.format_exc())
            continue
        for arch in ARCHES:
            try:
                src = lower(module, entry, arch)
            except LowerError as exc:
                outcomes[(case.id, arch)] = Outcome("refused", exc.report())
                continue
            except Exception:  # noqa: BLE001
                outcomes[(case.id, arch)] = Outcome("crash", "lowering: " + traceback.format_exc())
                continue
            # The program up to names, and what Triton is told beside it: parameter types, options.
            extra = repr((list(src.signature.values()), sorted(src.options.items())))
            key = (canonical(src.text) + "\n" + extra, arch)
            sources.setdefault(key, src)
            outcomes[(case.id, arch)] = Outcome("ok", compile_key=key)
    results: dict[tuple[str, str], tuple[str, str]] = {}
    old = os.environ.get("TILEIR_CACHE_DIR")
    os.environ["TILEIR_CACHE_DIR"] = os.fspath(cache)
    try:
        if jobs <= 1:
            for key, src in sources.items():
                results[key] = _compile_in_worker(_portable(src))
        else:
            import multiprocessing

            context = multiprocessing.get_context("spawn")  # no fork of a process that ran Triton's threads
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                futures = {key: pool.submit(_compile_in_worker, _portable(src)) for key, src in sources.items()}
                for key, future in futures.items():
                    try:
                        results[key] = future.result()
                    except Exception as exc:  # noqa: BLE001 - a worker that died
                        results[key] = ("crash", f"the compile worker failed: {exc!r}")
    finally:
        if old is None:
            os.environ.pop("TILEIR_CACHE_DIR", None)
        else:
            os.environ["TILEIR_CACHE_DIR"] = old
    for outcome in outcomes.values():
        if outcome.compile_key is not None:
            outcome.kind, outcome.message = results[outcome.compile_key]
    return Run(outcomes, len(sources), time.perf_counter() - start)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Run:
    # The same cache directory as harness._private_cache, so that later tests reuse the cubins.
    cache = tmp_path_factory.getbasetemp() / "tileir-cache"
    return run_all(list(CASES.values()), cache, jobs=max(1, min(2, os.cpu_count() or 1)))


def _case_params() -> list:
    params = [pytest.param(case_id, id=case_id) for case_id in CASES]
    if not SAMPLES_DIR.is_dir():
        params.append(pytest.param(None, id="shared-absent", marks=pytest.mark.skip(reason=SHARED_MISSING)))
    return params


@pytest.mark.parametrize("case_id", _case_params())
def test_compiles_or_is_refused(case_id: str, compiled: Run) -> None:
    problems = []
    for arch in ARCHES:
        o = compiled.outcomes[(case_id, arch)]
        listed = refusal(case_id, arch)
        if o.kind == "crash":
            problems.append(f"{arch}: not a LowerError diagnostic (a bug):\n{o.message}")
        elif o.kind == "triton":
            problems.append(f"{arch}: Triton failed on the generated source (a bug in the lowering): {o.message}")
        elif o.kind == "refused" and listed is None:
            problems.append(f"{arch}: refused, and not in REFUSALS: {o.message}")
        elif o.kind == "refused" and listed not in o.message:
            problems.append(f"{arch}: refused for another reason than REFUSALS says ({listed!r}): {o.message}")
        elif o.kind == "ok" and listed is not None:
            problems.append(f"{arch}: compiles now: remove its REFUSALS entry ({listed!r})")
    assert not problems, f"{case_id}:\n" + "\n".join(problems)


def test_refusal_table_names_real_cases() -> None:
    stale = [key for key in REFUSALS if key[1] not in (*ARCHES, "*")]
    if SAMPLES_DIR.is_dir():  # without ../shared only the examples exist
        stale += [key for key in REFUSALS if key[0] not in CASES]
    assert not stale, f"REFUSALS entries naming no case or arch: {stale}"


def test_cases_are_found() -> None:
    assert {"examples/vector_add", "examples/softmax", "examples/matmul"} <= set(CASES)
    if SAMPLES_DIR.is_dir():
        assert {"samples/vadd", "samples/vadd_13.1", "samples/vadd_13.3"} <= set(CASES)
        assert "arith.mlir:0:addi" in CASES
        # Each valid conformance file with kernels contributes (canonicalize.mlir: its chunks).
        assert any(c.startswith("canonicalize.mlir:") for c in CASES)


# --------------------------------------------------------------------------------------------
# Triton's interpreter against the CPU interpreter


def _interp_recipes() -> tuple[dict, dict]:
    """The recipes of tests/runtime/test_samples_run.py: softmax's six rows make a full and a
    partial 4-row block (the example) and six one-row blocks (the sample), and cover the
    1000-of-1024 masked columns. (They were cut to three and two rows while Triton's
    interpreter called a reduction's combiner once per element, seconds per tile block; the
    generated source now folds by a tree there, compiler/lower/fold.py.)"""
    from tests.runtime.test_samples_run import EXAMPLE_RECIPES, SAMPLE_RECIPES

    return EXAMPLE_RECIPES, SAMPLE_RECIPES


def _interp_params() -> list:
    examples, samples = _interp_recipes()
    params = []
    for p in example_files():
        for label, recipe in examples.get(p.stem, []):
            params.append(pytest.param(p, p.stem, recipe, id=f"examples/{p.stem}-{label}"))
    if not SAMPLES_DIR.is_dir():
        return params + [pytest.param(None, None, None, id="shared-absent", marks=pytest.mark.skip(SHARED_MISSING))]
    for name, recipe in samples.items():
        for suffix in ("", "_13.1", "_13.3"):
            path = SAMPLES_DIR / (f"{name}{suffix}.tileirbc" if suffix else f"{name}.tileir")
            params.append(pytest.param(path, name, recipe, id=f"samples/{name}{suffix}"))
    return params


def _canonical_source(path: Path) -> str:
    return canonical(lower(load_module(str(path)), None, "sm_90").text)


@pytest.mark.parametrize(("path", "stem", "recipe"), _interp_params())
def test_triton_interpreter_matches_cpu(path: Path, stem: str, recipe) -> None:
    """Bytecode forms of a sample whose generated source is the text form's up to names
    (`canonical`) compute what the text form computes: the check is that sameness, not a second run."""
    if path.suffix == ".tileirbc":
        text_form = path.with_name(f"{stem}.tileir")
        if _canonical_source(path) == _canonical_source(text_form):
            return
    ulp, _why = ULP.get(stem, (0, "exact"))
    args = recipe.make(np.random.default_rng(0))
    cpu, _ = run_both(str(path), None, recipe.grid(args), args, ulp=ulp, cutile=True)
    # And the CPU interpreter's output is the recipe's reference (so both are right, not just equal).
    got, expected = cpu[recipe.out], recipe.expect(args)
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=recipe.rtol, atol=recipe.atol)


# --------------------------------------------------------------------------------------------
# `python -m tests.lower.test_acceptance`: every case's outcome, for maintaining REFUSALS


def main() -> int:
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tileir-acceptance-") as tmp:
        run = run_all(list(CASES.values()), Path(tmp), jobs=2)
    counts: dict[str, int] = {}
    for (case_id, arch), o in run.outcomes.items():
        counts[o.kind] = counts.get(o.kind, 0) + 1
        if o.kind != "ok":
            first = o.message.strip().splitlines()[-1 if o.kind == "crash" else 0]
            listed = refusal(case_id, arch)
            mark = " (in REFUSALS)" if o.kind == "refused" and listed is not None and listed in o.message else ""
            print(f"{o.kind:8s} {case_id} {arch}{mark}: {first[:400]}")
    print(
        f"{len(CASES)} cases x {len(ARCHES)} arches = {len(run.outcomes)}: "
        + ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        + f"; {run.distinct} distinct sources compiled; {run.seconds:.1f} s with 2 workers"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

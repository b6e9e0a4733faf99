"""Inputs and helpers of the bytecode acceptance tests.

The modules the tests feed to the reader, the writer and NVIDIA's tools:
- the samples (`../shared/samples/*.tileir` and the cuTile exports `*.tileirbc`),
- the project's examples (`examples/*.tileir`),
- the valid conformance modules: every `// -----` chunk of every `.mlir` under
  `../shared/conformance/cuda-tile/test/` that parses and verifies without errors and
  expects none (each `cuda_tile.module` of a chunk on its own: a bytecode file holds one);

and the text helpers that make our printer's output comparable with `tileirdisasm`'s:
`module_items_text` prints what tileirdisasm prints (the module's contents, no wrapper) and
`normalize_ssa` renames values and block labels in order of first appearance.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from compiler.bytecode import BytecodeWriteError, Version, version_text, write_bytecode
from compiler.dialect import DIALECT, NEWER_NAMES
from compiler.ir.core import Module
from compiler.ir.diagnostics import has_errors
from compiler.text import PrintOptions, print_module, split_input
from compiler.verify import check_text
from compiler.verify.versions import version_diagnostics
from tests.conformance.harness import REPO, shared_dir

SHARED = shared_dir()
SAMPLES_DIR = SHARED / "samples"
CONFORMANCE_TEST_DIR = SHARED / "conformance" / "cuda-tile" / "test"
INVALID_DIR = CONFORMANCE_TEST_DIR / "Bytecode" / "invalid"
VERSIONING_INPUTS_DIR = CONFORMANCE_TEST_DIR / "Bytecode" / "versioning" / "Inputs"
EXAMPLES_DIR = REPO / "examples"

BYTECODE_SUFFIXES = (".tileirbc", ".bc")
ELF_MAGIC = b"\x7fELF"


# ------------------------------------------------------------------------------------------------
# Skipping cleanly


def require_shared() -> None:
    if not SAMPLES_DIR.is_dir() or not CONFORMANCE_TEST_DIR.is_dir():
        pytest.skip(f"{SHARED} (samples and NVIDIA's conformance tests) is absent: shared tests skipped")


def tileirdisasm_path() -> str | None:
    from compiler.runtime import find_tileirdisasm

    return find_tileirdisasm()


def tileiras_path() -> str | None:
    from compiler.runtime import find_tileiras

    return find_tileiras()


def require_tileirdisasm() -> str:
    tool = tileirdisasm_path()
    if tool is None:
        pytest.skip("NVIDIA's tileirdisasm is not installed (pip install nvidia-cuda-tileiras)")
    return tool


def require_tileiras() -> str:
    tool = tileiras_path()
    if tool is None:
        pytest.skip("NVIDIA's tileiras is not installed (pip install nvidia-cuda-tileiras)")
    return tool


# ------------------------------------------------------------------------------------------------
# Running NVIDIA's tools


@dataclass(frozen=True, slots=True)
class ToolResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        # tileirdisasm reports an unreadable file on stderr; its exit status alone is not enough
        # to tell (it has been seen to exit 0 after `error: ...` lines).
        return self.returncode == 0 and "error:" not in self.stderr


def run_tileirdisasm(data: bytes, timeout: float = 60) -> ToolResult:
    tool = require_tileirdisasm()
    with tempfile.TemporaryDirectory(prefix="tileir-bc-") as tmp:
        path = Path(tmp) / "input.tileirbc"
        path.write_bytes(data)
        return run_tileirdisasm_file(path, tool, timeout)


def run_tileirdisasm_file(path: Path, tool: str | None = None, timeout: float = 60) -> ToolResult:
    proc = subprocess.run([tool or require_tileirdisasm(), str(path)], capture_output=True, text=True, timeout=timeout)
    return ToolResult(proc.returncode, proc.stdout, proc.stderr)


def run_tileiras(tool: str, source: Path, arch: str, out: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """tileiras on a bytecode file, its TMPDIR the output's folder: it writes a `tileir-XXXXXX.o`
    there, which it leaves behind whenever it refuses a module or fails (14 a test run, in
    /tmp, before they went to the tests' own folders)."""
    env = {**os.environ, "TMPDIR": str(out.parent)}
    cmd = [tool, f"--gpu-name={arch}", f"--output-file={out}", str(source)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


# ------------------------------------------------------------------------------------------------
# Text normalisation

# A string literal (print_tko's format, assert's message: a `%d` inside must stay), an SSA
# value (`%name`, `%0`; a `#N` result suffix or `:N` result count is left in place), a block
# label, or a brace (regions open at the end of a line and close at its start).
_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|(?P<sigil>[%^])(?P<name>[A-Za-z0-9_$.\-]+)')
_RESULTS_RE = re.compile(r"^\s*%[A-Za-z0-9_$.\-]+(?::\d+)?(?:\s*,\s*%[A-Za-z0-9_$.\-]+(?::\d+)?)*\s*=\s")
_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"')


class _Renamer:
    """Scoped renaming: a region's values (its block arguments, the results of its ops) are
    forgotten when the region closes, so a printer that reuses a name after a region and one
    that does not give the same text. Numbers keep counting up, so two values of one item
    never share a normalised name."""

    def __init__(self) -> None:
        self.scopes: list[dict[tuple[str, str], str]] = [{}]
        self.counts = {"%": 0, "^": 0}

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        if len(self.scopes) > 1:
            self.scopes.pop()

    def rename(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            sigil = m.group("sigil")
            if sigil is None:
                return m.group(0)
            key = (sigil, m.group("name"))
            for scope in reversed(self.scopes):
                if key in scope:
                    return sigil + scope[key]
            new = self.scopes[-1][key] = f"{'v' if sigil == '%' else 'bb'}{self.counts[sigil]}"
            self.counts[sigil] += 1
            return sigil + new

        return _TOKEN_RE.sub(one, text)


def normalize_ssa(text: str) -> str:
    """Rename every `%value` to `%vN` and every `^label` to `^bbN`, N counting first
    appearances, scoped by regions (a line ending in `{` opens one: the names on that line
    after its leading `%results =` are the region's arguments; a line starting with `}`
    closes one). Two printings of one module then compare equal whatever names either
    printer chose; anything else (types, attributes, order, spacing) must still match."""
    renamer = _Renamer()
    out = []
    for line in text.split("\n"):
        bare = _STRING_RE.sub('""', line).strip()
        rest = line
        for char in bare:
            if char != "}":
                break
            renamer.pop()
        m = _RESULTS_RE.match(rest)
        head = ""
        if m:
            head, rest = renamer.rename(rest[: m.end()]), rest[m.end() :]
        if bare.endswith("{"):
            renamer.push()
        out.append(head + renamer.rename(rest))
    return "\n".join(out)


def _tile_module_ops(module: Module) -> list:
    """The `cuda_tile.module` ops of a document, looking through `module {...}` wrappers."""
    found = []
    for op in module.ops:
        if op.name == "cuda_tile.module":
            found.append(op)
        elif op.name == "builtin.module":
            for region in op.regions:
                for block in region.blocks:
                    inner = Module(module.source)
                    inner.body.ops = list(block.ops)
                    found.extend(_tile_module_ops(inner))
    return found


def module_items_text(module: Module) -> str:
    """What tileirdisasm prints for `module`: the items of its `cuda_tile.module` (globals and
    entries) at the outer indentation, without the `cuda_tile.module @name {...}` wrapper
    (bytecode does not store the module's name), after a `// Producer: ...` line when the
    module has a producer (tileirdisasm's way of showing it)."""
    tile_modules = _tile_module_ops(module)
    if len(tile_modules) != 1:  # bare top-level items print as they are
        return print_module(module, PrintOptions(keep_comments=False)).rstrip("\n") + "\n"
    tile_module = tile_modules[0]
    single = Module(module.source)
    single.attribute_aliases = module.attribute_aliases
    single.type_aliases = module.type_aliases
    single.body.ops = [tile_module]
    lines = print_module(single, PrintOptions(keep_comments=False)).rstrip("\n").split("\n")
    assert lines[0].startswith("cuda_tile.module") and lines[0].endswith("{") and lines[-1] == "}", lines
    body = [line[2:] if line.startswith("  ") else line for line in lines[1:-1]]
    producer = tile_module.properties.get("producer") or tile_module.attributes.get("producer")
    if producer is not None:
        body.insert(0, f"// Producer: {producer.value}")
    return "\n".join(body) + ("\n" if body else "")


def expected_text(module: Module, version: Version) -> str:
    """`module_items_text` as it should come back from bytes written for `version`. The
    Producer section exists since 13.3; NVIDIA's writer leaves the producer out of older
    files without a word (versioning/producer_attr_backward_compat.mlir), so does ours."""
    text = module_items_text(module)
    if version < (13, 3):
        text = "".join(line for line in text.splitlines(True) if not line.startswith("// Producer: "))
    return text


def comparable(text: str) -> str:
    """Normalised, without trailing blank lines: the form the acceptance tests compare."""
    return normalize_ssa(text).rstrip("\n") + "\n"


# tileirdisasm here is CUDA 13.5, which prints some ops of the 13.3 dialect (as the 13.3
# sources and the conformance tests spell them) by newer names (`pow` as `fpowf`): the bytes
# are the same opcode, and our reader reads either name (compiler.dialect.NEWER_NAMES).
_OLDER_NAME = {new.removeprefix(DIALECT + "."): old.removeprefix(DIALECT + ".") for new, old in NEWER_NAMES.items()}
_NEWER_NAME = re.compile(r"(?<== )(" + "|".join(map(re.escape, _OLDER_NAME)) + r")(?= )")


def with_13_3_names(text: str) -> str:
    """tileirdisasm's text with the ops it prints by newer names named as in the 13.3 dialect."""
    return _NEWER_NAME.sub(lambda m: _OLDER_NAME[m[1]], text)


def disasm_text(stdout: str) -> str:
    """tileirdisasm's text in comparable form (with_13_3_names)."""
    return comparable(with_13_3_names(stdout))


# ------------------------------------------------------------------------------------------------
# The modules


@dataclass(frozen=True, slots=True)
class TextCase:
    """One module to write: `id` names it in test ids and expectation tables
    (`sample/vadd.tileir`, `example/matmul.tileir`, `Dialect/CudaTile/ops.mlir#3`, with `.K`
    appended for the K-th `cuda_tile.module` of a chunk that holds several)."""

    id: str
    module: Module


def _parse_valid(text: str, name: str) -> Module | None:
    result, diagnostics = check_text(text, name)
    return None if has_errors(diagnostics) else result.module


def _split_modules(case_id: str, module: Module) -> list[TextCase]:
    tile_modules = _tile_module_ops(module)
    if len(tile_modules) <= 1:
        return [TextCase(case_id, module)]
    cases = []
    for k, op in enumerate(tile_modules):
        single = Module(module.source)
        single.attribute_aliases = module.attribute_aliases
        single.type_aliases = module.type_aliases
        single.body.ops = [op]
        cases.append(TextCase(f"{case_id}.{k}", single))
    return cases


def sample_bytecode_files() -> list[Path]:
    return sorted(SAMPLES_DIR.glob("*.tileirbc")) if SAMPLES_DIR.is_dir() else []


def conformance_bytecode_files() -> list[Path]:
    if not CONFORMANCE_TEST_DIR.is_dir():
        return []
    return sorted(p for p in CONFORMANCE_TEST_DIR.rglob("*") if p.suffix in BYTECODE_SUFFIXES)


@functools.cache
def sample_text_cases() -> tuple[TextCase, ...]:
    cases = []
    for path in sorted(SAMPLES_DIR.glob("*.tileir")) if SAMPLES_DIR.is_dir() else []:
        module = _parse_valid(path.read_text(encoding="utf-8"), str(path))
        assert module is not None, f"sample {path.name} does not verify"
        cases.append(TextCase(f"sample/{path.name}", module))
    return tuple(cases)


@functools.cache
def example_text_cases() -> tuple[TextCase, ...]:
    cases = []
    for path in sorted(EXAMPLES_DIR.glob("*.tileir")):
        module = _parse_valid(path.read_text(encoding="utf-8"), str(path))
        assert module is not None, f"example {path.name} does not verify"
        cases.append(TextCase(f"example/{path.name}", module))
    return tuple(cases)


def conformance_chunks() -> list[tuple[str, str]]:
    """(id, text) of every `// -----` chunk of every conformance `.mlir` file."""
    if not CONFORMANCE_TEST_DIR.is_dir():
        return []
    chunks = []
    for path in sorted(CONFORMANCE_TEST_DIR.rglob("*.mlir")):
        rel = path.relative_to(CONFORMANCE_TEST_DIR).as_posix()
        for index, (chunk, _line) in enumerate(split_input(path.read_text(encoding="utf-8"))):
            chunks.append((f"{rel}#{index}", chunk))
    return chunks


@functools.cache
def conformance_text_cases() -> tuple[TextCase, ...]:
    """The valid conformance modules: chunks without `expected-error` that parse and verify."""
    cases: list[TextCase] = []
    for case_id, chunk in conformance_chunks():
        if "expected-error" in chunk:
            continue
        module = _parse_valid(chunk, case_id)
        if module is not None:
            cases.extend(_split_modules(case_id, module))
    return tuple(cases)


def all_text_cases() -> tuple[TextCase, ...]:
    return sample_text_cases() + example_text_cases() + conformance_text_cases()


# ------------------------------------------------------------------------------------------------
# Writing them

# Valid modules our writer refuses, as NVIDIA's writer does (glob over case ids -> a substring
# of the message). Every refusal must be listed, and every entry must still refuse.
WRITER_REFUSALS: dict[str, str] = {
    # The `testing$` ops exist only in NVIDIA's test builds of cuda-tile-opt; they have no
    # opcode in any public bytecode version.
    **{
        f"Dialect/CudaTile/canonicalize.mlir#{chunks}": "'cuda_tile.testing$func' is not available in bytecode version"
        for chunks in ("[0-9]", "1[0-9]", "2[0-5]", "39", "42")
    },
    "Dialect/CudaTile/invalid.mlir#44": "'cuda_tile.testing$func' is not available in bytecode version",
    "Dialect/CudaTile/memory_consistency_ops.mlir#0": "'cuda_tile.testing$func' is not available in bytecode version",
    "Dialect/CudaTile/ops.mlir#0": "'cuda_tile.testing$func' is not available in bytecode version",
    "Dialect/CudaTile/types.mlir#0": "'cuda_tile.testing$func' is not available in bytecode version",
    "Dialect/CudaTile/syntax_omit_dialect_prefix.mlir#0.3": "'cuda_tile.testing$func' is not available",
    "Bytecode/versioning/test_forward_compatibility.mlir#0": "'cuda_tile.testing$bytecode_test_evolution' is not",
    "Bytecode/versioning/test_version_250_1.mlir#0": "'cuda_tile.testing$bytecode_test_evolution' is not available",
    "Bytecode/versioning/test_version_errors.mlir#[014]": "'cuda_tile.testing$bytecode_test_new_attribute' is not",
    "Bytecode/versioning/test_version_errors.mlir#[23]": "'cuda_tile.testing$bytecode_test_evolution' is not",
    # What the conformance suite itself expects cuda-tile-translate to refuse.
    "Bytecode/invalid_loc.mlir#[02]": "unsupported location, got FusedLoc, expected DILocAttr or CallSiteLoc",
    "Bytecode/invalid_loc.mlir#1": "unsupported location, got NameLoc, expected DILocAttr or CallSiteLoc",
    "Bytecode/non_tileir_types.mlir#0": "unsupported type in bytecode writer: tensor<2xi16>",
}

WRITE_VERSIONS: tuple[Version, ...] = ((13, 3), (13, 1))


def expected_writer_refusal(case_id: str) -> str | None:
    for pattern, message in WRITER_REFUSALS.items():
        if fnmatch.fnmatchcase(case_id, pattern):
            return message
    return None


@dataclass(frozen=True, slots=True)
class WrittenCase:
    case: TextCase
    version: Version
    data: bytes

    @property
    def id(self) -> str:
        return f"{self.case.id}@{version_text(self.version)}"


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    written: tuple[WrittenCase, ...]
    refused: dict[str, str]  # case id -> our writer's message (13.3)
    problems: tuple[str, ...]  # 13.1 writes that failed although the module fits 13.1


@functools.cache
def write_all() -> WriteOutcome:
    """Every text case written for 13.3, and for 13.1 where it fits 13.1 (no version
    diagnostics). Computed once per test process; nothing is kept across runs."""
    written: list[WrittenCase] = []
    refused: dict[str, str] = {}
    problems: list[str] = []
    for case in all_text_cases():
        try:
            written.append(WrittenCase(case, (13, 3), write_bytecode(case.module, (13, 3))))
        except BytecodeWriteError as exc:
            refused[case.id] = str(exc)
            continue
        if version_diagnostics(case.module, "13.1"):
            continue
        try:
            written.append(WrittenCase(case, (13, 1), write_bytecode(case.module, (13, 1))))
        except BytecodeWriteError as exc:
            problems.append(f"{case.id}: fits 13.1 but writing 13.1 failed: {exc}")
    return WriteOutcome(tuple(written), refused, tuple(problems))

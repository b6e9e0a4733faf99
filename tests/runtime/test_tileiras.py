"""`compile_tileiras`: NVIDIA's tileiras on our bytecode, the cubins it makes as `read_cubin`
reads them, and the disk cache (a hit runs no tileiras; a GPU machine without tileiras still
finds what was built here; a damaged entry is built again). No GPU needed.

The examples and samples are compiled once per session for sm_80, sm_90 and sm_100
(`tileiras_builds`, also used by test_cubin.py) into a cache under pytest's temporary folder.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import compiler.runtime
import compiler.runtime.tileiras as tileiras_mod
from compiler.ir.core import Module, Operation
from compiler.lower.cubin import read_cubin
from compiler.runtime import LaunchError, find_kernel, kernel_name, load_module
from compiler.runtime.tileiras import TileirasCubin, compile_tileiras
from tests.bytecode.util import require_tileiras
from tests.conformance.harness import REPO, shared_dir

ARCHS = ("sm_80", "sm_90", "sm_100")
EXAMPLES = sorted((REPO / "examples").glob("*.tileir"))
SAMPLES_DIR = shared_dir() / "samples"
SAMPLES = sorted(SAMPLES_DIR.glob("*.tileir")) if SAMPLES_DIR.is_dir() else []
CASES = [f"example/{p.name}" for p in EXAMPLES] + [f"sample/{p.name}" for p in SAMPLES]


@dataclass(frozen=True, slots=True)
class Build:
    case: str
    arch: str
    module: Module
    entry: Operation
    built: TileirasCubin


def case_path(case: str) -> Path:
    kind, name = case.split("/", 1)
    return (REPO / "examples" / name) if kind == "example" else SAMPLES_DIR / name


def build_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the session's builds: test_cubin.py finds this module's builds in it."""
    return tmp_path_factory.getbasetemp() / "tileiras-builds"


@pytest.fixture(scope="session")
def tileiras_builds(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Build]:
    """Every example and sample compiled for each of ARCHS, two compiles at a time."""
    require_tileiras()
    jobs = []
    for case in CASES:
        module = load_module(case_path(case))
        jobs.extend((case, arch, module, find_kernel(module, None)) for arch in ARCHS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TILEIR_CACHE_DIR", os.fspath(build_cache(tmp_path_factory)))
        with concurrent.futures.ThreadPoolExecutor(max(2, os.cpu_count() or 1)) as pool:
            built = list(pool.map(lambda job: compile_tileiras(job[2], job[1]), jobs))
    return {(case, arch): Build(case, arch, module, entry, b) for (case, arch, module, entry), b in zip(jobs, built)}


def expected_param_size(type_text: str) -> int | None:
    """The bytes a parameter of this type takes in the parameter buffer: a pointer 8, a scalar
    its width (None for types the examples and samples do not have)."""
    if re.fullmatch(r"tile<ptr<.*>>", type_text):
        return 8
    m = re.fullmatch(r"tile<(?:i|f|bf)(\d+)>", type_text)
    if m and int(m.group(1)) % 8 == 0:
        return int(m.group(1)) // 8
    return None


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("case", CASES)
def test_tileiras_cubin_reads_back(tileiras_builds: dict, case: str, arch: str) -> None:
    b: Build = tileiras_builds[(case, arch)]
    name = kernel_name(b.entry)
    assert b.built.arch == arch  # cached or not: test_cubin.py's copy of the fixture finds these cached
    assert b.built.cubin[:4] == b"\x7fELF"
    assert b.built.info == read_cubin(b.built.cubin)
    info = b.built.info
    assert info.arch == int(arch.removeprefix("sm_"))
    assert list(info.kernels) == [name]
    k = info.kernels[name]
    assert k.tile_kernel
    params = b.entry.regions[0].blocks[0].arguments
    assert [p.ordinal for p in k.params] == list(range(len(params)))
    for p, value in zip(k.params, params):
        want = expected_param_size(str(value.type))
        assert want is not None, f"{case}: parameter type {value.type} has no expected size here"
        assert p.size == want, f"{case} {arch}: parameter {p.ordinal} ({value.type}) is {p.size} bytes"
        assert p.offset % p.size == 0, f"{case} {arch}: parameter {p.ordinal} at {p.offset} is misaligned"
    ends = [p.offset + p.size for p in k.params]
    assert all(a <= p.offset for a, p in zip(ends, k.params[1:])), "parameters overlap"
    assert k.param_bytes == ends[-1]
    assert k.reqntid is not None and k.reqntid[0] % 32 == 0 and k.reqntid[1:] == (1, 1)
    assert k.registers is not None and 0 < k.registers <= 255
    assert k.frame_size is not None  # spills: sample/matmul for sm_80 has 48 bytes


# -- cache -------------------------------------------------------------------------------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TILEIR_CACHE_DIR", os.fspath(tmp_path))
    return tmp_path / "tileiras"


@pytest.fixture(scope="module")
def vector_add() -> Module:
    return load_module(REPO / "examples" / "vector_add.tileir")


def _forbid_running(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Make any subprocess the module starts fail the test (and record it)."""
    calls: list[list[str]] = []

    def run(cmd, *args, **kwargs):
        calls.append(list(cmd))
        raise AssertionError(f"tileiras was run: {cmd}")

    monkeypatch.setattr(tileiras_mod.subprocess, "run", run)
    return calls


def _no_tileiras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiler.runtime, "find_tileiras", lambda: None)


def test_second_compile_is_a_hit_without_running_tileiras(
    cache: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_tileiras()
    first = compile_tileiras(vector_add, "sm_90")
    assert not first.cached
    assert "release" in first.tool_version
    entries = [p for p in cache.iterdir() if p.name != "index"]
    assert len(entries) == 1 and (entries[0] / "kernel.cubin").read_bytes() == first.cubin

    calls = _forbid_running(monkeypatch)
    second = compile_tileiras(vector_add, "sm_90")
    assert second.cached and second.cubin == first.cubin and second.info == first.info
    assert second.tool_version == first.tool_version
    # A GPU machine without tileiras: found through the index, still without running anything.
    _no_tileiras(monkeypatch)
    third = compile_tileiras(vector_add, "sm_90")
    assert third.cached and third.cubin == first.cubin
    assert calls == []
    # ... but what was never built here is an error that says how to get tileiras.
    with pytest.raises(LaunchError) as e:
        compile_tileiras(vector_add, "sm_100")
    assert e.value.kind == "backend" and "pip install nvidia-cuda-tileiras" in e.value.message
    assert "\n" not in e.value.message


def test_cache_carried_to_a_machine_without_tileiras(
    tmp_path: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_tileiras()
    here = tmp_path / "here"
    monkeypatch.setenv("TILEIR_CACHE_DIR", os.fspath(here))
    built = compile_tileiras(vector_add, "sm_90")
    there = tmp_path / "there"
    os.rename(here, there)  # the cache, copied to another machine
    monkeypatch.setenv("TILEIR_CACHE_DIR", os.fspath(there))
    _no_tileiras(monkeypatch)
    _forbid_running(monkeypatch)
    hit = compile_tileiras(vector_add, "sm_90")
    assert hit.cached and hit.cubin == built.cubin
    # The index is keyed by the options too: another opt level was never built.
    with pytest.raises(LaunchError, match="tileiras"):
        compile_tileiras(vector_add, "sm_90", opt_level=2)


def test_newer_tileiras_compiles_again_and_the_index_follows(
    cache: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_tileiras()
    old = compile_tileiras(vector_add, "sm_90")
    real = tileiras_mod.tool_version
    monkeypatch.setattr(tileiras_mod, "tool_version", lambda tool: real(tool) + "\nsome other build")
    new = compile_tileiras(vector_add, "sm_90")
    assert not new.cached  # another version is another key
    entries = sorted(p.name for p in cache.iterdir() if p.name != "index")
    assert len(entries) == 2
    (index,) = (cache / "index").iterdir()
    newest = json.loads(index.read_text())["key"]
    meta = json.loads((cache / newest / "meta.json").read_text())
    assert meta["tool_version"].endswith("some other build")
    _no_tileiras(monkeypatch)
    assert compile_tileiras(vector_add, "sm_90").cubin == old.cubin == new.cubin  # tileiras is deterministic


@pytest.mark.parametrize("damage", ["truncate", "flip", "meta", "missing"])
def test_damaged_entry_is_compiled_again(
    cache: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    require_tileiras()
    good = compile_tileiras(vector_add, "sm_90")
    (entry,) = [p for p in cache.iterdir() if p.name != "index"]
    cubin = entry / "kernel.cubin"
    if damage == "truncate":
        cubin.write_bytes(good.cubin[: len(good.cubin) // 2])
    elif damage == "flip":
        data = bytearray(good.cubin)
        data[len(data) // 3] ^= 0xFF
        cubin.write_bytes(bytes(data))
    elif damage == "meta":
        (entry / "meta.json").write_text("{not json")
    else:
        cubin.unlink()
    # Without tileiras a damaged entry is no hit.
    with monkeypatch.context() as patch:
        _no_tileiras(patch)
        with pytest.raises(LaunchError, match="pip install nvidia-cuda-tileiras"):
            compile_tileiras(vector_add, "sm_90")
    again = compile_tileiras(vector_add, "sm_90")
    assert not again.cached and again.cubin == good.cubin
    assert cubin.read_bytes() == good.cubin
    assert compile_tileiras(vector_add, "sm_90").cached


def test_no_cache_writes_nothing(cache: Path, vector_add: Module) -> None:
    require_tileiras()
    built = compile_tileiras(vector_add, "sm_90", use_cache=False)
    assert not built.cached and "vector_add" in built.info.kernels
    assert not cache.exists()


CUBE = """cuda_tile.module @m {
  entry @cube(%x: tile<ptr<f32>>) {
    %p0 = reshape %x : tile<ptr<f32>> -> tile<1xptr<f32>>
    %p = broadcast %p0 : tile<1xptr<f32>> -> tile<16xptr<f32>>
    %off = iota : tile<16xi32>
    %ps = offset %p, %off : tile<16xptr<f32>>, tile<16xi32> -> tile<16xptr<f32>>
    %v, %t = load_ptr_tko weak %ps : tile<16xptr<f32>> -> tile<16xf32>, token
    %n = constant <i32: 3> : tile<16xi32>
    %c = fpowi %v, %n : tile<16xf32>, tile<16xi32>
    %t2 = store_ptr_tko weak %ps, %c : tile<16xptr<f32>>, tile<16xf32> -> token
    return
  }
}
"""


def test_a_module_with_13_4_ops_is_written_as_13_4(cache: Path, vector_add: Module) -> None:
    """The oldest version that expresses the module: 13.3, or 13.4 for its ops (what
    launch_cutile's exports of `x ** 3` hold)."""
    cube = load_module(CUBE)
    assert tileiras_mod.write_module(vector_add)[8:10] == bytes([13, 3])
    assert tileiras_mod.write_module(cube)[8:10] == bytes([13, 4])
    require_tileiras()
    assert "cube" in compile_tileiras(cube, "sm_90", use_cache=False).info.kernels


def test_a_hit_marks_its_entry_used_and_a_store_checks_the_bound(cache: Path, vector_add: Module) -> None:
    """The compile cache's bound (compiler.lower.cache) covers tileiras' cubins too."""
    from compiler.lower.cache import STAMP

    require_tileiras()
    compile_tileiras(vector_add, "sm_90")
    assert (cache.parent / STAMP).exists()
    (entry,) = (p for p in cache.iterdir() if p.name != "index")
    (index,) = (cache / "index").iterdir()
    for path in (entry, index):
        os.utime(path, (1e9, 1e9))
    assert compile_tileiras(vector_add, "sm_90").cached
    assert entry.stat().st_mtime > 1e9 + 1 and index.stat().st_mtime > 1e9 + 1  # the index lives as long


# -- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["sm_75", "90", "sm90", "x", "sm_90 "])
def test_unsupported_arch_is_refused_before_running(
    cache: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch, arch: str
) -> None:
    calls = _forbid_running(monkeypatch)
    with pytest.raises(LaunchError) as e:
        compile_tileiras(vector_add, arch)
    assert e.value.kind == "backend" and repr(arch) in e.value.message and "sm_90" in e.value.message
    assert calls == []


def test_arch_tileiras_does_not_know(cache: Path, vector_add: Module) -> None:
    require_tileiras()
    with pytest.raises(LaunchError) as e:
        compile_tileiras(vector_add, "sm_999")
    assert e.value.kind == "backend"
    assert e.value.message.startswith("this tileiras cannot compile for sm_999 (it knows ")
    assert "sm_90," in e.value.message and "\n" not in e.value.message


def test_bad_opt_level(cache: Path, vector_add: Module) -> None:
    with pytest.raises(LaunchError, match="optimization level"):
        compile_tileiras(vector_add, "sm_90", opt_level=7)


def test_tileiras_missing_says_how_to_install(cache: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_tileiras(monkeypatch)
    with pytest.raises(LaunchError) as e:
        compile_tileiras(vector_add, "sm_90")
    assert e.value.kind == "backend"
    assert "pip install nvidia-cuda-tileiras" in e.value.message and "sm_90" in e.value.message


def test_tileiras_failure_is_one_line(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_tileiras()
    # tileiras reads a module of globals alone but will not compile it (tests/bytecode lists it).
    module = load_module("cuda_tile.module @g {\n  global @x <i32: 0> : tile<1xi32>\n}\n")
    with pytest.raises(LaunchError) as e:
        compile_tileiras(module, "sm_90")
    message = e.value.message
    assert e.value.kind == "backend" and "\n" not in message
    assert message.startswith("tileiras could not compile the module for sm_90: ")
    assert "error" in message.split(": ", 1)[1]
    # tileiras names no fault: the message says what that means for a module that verifies.
    assert message.endswith(
        "failed to compile Tile IR program (the module verifies and tileiras names no fault in it: "
        "likely a defect of tileiras'; the triton backend may compile it)"
    )
    assert not any(cache.glob("*/kernel.cubin"))
    # A machine without tileiras that gets this cache says why there is no cubin.
    _no_tileiras(monkeypatch)
    with pytest.raises(LaunchError) as e:
        compile_tileiras(module, "sm_90")
    assert e.value.message.startswith(
        "tileiras refused this module where the cache was filled: tileiras could not compile the module for sm_90: "
    )


BF16_ADD = """cuda_tile.module @m {
  entry @k(%p: tile<ptr<bf16>>, %x: tile<bf16>) {
    %old, %t = atomic_rmw_tko relaxed device %p, addf, %x : tile<ptr<bf16>>, tile<bf16> -> tile<bf16>, token
    return
  }
}
"""


def test_what_a_target_lacks_points_to_the_triton_backend(cache: Path) -> None:
    """tileiras refuses a bf16 atomic add for sm_80 (no atom.add.bf16 before sm_90); the
    message says the triton backend may compile it, and it does (a compare-and-swap loop)."""
    require_tileiras()
    module = load_module(BF16_ADD)
    with pytest.raises(LaunchError) as e:
        compile_tileiras(module, "sm_80", use_cache=False)
    assert e.value.message == (
        "tileiras could not compile the module for sm_80: error: Incompatibility with architecture 'sm_80': "
        "atomicRMW ADDF with bf16 is not supported (the triton backend may compile it: it takes exact slower "
        "paths where a target lacks a type or an instruction)"
    )
    pytest.importorskip("triton")
    from compiler.lower import compile as lower_compile

    ptx = lower_compile(module, "k", "sm_80").asm["ptx"]
    assert re.search(r"atom\.[\w.]*\.cas\.b32", ptx) and not re.search(r"atom\.[\w.]*add[\w.]*bf16", ptx)


def _fake_tileiras(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """A `tileiras` that is the sh `script`, in place of NVIDIA's."""
    fake = tmp_path / "tileiras"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    monkeypatch.setattr(compiler.runtime, "find_tileiras", lambda: os.fspath(fake))


def test_tileiras_that_makes_no_cubin(
    cache: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_tileiras(tmp_path, monkeypatch, "echo 'tileiras 0.0' ; exit 0\n")
    # --version answers, compiling makes no file: a clear error, not a missing-file traceback.
    with pytest.raises(LaunchError, match=r"^tileiras could not compile the module for sm_90: tileiras 0\.0$"):
        compile_tileiras(vector_add, "sm_90")


def test_tileiras_that_crashes(
    cache: Path, vector_add: Module, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # tileiras 13.5 aborts without a word on some valid modules (tests/bytecode/test_fuzz_kernels.py);
    # one that dies leaves its `tileir-XXXXXX.o` in its TMPDIR, which is ours and goes with it.
    crash = (
        'case "$1" in --version) echo "tileiras 0.0" ; exit 0 ;; esac\n'
        f'echo "$TMPDIR" > {tmp_path}/tmpdir ; echo x > "$TMPDIR/tileir-123456.o"\nkill -ABRT $$\n'
    )
    _fake_tileiras(tmp_path, monkeypatch, crash)
    with pytest.raises(LaunchError) as e:
        compile_tileiras(vector_add, "sm_90")
    its_tmp = Path((tmp_path / "tmpdir").read_text().strip())
    assert its_tmp.name.startswith("tileir-tileiras-") and not its_tmp.exists()
    assert e.value.message == (
        "tileiras could not compile the module for sm_90: tileiras crashed (SIGABRT) without a message "
        "(the module verifies and tileiras names no fault in it: likely a defect of tileiras'; the triton backend "
        "may compile it)"
    )


# Names probed against tileiras: what `tileir check` warns of (verify.contract.misnamed)
# must be exactly what tileiras refuses, and its refusal must say why (tileiras does not).
PROBED_NAMES = ["a$b", "_1", "$a", "add", "x__", "a.b", "a-b", "1x", "_", "$", "%x", "é", "a b"]


@pytest.mark.parametrize("name", PROBED_NAMES)
def test_tileiras_refuses_exactly_the_names_check_warns_of(name: str) -> None:
    from compiler.verify.contract import misnamed

    require_tileiras()
    module = load_module(f'cuda_tile.module @m {{\n  entry @"{name}"() {{\n    return\n  }}\n}}\n', "names.tileir")
    if misnamed(module.entries()[0]) is None:
        assert compile_tileiras(module, "sm_90", use_cache=False).info.kernels
        return
    with pytest.raises(LaunchError) as failed:
        compile_tileiras(module, "sm_90", use_cache=False)
    assert str(failed.value).endswith(f"(the kernel name '{name}' is not a PTX identifier, which tileiras requires)")


def test_a_refusal_at_a_debug_info_location_names_it_as_file_line_col() -> None:
    """tileiras names where by the op's whole `#cuda_tile.di_loc<...>` (hundreds of characters
    for a cuTile kernel): the first error line reads `file:line:col: error: ...` instead."""
    from compiler.runtime.tileiras import _first_error

    said = (
        'warning: something first\n#cuda_tile.di_loc<loc("/src/k.py":25:4) in #cuda_tile.di_subprogram<file = '
        '<"k.py" in "/src">, line = 24, name = "k", linkageName = "k", compileUnit = <file = <"k.py" in "/src">>, '
        "scopeLine = 24>>: error: Incompatibility with architecture 'sm_90': unsupported type 'f8E8M0FNU'\n"
        "error: failed to compile Tile IR program\n"
    )
    assert _first_error(said, 5) == (
        "/src/k.py:25:4: error: Incompatibility with architecture 'sm_90': unsupported type 'f8E8M0FNU'"
    )
    plain = "error: 'cuda_tile.divi' op rounding mode 'negative_inf' is not allowed with 'unsigned' flag"
    assert _first_error(plain, 1) == plain

"""How the GPU launcher keeps a module's globals (spec 003, 6.2.1: "initialized exactly once";
NVIDIA's GlobalOp: initialized at CUDA module load time, living as long as the module), with
no GPU: a stand-in for `gpu.Gpu` records allocations, uploads and cubin loads.

- triton: a global's device buffer is allocated and given its initial bytes once per Module
  object, shared by every kernel (and specialisation) of it; another Module gets its own.
- tileiras: the cubin holds the globals, so it is loaded once per Module object, one load for
  all its kernels, while cubins without an owner (Triton's) are loaded once per process.
- after a fault (a poisoned GPU) what a dropped Module held is never freed.

tests/lower/test_memory.py checks the same behaviour on the GPUs themselves."""

from __future__ import annotations

import gc
import itertools
from typing import Any

import numpy as np
import pytest

from compiler.runtime import find_kernel, load_module
from compiler.runtime import gpu as gpu_mod
from tests.runtime.test_launch import COUNT


class FakeBuffer:
    def __init__(self, handle: int, nbytes: int) -> None:
        self.handle = handle
        self.nbytes = nbytes

    def close(self) -> None:
        pass


class FakeGpu:
    """What prepare_triton and Binding use of gpu.Gpu: the target, allocation and uploads."""

    arch = "sm_90"

    def __init__(self) -> None:
        self.addresses = itertools.count(0x7000_0000, 0x1000)
        self.allocated: list[tuple[str, int]] = []  # (what, address)
        self.uploads: list[tuple[int, bytes]] = []
        self.kernels: list[tuple[str, str]] = []

    def alloc(self, nbytes: int, what: str) -> FakeBuffer:
        buf = FakeBuffer(next(self.addresses), nbytes)
        self.allocated.append((what, buf.handle))
        return buf

    def upload(self, dst: int, src: np.ndarray) -> None:
        self.uploads.append((dst, np.ascontiguousarray(src).tobytes()))

    def kernel(self, cubin: bytes, name: str, compiler: str, slots: Any, shared: int = 0, owner: Any = None) -> str:
        self.kernels.append((compiler, name))
        return name


def _global_address(g: FakeGpu, module: Any, kernel: str) -> int:
    """The address prepare_triton passes for @count to `kernel` of `module`."""
    pytest.importorskip("triton", reason="prepare_triton compiles with Triton (pip install 'triton>=3.6')")
    entry = find_kernel(module, kernel)
    binding = gpu_mod.bind(g, entry, [np.full(1, 7, np.int32)])  # type: ignore[arg-type]
    prep = gpu_mod.prepare_triton(g, module, entry, (1, 1, 1), binding)  # type: ignore[arg-type]
    # Parameters: out, the hidden @count buffer, Triton's two scratch pointers.
    return int(prep.values[1].value)


def test_triton_allocates_a_global_once_per_module_object() -> None:
    g = FakeGpu()
    m = load_module(COUNT)
    first = _global_address(g, m, "tick")
    assert _global_address(g, m, "tick") == first  # the next launch: the same storage
    assert _global_address(g, m, "peek") == first  # another kernel of the module: the same
    assert [at for what, at in g.allocated if what == "global @count"] == [first]
    assert [data for dst, data in g.uploads if dst == first] == [bytes(4)]  # initial bytes, once
    other = _global_address(g, load_module(COUNT), "tick")
    assert [at for what, at in g.allocated if what == "global @count"] == [first, other] and other != first
    assert [data for dst, data in g.uploads if dst == other] == [bytes(4)]


def test_tileiras_cubins_are_loaded_once_per_module_object(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[bytes] = []

    class Code:
        def __init__(self, cubin: bytes) -> None:
            loads.append(cubin)

        def get_kernel(self, name: str) -> tuple[Code, str]:
            return self, name

    class Core:
        class ObjectCode:
            @staticmethod
            def from_cubin(cubin: bytes) -> Code:
                return Code(cubin)

    monkeypatch.setattr(gpu_mod, "_check_abi", lambda *a: None)
    g = object.__new__(gpu_mod.Gpu)
    g.core = Core()
    g.loaded = gpu_mod.Loaded()
    m, m2 = load_module(COUNT), load_module(COUNT)
    tick = g.kernel(b"cubin", "tick", "tileiras", [], owner=m)
    assert g.kernel(b"cubin", "tick", "tileiras", [], owner=m) is tick and len(loads) == 1
    peek = g.kernel(b"cubin", "peek", "tileiras", [], owner=m)
    assert peek[0] is tick[0] and len(loads) == 1  # one CUDA module for all kernels: shared globals
    tick2 = g.kernel(b"cubin", "tick", "tileiras", [], owner=m2)
    assert tick2[0] is not tick[0] and len(loads) == 2  # another Module: its own globals
    assert g.kernel(b"other", "tick", "tileiras", [], owner=m)[0] is not tick[0] and len(loads) == 3
    shared = g.kernel(b"cubin", "tick", "Triton", [])
    assert g.kernel(b"cubin", "tick", "Triton", []) is shared and len(loads) == 4  # once per process
    assert shared[0] not in (tick[0], tick2[0])


def test_what_a_module_held_is_dropped_with_it_but_kept_after_a_fault(monkeypatch: pytest.MonkeyPatch) -> None:
    gc.collect()  # what earlier tests dropped goes now, not in the middle of this one
    kept: list[Any] = []
    monkeypatch.setattr(gpu_mod, "keep_forever", kept.append)
    m = load_module(COUNT)
    loaded = gpu_mod.loaded_on_gpu(m, "tileiras")
    assert gpu_mod.loaded_on_gpu(m, "tileiras") is loaded and gpu_mod.loaded_on_gpu(m, "triton") is not loaded
    loaded.codes["x"] = "code"
    del loaded, m
    gc.collect()
    assert kept == []  # dropped with the Module, freed as usual
    monkeypatch.setattr(gpu_mod, "_POISONED", "a fault")
    m = load_module(COUNT)
    gpu_mod.loaded_on_gpu(m, "tileiras").codes["x"] = "code"
    del m
    gc.collect()
    assert len(kept) == 1 and kept[0][0] == {"x": "code"}

"""Bytecode 13.4 and 13.5 (`compiler.bytecode.newer`): real kernels exported by cuTile Python
in those versions read into the same module as their 13.3 export, and match what NVIDIA's
13.5 tileirdisasm prints; constructs the 13.4 op set cannot hold are refused by name (for
13.5, with the way to export 13.4 instead). 13.4's own ops: tests/bytecode/test_13_4_ops.py."""

from __future__ import annotations

import io
import re
import subprocess

import pytest

from compiler.bytecode import BytecodeError, read_bytecode
from compiler.runtime import find_tileirdisasm
from compiler.text.printer import PrintOptions, print_module

from .util import with_13_3_names


def _cutile():
    ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")
    from cuda.tile.compilation import ArrayConstraint, CallingConvention, KernelSignature, export_kernel

    def array(ndim: int, dtype=None):
        return ArrayConstraint(
            dtype or ct.float32,
            ndim,
            index_dtype=ct.int32,
            stride_lower_bound_incl=0,
            alias_groups=(),
            may_alias_internally=False,
        )

    def export(kernel, params, version: str, symbol: str = "k") -> bytes:
        buf = io.BytesIO()
        sig = KernelSignature(params, CallingConvention.cutile_python_v1(), symbol=symbol)
        if version == "13.5":
            # cuTile 1.7 ships 13.5 as a developer feature; its writer is complete, only gated.
            import cuda.tile._compile as compile_module

            if not hasattr(compile_module, "dev_features_enabled"):
                pytest.skip("this cuTile version has no switch for bytecode 13.5")
            saved = compile_module.dev_features_enabled
            compile_module.dev_features_enabled = lambda: True
            try:
                export_kernel(kernel, [sig], buf, output_format="tileir_bytecode", bytecode_version=version)
            finally:
                compile_module.dev_features_enabled = saved
        else:
            export_kernel(kernel, [sig], buf, output_format="tileir_bytecode", bytecode_version=version)
        return buf.getvalue()

    return ct, array, export


def _kernels(ct, array):
    @ct.kernel
    def vadd(a, b, c):
        bid = ct.bid(0)
        x = ct.load(a, index=(bid,), shape=(256,))
        y = ct.load(b, index=(bid,), shape=(256,))
        ct.store(c, index=(bid,), tile=x + y)

    @ct.kernel
    def softmax(x, out):
        row = ct.bid(0)
        t = ct.load(x, index=(row, 0), shape=(1, 128), padding_mode=ct.PaddingMode.NEG_INF)
        e = ct.exp(t - ct.max(t, axis=1, keepdims=True))
        ct.store(out, index=(row, 0), tile=e / ct.sum(e, axis=1, keepdims=True))

    @ct.kernel
    def matmul(a, b, c):
        bx, by = ct.bid(0), ct.bid(1)
        acc = ct.zeros((32, 32), dtype=ct.float32)
        for k in range(ct.num_tiles(a, axis=1, shape=(32, 16))):
            ta = ct.load(a, index=(bx, k), shape=(32, 16), padding_mode=ct.PaddingMode.ZERO)
            tb = ct.load(b, index=(k, by), shape=(16, 32), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(ta, tb, acc)
        ct.store(c, index=(bx, by), tile=ct.astype(acc, ct.float16))

    @ct.kernel
    def to_int(a, b):
        bid = ct.bid(0)
        ct.store(b, index=(bid,), tile=ct.astype(ct.load(a, index=(bid,), shape=(64,)), ct.int32))

    return {
        "vadd": (vadd, [array(1), array(1), array(1)]),
        "softmax": (softmax, [array(2), array(2)]),
        "matmul": (matmul, [array(2, ct.float16), array(2, ct.float16), array(2, ct.float16)]),
        "to_int": (to_int, [array(1), array(1, ct.int32)]),
    }


def _body(module) -> str:
    """The entries as tileirdisasm prints them: the module's contents, names normalised."""
    text = print_module(module, PrintOptions(keep_comments=False))
    inner = text[text.index("{\n") + 2 : text.rindex("}")]
    return _normalise(inner)


def _normalise(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    names: dict[str, str] = {}

    def rename(m: re.Match) -> str:
        return names.setdefault(m.group(0), f"%v{len(names)}")

    # tileirdisasm 13.5 prints opcode 0x54 by its newer name.
    return with_13_3_names("\n".join(re.sub(r"%[\w$.-]+", rename, line) for line in lines))


@pytest.mark.parametrize("name", ["vadd", "softmax", "matmul", "to_int"])
@pytest.mark.parametrize("version", ["13.4", "13.5"])
def test_newer_exports_read_as_their_13_3_export(name: str, version: str) -> None:
    ct, array, export = _cutile()
    kernel, params = _kernels(ct, array)[name]
    newer = export(kernel, params, version)
    assert newer[8:10] == bytes([13, int(version[-1])])
    baseline = export(kernel, params, "13.3")
    assert _body(read_bytecode(newer)) == _body(read_bytecode(baseline))

    tool = find_tileirdisasm()
    if tool is None:
        pytest.skip("tileirdisasm is not installed (pip install nvidia-cuda-tileiras)")
    path = f"/tmp/tileir_newer_{name}_{version}.tileirbc"
    with open(path, "wb") as f:
        f.write(newer)
    printed = subprocess.run([str(tool), path], capture_output=True, text=True, check=True).stdout
    assert _body(read_bytecode(newer)) == _normalise(printed)


def _vadd_export(version: str) -> bytes:
    ct, array, export = _cutile()
    kernel, params = _kernels(ct, array)["vadd"]
    return export(kernel, params, version)


def _refusal(data: bytes) -> str:
    with pytest.raises(BytecodeError) as info:
        read_bytecode(data)
    message = str(info.value)
    assert any(
        words in message for words in ('bytecode_version="13.4"', "does not support", "unrecognized", "unused bits")
    )
    return message


def test_ptr_attr_is_refused_by_name() -> None:
    from compiler.bytecode.reader import _FileReader

    data = bytearray(_vadd_export("13.4"))
    table = _FileReader(bytes(data), (13, 4))
    table._scan_sections()
    table.type_offsets = table._offset_table(5, 4, "types")
    at = next(start for start, _ in table.type_offsets if data[start] == 0x0C)  # a ptr: tag, flags, pointee
    assert data[at + 1] == 0x00
    data[at + 1] = 0x01  # "a ptr_attr follows"
    message = _refusal(bytes(data))
    assert "ptr type with a ptr_attr" in message and "bytecode 13.4" in message


def test_inbounds_reads_and_prints_as_tileirdisasm_does() -> None:
    data = bytearray(_vadd_export("13.4"))
    # load_view_tko: opcode, 2 results, flags 0x04 (token), weak, then inbounds = [false]
    at = data.index(bytes([0x3E, 0x02]))
    inbounds = data.index(b"\x01\x00", at + 4)
    data[inbounds + 1] = 0x01
    text = print_module(read_bytecode(bytes(data)))
    assert text.count("inbounds = [true]") == 1


def test_unknown_tag_bits_and_preview() -> None:
    data = bytearray(_vadd_export("13.5"))
    data[10] = 0x01
    assert "public-preview" in _refusal(bytes(data))
    data[10] = 0x02
    assert "unrecognized version tag bits (0x2)" in _refusal(bytes(data))


def test_version_beyond_13_5_names_the_supported_ones() -> None:
    data = bytearray(_vadd_export("13.4"))
    data[9] = 6
    with pytest.raises(BytecodeError) as info:
        read_bytecode(bytes(data))
    assert "unsupported Tile version 13.6.0" in str(info.value)
    assert "[13.1 - 13.4]" in str(info.value) and "13.5" in str(info.value)

"""Primitive encodings against the byte examples of the ground-truth doc
(/work/shared/spec/bytecode-ground-truth.md §2, §3.4, §5.1, §5.3) and MLIR's dense storage.

The module-level checks write a small module and look for the doc's byte strings in our
output; where tileirdisasm is installed, it must also print that module back as we print it
(so the bytes mean what the doc says they mean to NVIDIA's reader).
"""

from __future__ import annotations

import pytest

from compiler.bytecode import BytecodeError, write_bytecode
from compiler.bytecode.constants import dense_raw_data
from compiler.bytecode.format import Reader, Writer
from compiler.ir import attributes as A
from compiler.ir import types as T
from compiler.ir.diagnostics import has_errors
from compiler.verify import check_text

from .layout import FUNC, decode
from .util import comparable, module_items_text, run_tileirdisasm, tileirdisasm_path

VARINTS = [
    (0, "00"),
    (1, "01"),
    (127, "7f"),
    (128, "80 01"),
    (200, "c8 01"),
    (16383, "ff 7f"),
    (16384, "80 80 01"),
    (2**32 - 1, "ff ff ff ff 0f"),  # `-1 : i32` as an Integer attribute: zero-extended (§5.1)
    (2**63, "80 80 80 80 80 80 80 80 80 01"),
    (2**64 - 1, "ff ff ff ff ff ff ff ff ff 01"),  # the longest: 10 bytes (§2.1)
]

SVARINTS = [  # ZigZag (§2.2)
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (2, "04"),
    (-5, "09"),
    (100, "c8 01"),
    (0xFF800000, "80 80 80 f8 1f"),  # -inf f32, the bit pattern taken as a signed value (§5.3)
    (-(2**63), "ff ff ff ff ff ff ff ff ff 01"),
    (2**63 - 1, "fe ff ff ff ff ff ff ff ff 01"),
]


@pytest.mark.parametrize(("value", "encoded"), VARINTS)
def test_varint(value: int, encoded: str) -> None:
    out = Writer()
    out.varint(value)
    assert out.buf.hex(" ") == encoded
    r = Reader(bytes.fromhex(encoded))
    assert r.varint("a test value") == value and r.at_end()


@pytest.mark.parametrize(("value", "encoded"), SVARINTS)
def test_svarint(value: int, encoded: str) -> None:
    out = Writer()
    out.svarint(value)
    assert out.buf.hex(" ") == encoded
    decoded = Reader(bytes.fromhex(encoded)).svarint("a test value")
    assert decoded == (value - 2**64 if value >= 2**63 else value)


def test_overlong_varint_is_accepted_as_nvidia_accepts_it() -> None:
    # §2.1 / §9: no canonical-form check (`80 00` reads as 0).
    assert Reader(bytes.fromhex("80 00")).varint("x") == 0
    assert Reader(bytes.fromhex("c4 00")).varint("x") == 0x44


@pytest.mark.parametrize("encoded", ["80", "ff ff", "80 80 80 80 80 80 80 80 80 80 01", ""])
def test_bad_varint_is_an_error(encoded: str) -> None:
    with pytest.raises(BytecodeError):
        Reader(bytes.fromhex(encoded)).varint("x")


def test_int_arrays() -> None:
    # §2.3: a varint count, then fixed-width little-endian elements.
    out = Writer()
    out.array([1, -1], 4)
    assert out.buf.hex(" ") == "02 01 00 00 00 ff ff ff ff"
    out = Writer()
    out.array([-(2**63)], 8)  # a dynamic tensor_view dimension is INT64_MIN
    assert out.buf.hex(" ") == "01 00 00 00 00 00 00 00 80"
    assert Reader(bytes(out.buf)).array(8, "x") == (-(2**63),)
    with pytest.raises(BytecodeError):
        Reader(bytes.fromhex("05 00 00 00 00")).array(4, "x")  # 5 elements claimed, 1 present


# ------------------------------------------------------------------------------------------------
# In a written module

PRIMITIVES = """
cuda_tile.module @m {
  entry @k(%a: tile<i32>) {
    %0 = assume bounded<-5, 100>, %a : tile<i32>
    %1 = assume bounded<0, ?>, %a : tile<i32>
    %2 = assume div_by<16>, %a : tile<i32>
    %c = constant <i32: [1, 2, 3, 4]> : tile<4xi32>
    %3 = assume div_by<4, every 2 along 0>, %c : tile<4xi32>
    %t = constant <i1: true> : tile<4xi1>
    %f = constant <i1: false> : tile<4xi1>
    %p = constant <i1: [true, false, true, true, false, false, false, false,
                        true, false, false, false, false, false, false, true]> : tile<16xi1>
    %tf = constant <tf32: 1.0> : tile<tf32>
    %tfs = constant <tf32: [1.0, -2.0]> : tile<2xtf32>
    %n = constant <i16: -2> : tile<i16>
    %n64 = constant <i64: [-1, 1]> : tile<2xi64>
    %r = reduce %c dim=0 identities=[-1 : i32] : tile<4xi32> -> tile<i32>
      (%x: tile<i32>, %y: tile<i32>) {
        %s = maxi %x, %y signed : tile<i32>
        yield %s : tile<i32>
      }
    %cf = constant <f32: [1.0, 2.0, 3.0, 4.0]> : tile<4xf32>
    %rf = reduce %cf dim=0 identities=[0xFF800000 : f32] : tile<4xf32> -> tile<f32>
      (%x: tile<f32>, %y: tile<f32>) {
        %s = maxf %x, %y : tile<f32>
        yield %s : tile<f32>
      }
    return
  }
}
"""

# Byte strings the function body must contain (ground-truth doc §5.1, §5.3).
BODY_BYTES = {
    "bounded<-5, 100>": "0c 03 09 c8 01",
    "bounded<0, ?>": "0c 01 00",
    "div_by<16>": "08 10 00",
    "div_by<4, every 2 along 0>": "08 04 03 04 00",
    "-1 : i32 (Integer attribute, zero-extended)": "ff ff ff ff 0f",
    "-inf : f32 (Float attribute)": "80 80 80 f8 1f",
}

# The constants' raw buffers: MLIR's DenseElementsAttr storage (§3.4). One element is a splat.
CONSTANTS = {
    "i32 [1, 2, 3, 4]": "01 00 00 00 02 00 00 00 03 00 00 00 04 00 00 00",
    "i1 splat true": "ff",
    "i1 splat false": "00",
    "i1 non-splat: one bit per element, the first in the lowest bit": "0d 81",
    "tf32 splat 1.0: 19 bits in 3 bytes": "00 fc 01",
    "tf32 [1.0, -2.0]": "00 fc 01 00 00 06",
    "i16 -2": "fe ff",
    "i64 [-1, 1]": "ff ff ff ff ff ff ff ff 01 00 00 00 00 00 00 00",
    "f32 [1.0, 2.0, 3.0, 4.0]": "00 00 80 3f 00 00 00 40 00 00 40 40 00 00 80 40",
}


@pytest.fixture(scope="module")
def primitives_module():
    result, diagnostics = check_text(PRIMITIVES, "primitives.tileir")
    assert not has_errors(diagnostics), [d.message for d in diagnostics]
    return result.module


@pytest.mark.parametrize("what", sorted(BODY_BYTES))
def test_attribute_bytes_in_the_body(primitives_module, what: str) -> None:
    body = decode(write_bytecode(primitives_module)).payloads[FUNC]
    assert bytes.fromhex(BODY_BYTES[what]) in body, body.hex(" ")


def test_dense_constant_buffers(primitives_module) -> None:
    constants = decode(write_bytecode(primitives_module)).constants
    assert [c.hex(" ") for c in constants] == list(CONSTANTS.values())


def test_tileirdisasm_reads_the_primitives_as_we_print_them(primitives_module) -> None:
    if tileirdisasm_path() is None:
        pytest.skip("NVIDIA's tileirdisasm is not installed (pip install nvidia-cuda-tileiras)")
    for version in ((13, 1), (13, 3)):
        nvidia = run_tileirdisasm(write_bytecode(primitives_module, version))
        assert nvidia.ok, nvidia.stderr
        assert comparable(nvidia.stdout) == comparable(module_items_text(primitives_module))


@pytest.mark.parametrize(
    ("element", "values", "splat", "raw"),
    [
        (T.IntegerType(4), (-1, 7), False, "02 0f 07"),  # sub-byte integers take a byte each
        (T.IntegerType(8), (-128,), True, "01 80"),
        (T.IntegerType(1), (1, 1, 1, 1, 1, 1, 1, 1, 1), False, "02 ff 01"),  # 9 bits: 2 bytes
    ],
)
def test_dense_raw_data(element: T.Type, values: tuple[int, ...], splat: bool, raw: str) -> None:
    attr = A.DenseElementsAttr(T.TileType((1,) if splat else (len(values),), element), values, splat)
    assert dense_raw_data(attr).hex(" ") == raw

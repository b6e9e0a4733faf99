"""Rules NVIDIA's 13.5 tools hold that the 13.3 conformance files do not show, checked against
those tools (`tileirdisasm`, no GPU needed) and held by our verifier and bytecode reader.

- f4E2M1FN memory is reached through views only: a tile of `ptr<f4E2M1FN>` has rank 0 (a
  rule of the tile type, checked before its shape's); a view access needs exactly one static
  unit stride (the packing dimension, two elements to a byte); a gather/scatter view cannot
  use that dimension as its sparse one.
- A bytecode reader builds each type checked: a type table holding a type that breaks its
  own rules (a tile dimension that is not a power of two) is refused before any op is read.

Each case: a kernel, and the message NVIDIA's tools give (None: they accept it). Our verifier
must give the same verdict and message; with tileirdisasm installed, the kernel written as
bytecode by our writer must get that verdict from it too.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from compiler.bytecode import BytecodeError, read_bytecode, write_bytecode
from compiler.ir import types as T
from compiler.ir.core import Module
from compiler.ir.diagnostics import Severity
from compiler.verify import check_text

from .util import run_tileirdisasm

F4 = "f4E2M1FN"
STRIDE_RULE = (
    "'cuda_tile.load_view_tko' op an f4 view access requires exactly one statically encoded unit stride to "
    "identify the packing dimension; got {n} in '!cuda_tile.{tv}'"
)
POINTER_RULE = "tiles of ptr<f4E2M1FN> must have rank 0; use an f4 tile view for memory accesses"


def _dims(xs: list[int | None]) -> list[str]:
    return [str(x) if x is not None else "?" for x in xs]


def _tv(shape: list[int | None], strides: list[int | None]) -> str:
    return f"tensor_view<{'x'.join(_dims(shape))}x{F4}, strides=[{','.join(_dims(strides))}]>"


def _kernel(body: str) -> str:
    lines = "\n".join("    " + line for line in body.strip().splitlines())
    return f"cuda_tile.module @m {{\n  entry @k(%a: tile<ptr<{F4}>>, %n: tile<i32>) {{\n{lines}\n    return\n  }}\n}}\n"


def _view_kernel(shape: list[int | None], strides: list[int | None], view: str, tile: list[int], sparse=None) -> str:
    """A load and a store of one tile through `view` (partition, strided or gather) of `%a`."""
    dynamic = None in shape or None in strides
    operands = ", ".join(str(d) if d is not None else "%n" for d in shape)
    steps = ", ".join(str(d) if d is not None else "%n" for d in strides)
    tv = _tv(shape, strides)
    make = f"make_tensor_view %a, shape = [{operands}], strides = [{steps}] : {'tile<i32> -> ' if dynamic else ''}{tv}"
    t = "x".join(map(str, tile))
    if view == "partition":
        vtype, maker = f"partition_view<tile=({t}), {tv}>", "make_partition_view"
    elif view == "strided":
        vtype, maker = (
            f"strided_view<tile=({t}), traversal_strides=[{','.join(['2'] * len(tile))}], {tv}>",
            "make_strided_view",
        )
    else:
        vtype, maker = f"gather_scatter_view<tile=({t}), {tv}, sparse_dim={sparse}>", "make_gather_scatter_view"
    index = ", ".join("%rows" if d == sparse else "%z" for d in range(len(tile)))
    index_types = f"tile<{tile[sparse]}xi32>, tile<i32>" if sparse is not None else "tile<i32>"
    if sparse is not None and len(tile) == 1:
        index_types = f"tile<{tile[0]}xi32>"
    return _kernel(f"""
%v = {make}
%p = {maker} %v : {vtype}
%z = constant <i32: 0> : tile<i32>
{f"%rows = iota : tile<{tile[sparse]}xi32>" if sparse is not None else ""}
%x, %t = load_view_tko weak %p[{index}] : {vtype}, {index_types} -> tile<{t}x{F4}>, token
%t2 = store_view_tko weak %x, %p[{index}] : tile<{t}x{F4}>, {vtype}, {index_types} -> token
""")


@dataclass(frozen=True)
class Case:
    id: str
    text: str
    error: str | None


def _stride_case(id: str, shape, strides, view="partition", tile=None, units=0) -> Case:
    tile = tile or [2] * len(shape)
    return Case(id, _view_kernel(shape, strides, view, tile), STRIDE_RULE.format(n=units, tv=_tv(shape, strides)))


CASES = [
    # the packing dimension: one static unit stride, wherever it is
    Case("unit-stride-1d", _view_kernel([8], [1], "partition", [4]), None),
    Case("row-major", _view_kernel([4, 8], [None, 1], "partition", [2, 4]), None),
    Case("column-major", _view_kernel([8, 4], [1, None], "partition", [4, 2]), None),
    Case("middle-dim", _view_kernel([2, 4, 8], [None, 1, None], "partition", [2, 2, 2]), None),
    Case("one-element-along-packing", _view_kernel([4, 8], [None, 1], "partition", [4, 1]), None),
    Case("strided-view", _view_kernel([4, 8], [None, 1], "strided", [2, 4]), None),
    _stride_case("dynamic-1d", [8], [None]),
    _stride_case("stride-2-1d", [8], [2]),
    _stride_case("all-dynamic", [4, 8], [None, None]),
    _stride_case("no-unit", [4, 8], [16, 2]),
    _stride_case("two-units", [4, 8], [1, 1], units=2),
    _stride_case("strided-view-dynamic", [4, 8], [None, None], "strided", [2, 4]),
    # a gather/scatter view picks whole rows along another dimension
    Case("gather-rows", _view_kernel([4, 8], [None, 1], "gather", [4, 2], sparse=0), None),
    Case(
        "gather-along-packing",
        _view_kernel([8, 4], [1, None], "gather", [2, 4], sparse=0),
        "'cuda_tile.load_view_tko' op an f4 gather/scatter view cannot use packing dimension 0 as its sparse dimension",
    ),
    # pointers: rank 0 only (offset and views of them)
    Case("pointer-rank-0", _kernel(f"%b = offset %a, %n : tile<ptr<{F4}>>, tile<i32> -> tile<ptr<{F4}>>"), None),
    Case("pointer-tile", _kernel(f"%b = reshape %a : tile<ptr<{F4}>> -> tile<1xptr<{F4}>>"), POINTER_RULE),
]


def _first_error(text: str) -> tuple[Module, str | None]:
    result, diagnostics = check_text(text)
    errors = [d.message for d in diagnostics if d.severity == Severity.ERROR]
    return result.module, errors[0] if errors else None


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_our_verifier(case: Case) -> None:
    _, error = _first_error(case.text)
    assert error == case.error


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_tileirdisasm_agrees(case: Case) -> None:
    module, _ = _first_error(case.text)
    result = run_tileirdisasm(write_bytecode(module))
    if case.error is None:
        assert result.ok, result.stderr
    else:
        first = result.stderr.splitlines()[0]
        assert not result.ok and first.startswith("error: ") and first.endswith(case.error), result.stderr


def _retyped(text: str, op_name: str, shape: tuple[int, ...]) -> bytes:
    """`text` written as bytecode after giving `op_name`'s result a tile type of `shape` (its
    element kept): a type the text parser would refuse, so built behind its back."""
    module, error = _first_error(text)
    assert error is None, error
    found = [op for op in module.walk() if op.name == f"cuda_tile.{op_name}"]
    value = found[0].results[0]
    value.type = T.TileType(shape, value.type.element)
    return write_bytecode(module)


TYPE_TABLE_KERNEL = _kernel(
    f"%c = constant <f32: 1.0> : tile<4xf32>\n%b = offset %a, %n : tile<ptr<{F4}>>, tile<i32> -> tile<ptr<{F4}>>"
)
TYPE_TABLE_CASES = [
    # (op, shape, message): the f4 pointer rule comes before the shape's own rules
    ("constant", (3,), "all dimensions must be powers of two, got 3"),
    ("offset", (3, 1), POINTER_RULE),
]


@pytest.mark.parametrize("op,shape,message", TYPE_TABLE_CASES, ids=["not-power-of-two", "f4-pointer-first"])
def test_reader_refuses_a_broken_type(op: str, shape: tuple[int, ...], message: str) -> None:
    text = TYPE_TABLE_KERNEL
    data = _retyped(text, op, shape)
    with pytest.raises(BytecodeError) as caught:
        read_bytecode(data)
    assert str(caught.value).endswith(message), str(caught.value)


@pytest.mark.parametrize("op,shape,message", TYPE_TABLE_CASES, ids=["not-power-of-two", "f4-pointer-first"])
def test_tileirdisasm_refuses_a_broken_type(op: str, shape: tuple[int, ...], message: str) -> None:
    text = TYPE_TABLE_KERNEL
    result = run_tileirdisasm(_retyped(text, op, shape))
    first = result.stderr.splitlines()[0]
    assert not result.ok and first.startswith("error: error at offset ") and first.endswith(message), result.stderr

"""Integer literals with leading zeros are decimals, as in MLIR (issue 18 item 4: Python's
int(text, 0) refused them and `tileir check` exited 3 with an internal error)."""

from __future__ import annotations

from compiler.runtime.argspec import parse_spec
from compiler.text import parse
from compiler.text.lexer import int_literal
from compiler.verify import verify


def _parse(text: str):
    result = parse(text, "t.tileir")
    diagnostics = list(result.diagnostics) + (verify(result.module) if result.ok else [])
    return result.module, [d for d in diagnostics if d.is_error]


def test_int_literal() -> None:
    assert [int_literal(t) for t in ("0", "007", "10", "0x1F", "0X10", "00")] == [0, 7, 10, 31, 16, 0]


def test_leading_zeros_in_attributes_and_result_counts() -> None:
    module, errors = _parse(
        "cuda_tile.module @m {\n  entry @k(%n: tile<i32>) {\n"
        "    %a = assume bounded<01, ?>, %n : tile<i32>\n"
        "    %c = constant <i32: 007> : tile<i32>\n"
        "    %r:03 = get_tile_block_id : tile<i32>\n"
        "    return\n  }\n}\n"
    )
    assert not errors
    ops = {op.name: op for op in module.walk()}
    assert str(ops["cuda_tile.constant"].attr("value")).startswith("dense<7>")
    assert len(ops["cuda_tile.get_tile_block_id"].results) == 3


def test_a_wrong_result_count_with_leading_zeros_is_a_diagnostic() -> None:
    _, errors = _parse(
        "cuda_tile.module @m {\n  entry @k() {\n    %r:02 = get_tile_block_id : tile<i32>\n    return\n  }\n}\n"
    )
    assert len(errors) == 1 and "defines 3 results but was provided 2" in errors[0].message


def test_command_line_scalars_with_leading_zeros() -> None:
    assert parse_spec("007").value == 7 and parse_spec("-010").value == -10 and parse_spec("0x10").value == 16

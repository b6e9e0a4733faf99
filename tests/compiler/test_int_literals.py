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


HUGE = "9" * 5000  # past Python's int(str) limit of 4300 digits (it raised: an internal error)


def test_decimal_literals_past_any_width_are_diagnostics_not_internal_errors(tmp_path, capsys) -> None:
    from compiler.cli import main

    head = "cuda_tile.module @m {\n  entry @k(%n: tile<i32>) {\n"
    bodies = [
        f"    %c = constant <i64: {HUGE}> : tile<i64>\n",
        f"    %c = constant <i64: [{HUGE}]> : tile<1xi64>\n",
        f"    %a = assume bounded<0, {HUGE}>, %n : tile<i32>\n",
        f"    %r:{HUGE} = get_tile_block_id : tile<i32>\n",
    ]
    located = f'    %c = constant <i32: 1> : tile<i32> loc("f":{HUGE}:1)\n'  # a location: no range to break
    assert int_literal(HUGE) > 2**128 and int_literal("0" * 5000 + "7") == 7
    for i, body in enumerate([*bodies, located]):
        path = tmp_path / f"k{i}.tileir"
        path.write_text(head + body + "    return\n  }\n}\n")
        assert main(["check", str(path)]) == (0 if body is located else 1), body[:60]
        err = capsys.readouterr().err
        assert "internal error" not in err and ("error:" in err or body is located), err[-300:]

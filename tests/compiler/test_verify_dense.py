"""Dense constant literals: cuda-tile-opt's parse errors for `constant <elt: literal> : type`."""

from __future__ import annotations

import pytest

from compiler.verify import VerifyOptions, check_text

PARITY = VerifyOptions(keep_going=False)


def _kernel(line: str) -> str:
    return f"cuda_tile.module @m {{\n  entry @k() {{\n    {line}\n    return\n  }}\n}}\n"


def _diags(line: str):
    _, diags = check_text(_kernel(line), "t.mlir", PARITY)
    return [(d.severity.label, d.message, d.location()[1], d.code) for d in diags]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "%0 = constant <i32: [1, 2, 3]> : !cuda_tile.tile<8xi32>",
            "inferred shape of elements literal ([3]) does not match type ([8])",
        ),
        (
            "%0 = constant <i1: [[true, true], [true]]> : !cuda_tile.tile<2x2xi1>",
            "tensor literal is invalid; ranks are not consistent between elements",
        ),
        ("%0 = constant <i8: 256> : !cuda_tile.tile<i8>", "integer constant out of range for type"),
        ("%0 = constant <i8: -129> : !cuda_tile.tile<i8>", "integer constant out of range for type"),
        ("%0 = constant <i16: ABC> : !cuda_tile.tile<i16>", "expected integer value"),
        ("%0 = constant <i16: true> : !cuda_tile.tile<i16>", "expected integer value"),
        ("%0 = constant <f16: 0x12345678> : !cuda_tile.tile<f16>", "float constant out of range for type"),
        (
            "%0 = constant <f16: 42.0> : !cuda_tile.tile<f32>",
            "mismatch between the element type: 'f16' and the tile element type 'f32'",
        ),
    ],
)
def test_literal_errors(line: str, message: str) -> None:
    diags = _diags(line)
    assert len(diags) == 1
    severity, text, lineno, _ = diags[0]
    assert severity == "error" and message in text and lineno == 3


def test_dialect_messages_carry_the_custom_op_prefix() -> None:
    (d,) = _diags("%0 = constant <i8: 256> : !cuda_tile.tile<i8>")
    assert d[1] == "custom op 'cuda_tile.constant' integer constant out of range for type"
    assert d[3] == "dense-literal"


def test_first_bad_element_wins() -> None:
    # Elements are checked while reading: the out-of-range 300 comes before the bad shape.
    (d,) = _diags("%0 = constant <i8: [1, 300, 2]> : !cuda_tile.tile<8xi8>")
    assert "integer constant out of range for type" in d[1]


def test_decimal_integer_for_float_has_a_note() -> None:
    _, diags = check_text(_kernel("%0 = constant <f32: [1.0, 2]> : !cuda_tile.tile<2xf32>"), "t.mlir", PARITY)
    (d,) = diags
    assert d.message == "unexpected decimal integer literal for a floating point value"
    assert [r.message for r in d.related] == ["add a trailing dot to make the literal a float"]
    assert d.location()[1:] == (3, 31)  # at the `2`


def test_unknown_element_type_gives_both_errors() -> None:
    diags = _diags("%0 = constant <pluto : 42.0> : !cuda_tile.tile<f32>")
    assert [m for _, m, _, _ in diags] == [
        "custom op 'cuda_tile.constant' unknown type: pluto",
        "custom op 'cuda_tile.constant' expect element type to be one of i1 or i8 or i16 or i32 or i64 or f16 "
        "or bf16 or f32 or f64 or tf32 or f8E4M3FN or f8E5M2 or f8E8M0FNU or f4E2M1FN values, but got "
        "'<<NULL TYPE>>'",
    ]


def test_non_tile_element_type_is_quoted() -> None:
    (d,) = _diags("%0 = constant <tensor<i32> : 42.0> : tensor<i32>")
    assert d[1].endswith("but got 'tensor<i32>'")


def test_non_tile_result_type() -> None:
    (d,) = _diags("%0 = constant <i32 : 42> : tensor<i32>")
    assert "result #0 must be tile of i1 or i8" in d[1] and d[1].endswith("but got 'tensor<i32>'")


@pytest.mark.parametrize(
    "line",
    [
        "%0 = constant <i32: [[1, 2], [3, 4]]> : !cuda_tile.tile<2x2xi32>",
        "%0 = constant <f32: 1.5> : !cuda_tile.tile<4x4xf32>",
        "%0 = constant <i8: 255> : !cuda_tile.tile<i8>",
        "%0 = constant <i1: [true, false]> : !cuda_tile.tile<2xi1>",
        "%0 = constant <f16: 0x7C00> : !cuda_tile.tile<f16>",
        "%0 = constant <f32: [-1.0, 2.5e3]> : !cuda_tile.tile<2xf32>",
    ],
)
def test_valid_literals(line: str) -> None:
    assert _diags(line) == []

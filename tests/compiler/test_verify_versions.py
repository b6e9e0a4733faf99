"""Version gating against VerifyOptions.target_version, in the words of NVIDIA's bytecode writer."""

from __future__ import annotations

import pytest

from compiler.verify import VerifyOptions, check_text


def _diags(body: str, target: str | None, args: str = ""):
    text = f"cuda_tile.module @m {{\n  entry @k({args}) {{\n{body}    return\n  }}\n}}\n"
    _, diags = check_text(text, "t.mlir", VerifyOptions(target_version=target))
    return text, diags


ATAN2 = "    %x = constant <f32: 1.0> : !cuda_tile.tile<f32>\n    %r = atan2 %x, %x : tile<f32>\n"


def test_op_introduced_later() -> None:
    text, diags = _diags(ATAN2, "13.1")
    (d,) = diags
    assert d.message == "operation 'cuda_tile.atan2' is not available in bytecode version 13.1"
    assert d.code == "version-op"
    assert text[d.span.start : d.span.end] == "atan2"
    assert _diags(ATAN2, "13.2")[1] == []
    assert _diags(ATAN2, None)[1] == []


def test_element_type_introduced_later() -> None:
    body = "    %c = constant <f8E8M0FNU: 1.0> : !cuda_tile.tile<f8E8M0FNU>\n"
    text, diags = _diags(body, "13.1")
    (d,) = diags
    assert d.message == "type 'Float8E8M0FNU' requires bytecode version 13.2+, targeting 13.1"
    assert d.code == "version-type"
    assert text[d.span.start : d.span.end] == "%c"
    assert _diags(body, "13.2")[1] == []


def test_block_argument_type() -> None:
    text, diags = _diags("", "13.2", "%p: !cuda_tile.tile<ptr<f4E2M1FN>>")
    (d,) = diags
    assert d.message == "type 'Float4E2M1FN' requires bytecode version 13.3+, targeting 13.2"
    assert text[d.span.start : d.span.end] == "%p"


def test_attribute_added_later_unless_default() -> None:
    body = "    %x = constant <i32: 1> : !cuda_tile.tile<i32>\n    %r = negi %x overflow<no_signed_wrap> : tile<i32>\n"
    _, diags = _diags(body, "13.1")
    assert [d.message for d in diags] == [
        "'cuda_tile.negi' op attribute 'overflow' requires bytecode version 13.2+, but targeting 13.1"
    ]
    assert diags[0].code == "version-attribute"
    plain = "    %x = constant <i32: 1> : !cuda_tile.tile<i32>\n    %r = negi %x : tile<i32>\n"
    assert _diags(plain, "13.1")[1] == []


def test_global_fields_use_nvidias_wording() -> None:
    text = "cuda_tile.module @m {\n  global private constant @g <i32: [1]> : !cuda_tile.tile<1xi32>\n}\n"
    _, diags = check_text(text, "t.mlir", VerifyOptions(target_version="13.2"))
    assert [d.message for d in diags] == [
        "constant global `g` cannot be encoded in bytecode version 13.2 "
        "(the `constant` attribute requires bytecode 13.3+)",
        "global `g` uses non-public symbol visibility, which cannot be encoded in bytecode version 13.2 "
        "(requires bytecode 13.3+)",
    ]
    assert check_text(text, "t.mlir", VerifyOptions(target_version="13.3"))[1] == []


@pytest.mark.parametrize("target", ["13.0", "14.1", "latest"])
def test_unknown_target_version(target: str) -> None:
    _, diags = _diags("", target)
    assert [d.message for d in diags] == [
        f"unsupported target bytecode version '{target}'; supported versions: 13.1, 13.2, 13.3, 13.4"
    ]
    assert diags[0].code == "target-version"


def test_optional_operand_and_used_result_added_later() -> None:
    body = (
        "    %t = make_token : token\n"
        '    %a = print_tko "x" token = %t -> token\n'
        '    %b = print_tko "y" -> token\n'
        "    %j = join_tokens %b, %b : token\n"
    )
    _, diags = _diags(body, "13.1")
    assert [d.message for d in diags] == [
        "'cuda_tile.print_tko' op optional operand 'token' is provided but requires bytecode version 13.2, "
        "targeting 13.1",
        "'cuda_tile.print_tko' op result 'result_token' requires bytecode version 13.2 but is being used and "
        "targeting 13.1",
    ]
    assert _diags(body, "13.2")[1] == []


def test_optional_attribute_added_later() -> None:
    body = (
        "    %a = constant <f16: 1.0> : tile<16x16xf16>\n"
        "    %c = constant <f32: 0.0> : tile<16x16xf32>\n"
        "    %m = mmaf %a, %a, %c fast_acc : tile<16x16xf16>, tile<16x16xf16>, tile<16x16xf32>\n"
    )
    _, diags = _diags(body, "13.2")
    assert [d.message for d in diags] == [
        "'cuda_tile.mmaf' op optional attribute 'fast_acc' is provided but requires bytecode version 13.3, "
        "targeting 13.2"
    ]

"""The frontend contract: module attributes of the builtin.module wrapper, internal dialects."""

from __future__ import annotations

import pytest

from compiler.verify import VerifyOptions, check_text

KERNEL = "  cuda_tile.module @m {\n    cuda_tile.entry @k() {\n      cuda_tile.return\n    }\n  }\n"


def _module(attrs: str, extra: str = "") -> str:
    return f"module attributes {{{attrs}}} {{\n{KERNEL}{extra}}}\n"


def _diags(text: str):
    _, diags = check_text(text, "t.mlir", VerifyOptions(), allow_unregistered=True)
    return diags


def test_conformant_module_is_quiet() -> None:
    text = _module(
        "nv_tileaa.compute_capability = 90 : i32, tt.num_warps = 4 : i32, tt.num_ctas = 2 : i32, "
        "tt.cluster_dim = array<i32: 2, 1, 1>, tt.num_stages = 3 : i32, myfe.debug = true"
    )
    assert _diags(text) == []
    assert _diags(_module('nv_tileaa.target_spec = "sm_100"')) == []


@pytest.mark.parametrize(
    ("attrs", "message", "code", "value"),
    [
        (
            "nv_tileaa.compute_capability = 91 : i32",
            "nv_tileaa.compute_capability = 91 is not a known compute capability",
            "compute-capability",
            "91 : i32",
        ),
        (
            "tt.num_warps = 3 : i32",
            "tt.num_warps must be a power of two from 1 to 32, got 3",
            "launch-attribute",
            "3 : i32",
        ),
        (
            "tt.num_warps = 64 : i32",
            "tt.num_warps must be a power of two from 1 to 32, got 64",
            "launch-attribute",
            "64 : i32",
        ),
        ("tt.num_ctas = 0 : i32", "tt.num_ctas must be an integer from 1 to 16, got 0", "launch-attribute", "0 : i32"),
        (
            "tt.cluster_dim = array<i32: 1, 1>",
            "tt.cluster_dim must be three positive i32 values (array<i32: X, Y, Z>), got array<i32: 1, 1>",
            "launch-attribute",
            "array<i32: 1, 1>",
        ),
        (
            'nv_tileaa.target_spec = "gfx90a"',
            'nv_tileaa.target_spec must be a string "sm_XX", got "gfx90a"',
            "compute-capability",
            '"gfx90a"',
        ),
    ],
)
def test_errors_point_at_the_value(attrs: str, message: str, code: str, value: str) -> None:
    text = _module(attrs)
    (d,) = _diags(text)
    assert d.severity.label == "error"
    assert d.message.startswith(message)
    assert d.code == code
    assert text[d.span.start : d.span.end] == value


def test_string_compute_capability_has_a_fix() -> None:
    text = _module('nv_tileaa.compute_capability = "sm_90"')
    (d,) = _diags(text)
    assert d.severity.label == "error" and d.code == "compute-capability"
    (fix,) = d.fixes
    (edit,) = fix.edits
    assert text[edit.span.start : edit.span.end] == '"sm_90"' and edit.new_text == "90 : i32"


def test_misspelled_tt_key_warns_with_a_fix() -> None:
    text = _module("tt.num_warp = 4 : i32")
    (d,) = _diags(text)
    assert d.severity.label == "warning" and d.code == "ignored-attribute"
    assert d.message == "unknown module attribute 'tt.num_warp' is ignored by tileiras; did you mean 'tt.num_warps'?"
    (edit,) = d.fixes[0].edits
    assert text[edit.span.start : edit.span.end] == "tt.num_warp" and edit.new_text == "tt.num_warps"


def test_launch_attribute_in_another_namespace() -> None:
    text = _module("myfe.num_warps = 8 : i32")
    (d,) = _diags(text)
    assert d.severity.label == "warning"
    assert d.message.startswith("'myfe.num_warps' is not read by tileiras")
    assert d.fixes[0].edits[0].new_text == "tt.num_warps"


def test_cluster_dim_against_num_ctas() -> None:
    text = _module("tt.num_ctas = 2 : i32, tt.cluster_dim = array<i32: 2, 2, 1>")
    (d,) = _diags(text)
    assert d.severity.label == "warning"
    assert d.message == "tt.cluster_dim [2, 2, 1] holds 4 CTAs but tt.num_ctas is 2"
    assert [r.message for r in d.related] == ["tt.num_ctas is set here"]


def test_target_spec_next_to_compute_capability() -> None:
    same = _module('nv_tileaa.compute_capability = 90 : i32, nv_tileaa.target_spec = "sm_90"')
    (d,) = _diags(same)
    assert d.severity.label == "warning"
    assert d.message == "nv_tileaa.target_spec is ignored when nv_tileaa.compute_capability is present"
    other = _module('nv_tileaa.compute_capability = 90 : i32, nv_tileaa.target_spec = "sm_100"')
    (d,) = _diags(other)
    assert d.severity.label == "error"
    assert "disagrees with nv_tileaa.compute_capability = 90" in d.message


def test_internal_dialect_op_is_rejected() -> None:
    text = _module("", '  "nvvm.barrier0"() : () -> ()\n')
    (d,) = _diags(text)
    assert d.message == "unregistered dialect: nvvm"
    assert d.code == "internal-dialect"
    assert text[d.span.start : d.span.end] == '"nvvm.barrier0"'
    assert d.location()[1] == 7


def test_other_unregistered_ops_are_fine() -> None:
    assert _diags(_module("", '  "test.op"() : () -> ()\n')) == []


# ---------------------------------------------------------------------------- PTX names


def _named(kernel: str, global_: str = "g") -> str:
    return (
        "cuda_tile.module @m {\n"
        f'  global @"{global_}" <f32: [1.0]> : tile<1xf32>\n'
        f'  entry @"{kernel}"() {{\n    return\n  }}\n'
        "  entry @a_b() {\n    return\n  }\n"
        "}\n"
    )


@pytest.mark.parametrize("name", ["k", "a$b", "_1", "$a", "add", "K9_$"])
def test_ptx_identifiers_are_quiet(name: str) -> None:
    assert _diags(_named(name, name + "g")) == []


@pytest.mark.parametrize(
    ("name", "fixed"), [("a.b", "a_b_1"), ("1x", "k1x"), ("_", "k_"), ("a b", "a_b_1"), ("é", "k_")]
)
def test_a_kernel_name_tileiras_refuses_is_a_warning_with_a_rename(name: str, fixed: str) -> None:
    text = _named(name)
    (d,) = _diags(text)
    assert d.severity.name == "WARNING" and d.code == "ptx-name"
    assert d.message.startswith(f"tileiras cannot compile a kernel named '{name}': the name must be a PTX identifier")
    assert text[d.span.start : d.span.end] == f'@"{name}"'
    (fix,) = d.fixes
    (edit,) = fix.edits
    assert edit.new_text == f"@{fixed}"  # `a_b` is taken: the next free name
    renamed = text[: edit.span.start] + edit.new_text + text[edit.span.end :]
    assert _diags(renamed) == []


def test_a_global_name_tileiras_refuses_is_a_warning_without_a_fix() -> None:
    text = _named("k", "g.x")
    (d,) = _diags(text)
    assert d.code == "ptx-name" and d.message.startswith("tileiras cannot compile a global named 'g.x'")
    assert text[d.span.start : d.span.end] == '@"g.x"' and not d.fixes  # its get_globals name it too

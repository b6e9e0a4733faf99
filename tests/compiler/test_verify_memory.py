"""Verifiers of the memory ops (compiler.verify.ops_memory) and their custom syntax's errors."""

from __future__ import annotations

import pytest

from compiler.ir.diagnostics import Diagnostic
from compiler.verify import VerifyOptions, check_text

MLIR = VerifyOptions(keep_going=False)

PV = "partition_view<tile=(4x32), tensor_view<?x32xf32, strides=[32,1]>>"
SV = "strided_view<tile=(4x32), traversal_strides=[2,1], tensor_view<?x32xf32, strides=[32,1]>>"
GV = "gather_scatter_view<tile=(4x32), tensor_view<?x32xf32, strides=[32,1]>, sparse_dim=0>"
TV = "tensor_view<?x32xf32, strides=[32,1]>"

VALID = f"""cuda_tile.module @m {{
  testing$func @k(%p: !cuda_tile.tile<ptr<f32>>, %ps: !cuda_tile.tile<8xptr<f32>>, %pi: !cuda_tile.tile<8xptr<i32>>,
                  %n: !cuda_tile.tile<i64>) {{
    %t0 = make_token : token
    %t1 = make_token : token
    %t = join_tokens %t0, %t1 : token
    %tv = make_tensor_view %p, shape = [%n, 32], strides = [32, 1] : tile<i64> -> {TV}
    %pv = make_partition_view %tv : {PV}
    %sv = make_strided_view %tv : {SV}
    %gv = make_gather_scatter_view %tv : {GV}
    %c0 = constant <i32: 0> : tile<i32>
    %rows = constant <i32: 0> : tile<4xi32>
    %x, %tx = load_view_tko weak %pv[%c0, %c0] token = %t : {PV}, tile<i32> -> tile<4x32xf32>, token
    %y, %ty = load_view_tko acquire device %sv[%c0, %c0] : {SV}, tile<i32> -> tile<4x32xf32>, token
    %z, %tz = load_view_tko relaxed tl_blk %gv[%rows, %c0] : {GV}, tile<4xi32>, tile<i32> -> tile<4x32xf32>, token
    %s = store_view_tko release sys %x, %pv[%c0, %c0] : tile<4x32xf32>, {PV}, tile<i32> -> token
    %r = atomic_red_view_tko relaxed device %pv[%c0, %c0], addf, %x : tile<4x32xf32>, {PV}, tile<i32> -> token
    %d0, %d1 = get_tensor_shape %tv : {TV} -> tile<i64>
    %i0, %i1 = get_index_space_shape %pv : {PV} -> tile<i32>
    %v, %tv2 = load_ptr_tko weak %ps : tile<8xptr<f32>> -> tile<8xf32>, token
    %w = store_ptr_tko relaxed device %ps, %v token=%tv2 : tile<8xptr<f32>>, tile<8xf32> -> token
    %vi, %tvi = load_ptr_tko weak %pi : tile<8xptr<i32>> -> tile<8xi32>, token
    %o, %to = atomic_rmw_tko acq_rel device %pi, max, %vi : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token
    %q, %tq = atomic_rmw_tko relaxed device %ps, xchg, %v : tile<8xptr<f32>>, tile<8xf32> -> tile<8xf32>, token
    %c, %tc = atomic_cas_tko release sys %pi, %vi, %vi : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token
    %a = alloca num_elem = 64, alignment = 16 : tile<ptr<f32>>
    %b = alloca num_elem = 0, alignment = 1 global : tile<ptr<i8>>
  }}
}}
"""

ARGS = (
    "%p: !cuda_tile.tile<ptr<f32>>, %ps: !cuda_tile.tile<8xptr<f32>>, %pi: !cuda_tile.tile<8xptr<i32>>, "
    "%pb: !cuda_tile.tile<8xptr<i8>>, %pt: !cuda_tile.tile<8xptr<tf32>>, %v: !cuda_tile.tile<8xf32>, "
    "%vi: !cuda_tile.tile<8xi32>, %vb: !cuda_tile.tile<8xi8>, %vt: !cuda_tile.tile<8xtf32>, "
    "%m4: !cuda_tile.tile<4xi1>, %tv: !cuda_tile." + TV + ", %pv: !cuda_tile." + PV + ", "
    "%gv: !cuda_tile." + GV + ", %x: !cuda_tile.tile<4x32xf32>, %i: !cuda_tile.tile<i32>, "
    "%i64: !cuda_tile.tile<i64>, %i1d: !cuda_tile.tile<1xi32>, %tok: !cuda_tile.token"
)


def kernel(*body: str) -> str:
    lines = "\n".join("    " + b for b in body)
    return f"cuda_tile.module @m {{\n  testing$func @k({ARGS}) {{\n{lines}\n  }}\n}}\n"


def errors(text: str) -> list[Diagnostic]:
    _, diagnostics = check_text(text, "t.mlir", MLIR, allow_unregistered=True)
    return [d for d in diagnostics if d.is_error]


def only_error(text: str) -> Diagnostic:
    found = errors(text)
    assert len(found) == 1, [d.message for d in found]
    return found[0]


def at(text: str, d: Diagnostic) -> str:
    return text[d.span.start : d.span.end]


def test_valid_memory_ops() -> None:
    assert errors(VALID) == []
    _, diagnostics = check_text(VALID, "t.mlir", VerifyOptions(), allow_unregistered=True)
    assert diagnostics == []


def test_valid_kernel_args() -> None:
    assert errors(kernel()) == []


# ------------------------------------------------------------------ tokens


def test_join_tokens_needs_two() -> None:
    text = kernel("%j = join_tokens %tok : token")
    d = only_error(text)
    assert d.message == "'cuda_tile.join_tokens' op expect two or more tokens"
    assert d.code == "token-count"
    assert d.location()[1] == 3


def test_make_token_result_type() -> None:
    d = only_error(kernel("%j = make_token : tile<i32>"))
    assert (
        d.message == "'cuda_tile.make_token' op result #0 must be cuda tile token type, but got '!cuda_tile.tile<i32>'"
    )


# ------------------------------------------------------------------ memory model


def test_weak_load_with_scope_fix() -> None:
    text = kernel("%r, %t = load_ptr_tko weak device %ps : tile<8xptr<f32>> -> tile<8xf32>, token")
    d = only_error(text)
    assert d.message == "'cuda_tile.load_ptr_tko' op weak load must not have memory scope"
    assert d.code == "memory-scope"
    assert at(text, d) == "device"
    assert "load_ptr_tko weak %ps" in d.fixes[0].apply(text)
    assert errors(d.fixes[0].apply(text)) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "%r, %t = load_ptr_tko release device %ps : tile<8xptr<f32>> -> tile<8xf32>, token",
            "expect one of: weak, relaxed, or acquire, but got: release",
        ),
        (
            "%r, %t = load_ptr_tko relaxed %ps : tile<8xptr<f32>> -> tile<8xf32>, token",
            "memory scope is required for relaxed load",
        ),
        (
            "%t = store_ptr_tko acquire device %ps, %v : tile<8xptr<f32>>, tile<8xf32> -> token",
            "expect one of: weak, relaxed, or release, but got: acquire",
        ),
        ("%t = store_ptr_tko weak sys %ps, %v : tile<8xptr<f32>>, tile<8xf32> -> token", "weak store must not have"),
        (
            "%t = store_ptr_tko release %ps, %v : tile<8xptr<f32>>, tile<8xf32> -> token",
            "memory scope is required for release store",
        ),
        (
            f"%r, %t = load_view_tko release device %pv[%i, %i] : {PV}, tile<i32> -> tile<4x32xf32>, token",
            "expect one of: weak, relaxed, or acquire, but got: release",
        ),
        (
            f"%t = store_view_tko acquire device %x, %pv[%i, %i] : tile<4x32xf32>, {PV}, tile<i32> -> token",
            "expect one of: weak, relaxed, or release, but got: acquire",
        ),
    ],
)
def test_memory_model(line: str, message: str) -> None:
    assert message in only_error(kernel(line)).message


def test_scope_required_fix_adds_device() -> None:
    text = kernel("%r, %t = load_ptr_tko acquire %ps : tile<8xptr<f32>> -> tile<8xf32>, token")
    d = only_error(text)
    assert errors(d.fixes[0].apply(text)) == []


def test_view_memory_keywords_are_parse_errors() -> None:
    d = only_error(
        kernel(f"%t = store_view_tko weak tl_blk %x, %pv[%i, %i] : tile<4x32xf32>, {PV}, tile<i32> -> token")
    )
    assert d.message.endswith(
        "operation specifies weak memory ordering semantics"
        ', but then provides "tl_blk" scope, expected no memory scope.'
    )


def test_pointer_load_type_rules() -> None:
    d = only_error(kernel("%r, %t = load_ptr_tko weak %ps, %m4 : tile<8xptr<f32>>, tile<4xi1> -> tile<8xf32>, token"))
    assert (
        d.message
        == "'cuda_tile.load_ptr_tko' op failed to verify that shape of 'mask' must match the shape of 'source'"
    )
    d = only_error(kernel("%t = store_ptr_tko weak %ps, %v, %m4 : tile<8xptr<f32>>, tile<8xf32>, tile<4xi1> -> token"))
    assert d.message.endswith("failed to verify that shape of 'destination' must match the shape of 'mask'")


# ------------------------------------------------------------------ view loads and stores


def test_view_load_tile_type() -> None:
    d = only_error(kernel(f"%r, %t = load_view_tko weak %pv[%i, %i] : {PV}, tile<i32> -> tile<8xf32>, token"))
    assert d.message == (
        "'cuda_tile.load_view_tko' op expected tile type to be '!cuda_tile.tile<4x32xf32>' (based on view type), "
        "got '!cuda_tile.tile<8xf32>'"
    )
    assert d.code == "view-tile-type"


def test_view_load_index_count() -> None:
    d = only_error(kernel(f"%r, %t = load_view_tko weak %pv[%i] : {PV}, tile<i32> -> tile<4x32xf32>, token"))
    assert d.message.endswith("expected 2 index operands (based on view type), got 1")
    assert d.code == "index-count"


def test_view_store_index_types_generic() -> None:
    text = kernel(
        '%t = "cuda_tile.store_view_tko"(%x, %pv, %i, %i64) <{memory_ordering_semantics = 0 : i32, '
        "operandSegmentSizes = array<i32: 1, 1, 2, 0>}> : (!cuda_tile.tile<4x32xf32>, !cuda_tile." + PV + ", "
        "!cuda_tile.tile<i32>, !cuda_tile.tile<i64>) -> !cuda_tile.token"
    )
    d = only_error(text)
    assert d.message.endswith(
        "expected index type 1 to be the same as other index types ('!cuda_tile.tile<i32>'), got '!cuda_tile.tile<i64>'"
    )
    assert at(text, d) == "%i64"


def test_view_index_must_be_scalar() -> None:
    d = only_error(kernel(f"%t = store_view_tko weak %x, %pv[%i1d, %i1d] : tile<4x32xf32>, {PV}, tile<1xi32> -> token"))
    assert d.message.endswith("expected index type to be a scalar tile, got '!cuda_tile.tile<1xi32>'")


def test_gather_view_indices() -> None:
    d = only_error(kernel(f"%r, %t = load_view_tko weak %gv[%i, %i] : {GV}, tile<i32> -> tile<4x32xf32>, token"))
    assert d.message.endswith(
        "expected index at sparse_dim position 0 to be a 1D tensor for GatherScatterView, got rank 0"
    )


# ------------------------------------------------------------------ building views and shape queries


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '%r = "cuda_tile.make_tensor_view"(%p, %i64) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : '
            "(!cuda_tile.tile<ptr<f32>>, !cuda_tile.tile<i64>) -> !cuda_tile.tensor_view<32xf32, strides=[1]>",
            "expected 0 dynamic shape operands, got 1",
        ),
        (
            '%r = "cuda_tile.make_tensor_view"(%p) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : '
            "(!cuda_tile.tile<ptr<f32>>) -> !cuda_tile.tensor_view<32xf32, strides=[?]>",
            "expected 1 dynamic stride operands, got 0",
        ),
        (
            '%r = "cuda_tile.make_tensor_view"(%p) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : '
            "(!cuda_tile.tile<ptr<f32>>) -> !cuda_tile.tensor_view<f64>",
            "expected pointer to 'f64' to build tensor_view of this type, got 'f32'",
        ),
        (
            '%r = "cuda_tile.make_tensor_view"(%p, %i64, %i) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : '
            "(!cuda_tile.tile<ptr<f32>>, !cuda_tile.tile<i64>, !cuda_tile.tile<i32>) -> "
            "!cuda_tile.tensor_view<?xf32, strides=[?]>",
            "expected dynamic stride index 0 to be of the same type as the other dynamic values "
            "('!cuda_tile.tile<i64>'), got '!cuda_tile.tile<i32>'",
        ),
        (
            '%r = "cuda_tile.make_partition_view"(%tv) : (!cuda_tile.' + TV + ") -> !cuda_tile.partition_view<"
            "tile=(4x32), tensor_view<64x32xf32, strides=[32,1]>>",
            "expected the type of the provided tensor_view value ('!cuda_tile." + TV + "') to be the same as the "
            "view's tensor_view type ('!cuda_tile.tensor_view<64x32xf32, strides=[32,1]>')",
        ),
        (
            '%a, %b, %c = "cuda_tile.get_tensor_shape"(%tv) : (!cuda_tile.' + TV + ") -> "
            "(!cuda_tile.tile<i32>, !cuda_tile.tile<i32>, !cuda_tile.tile<i32>)",
            "expected 2 results due to tensor rank, but got 3",
        ),
        (
            '%a = "cuda_tile.get_index_space_shape"(%pv) : (!cuda_tile.' + PV + ") -> (!cuda_tile.tile<i32>)",
            "'cuda_tile.get_index_space_shape' op expected 2 results due to view index space rank, but got 1",
        ),
        (
            "%a = get_tensor_shape %v : tile<8xf32> -> tile<i32>",
            "custom op 'cuda_tile.get_tensor_shape' expected tensor_view, got '!cuda_tile.tile<8xf32>'",
        ),
        (
            f"%a = make_partition_view %tv : {TV}",
            "custom op 'cuda_tile.make_partition_view' expected 'partition_view' type, but got '!cuda_tile." + TV + "'",
        ),
    ],
)
def test_views_and_queries(line: str, message: str) -> None:
    assert message in only_error(kernel(line)).message


# ------------------------------------------------------------------ atomics


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "%r, %t = atomic_rmw_tko relaxed device %pi, addf, %vi"
            " : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token",
            "'cuda_tile.atomic_rmw_tko' op 'addf' works only with floats f16, bf16, f32, and f64",
        ),
        (
            "%r, %t = atomic_rmw_tko relaxed device %ps, add, %v : tile<8xptr<f32>>, tile<8xf32> -> tile<8xf32>, token",
            "'add' works only with integers i32 and i64",
        ),
        (
            "%r, %t = atomic_rmw_tko relaxed device %pt, xchg, %vt : tile<8xptr<tf32>>, tile<8xtf32> -> "
            "tile<8xtf32>, token",
            "'xchg' works only with integers or float of 32 or 64 bitwidth",
        ),
        (
            "%r, %t = atomic_rmw_tko relaxed device %ps, add, %vi"
            " : tile<8xptr<f32>>, tile<8xi32> -> tile<8xi32>, token",
            "expected pointee type ('f32') to match element type of 'arg' ('i32')",
        ),
        (
            "%r, %t = atomic_rmw_tko relaxed device %pi, and, %vi, %m4 : tile<8xptr<i32>>, tile<8xi32>, tile<4xi1> "
            "-> tile<8xi32>, token",
            "failed to verify that all of {pointers, arg, mask} have same shape",
        ),
        (
            "%r, %t = atomic_rmw_tko weak device %pi, add, %vi : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token",
            "memory ordering semantics must be one of: relaxed, acquire, release, acq_rel",
        ),
        (
            "%r, %t = atomic_rmw_tko relaxed device %pi, foo, %vi"
            " : tile<8xptr<i32>>, tile<8xi32> -> tile<8xi32>, token",
            "expected string or keyword containing one of the following enum values for attribute 'mode' "
            "[and, or, xor, add, addf, max, min, umax, umin, xchg]",
        ),
        (
            "%r, %t = atomic_cas_tko relaxed device %pb, %vb, %vb : tile<8xptr<i8>>, tile<8xi8> -> tile<8xi8>, token",
            "expect only float or integer types with 32 or 64 bit",
        ),
        (
            "%r, %t = atomic_cas_tko relaxed device %ps, %vi, %vi"
            " : tile<8xptr<f32>>, tile<8xi32> -> tile<8xi32>, token",
            "expected pointee type ('f32') to match element type of 'val' ('i32')",
        ),
    ],
)
def test_pointer_atomics(line: str, message: str) -> None:
    assert message in only_error(kernel(line)).message


RED = "%t = atomic_red_view_tko {sem} %pv[{idx}], {mode}, %x : tile<4x32xf32>, " + PV + ", {ity} -> token"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"sem": "weak device"}, "only 'relaxed' memory ordering is supported for view-based atomic reductions"),
        ({"mode": "xchg"}, "atomic_red_view_tko op cannot use xchg operation"),
        ({"mode": "add"}, "'add' works only with integers i32 and i64"),
        ({"idx": "%i"}, "expected 2 index operand(s) for view with tile rank 2, got 1"),
        ({"idx": "%i1d, %i1d", "ity": "tile<1xi32>"}, "index operand 0 must be a scalar tile (rank 0), got shape 1"),
        ({"sem": "relaxed bogus"}, "invalid memory_scope: 'bogus'; expected one of: tl_blk, device, sys"),
    ],
)
def test_atomic_red_view(fields: dict[str, str], message: str) -> None:
    values = {"sem": "relaxed device", "idx": "%i, %i", "mode": "addf", "ity": "tile<i32>"} | fields
    assert message in only_error(kernel(RED.format(**values))).message


def test_atomic_red_view_sys_scope_fix() -> None:
    text = kernel(RED.format(sem="relaxed sys", idx="%i, %i", mode="addf", ity="tile<i32>"))
    d = only_error(text)
    assert d.message.endswith(
        "memory scope 'sys' is not supported for view-based atomic reductions; use 'tl_blk' or 'device' for TMA "
        "compatibility"
    )
    assert at(text, d) == "sys"
    assert errors(d.fixes[0].apply(text)) == []


def test_atomic_red_view_rejects_gather_and_padding() -> None:
    line = f"%t = atomic_red_view_tko relaxed device %gv[%i, %i], addf, %x : tile<4x32xf32>, {GV}, tile<i32> -> token"
    assert only_error(kernel(line)).message.endswith("gather_scatter_view is not supported; use partition_view instead")
    padded = "partition_view<tile=(4x32), padding_value = zero, tensor_view<?x32xf32, strides=[32,1]>>"
    text = kernel(
        f"%q = make_partition_view %tv : {padded}",
        f"%t = atomic_red_view_tko relaxed device %q[%i, %i], addf, %x : tile<4x32xf32>, {padded}, tile<i32> -> token",
    )
    assert only_error(text).message.endswith("views with padding_value are not supported for atomic reductions")


# ------------------------------------------------------------------ alloca


def test_alloca_negative_count() -> None:
    text = kernel("%a = alloca num_elem = -10, alignment = 16 : tile<ptr<f32>>")
    d = only_error(text)
    assert d.message == (
        "'cuda_tile.alloca' op attribute 'num_elem' failed to satisfy constraint: 64-bit signless integer "
        "attribute whose minimum value is 0"
    )
    assert at(text, d) == "-10"


def test_alloca_alignment_power_of_two_fix() -> None:
    text = kernel("%a = alloca num_elem = 64, alignment = 12 : tile<ptr<f32>>")
    d = only_error(text)
    assert d.message == "'cuda_tile.alloca' op 'alignment' must be power of two"
    assert at(text, d) == "12"
    assert "alignment = 16" in d.fixes[0].apply(text)


def test_alloca_alignment_natural_size() -> None:
    text = kernel("%a = alloca num_elem = 2, alignment = 2 : tile<ptr<f32>>")
    d = only_error(text)
    assert d.message.endswith("'alignment' (2) must be at least the natural size (4 bytes) for element type 'f32'")
    assert errors(d.fixes[0].apply(text)) == []


def test_malformed_operand_segments_do_not_crash() -> None:
    text = kernel(
        '%r, %t = "cuda_tile.load_view_tko"(%pv) <{operandSegmentSizes = array<i32: 1>}> : '
        "(!cuda_tile." + PV + ") -> (!cuda_tile.tile<4x32xf32>, !cuda_tile.token)"
    )
    assert only_error(text).message == (
        "'cuda_tile.load_view_tko' op 'operandSegmentSizes' attribute for specifying operand segments must have "
        "3 elements, but got 1"
    )
    text = kernel(
        '%r = "cuda_tile.make_tensor_view"(%p, %i64) <{operandSegmentSizes = array<i32: 1, 2, 2>}> : '
        "(!cuda_tile.tile<ptr<f32>>, !cuda_tile.tile<i64>) -> !cuda_tile.tensor_view<?xf32, strides=[?]>"
    )
    assert only_error(text).message.endswith(
        "operand count (2) does not match with the total size (5) specified in attribute 'operandSegmentSizes'"
    )

"""Parser and printer behaviour on text the project owns."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.ir import types as T
from compiler.text import ParseOptions, PrintOptions, parse, print_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHARED = Path(__file__).resolve().parents[2].parent / "shared"

KERNEL = """\
// Adds two vectors.
cuda_tile.module @m {
  // The kernel.
  entry @add(%a: tile<ptr<f32>>, %n: tile<i32>) {
    %c = constant <f32: [1.0, 2.5]> : tile<2xf32>  // two values
    %s = addf %c, %c rounding<zero> : tile<2xf32>
    %t = cmpf less_than ordered %s, %c : tile<2xf32> -> tile<2xi1>
    %x, %y, %z = get_tile_block_id : tile<i32>
    %f = for %i in (%x to %n, step %y) : tile<i32> iter_values(%acc = %s) -> (tile<2xf32>) {
      %u = mulf %acc, %acc : tile<2xf32>
      continue %u : tile<2xf32>
    }
    // before return
    return
  }
}
"""


def roundtrip(text: str, **opts) -> str:
    result = parse(text, "t.tileir")
    assert result.ok, [d.format() for d in result.diagnostics]
    return print_module(result.module, PrintOptions(**opts))


def test_names_types_and_comments_survive_printing():
    out = roundtrip(KERNEL)
    for needle in (
        "// Adds two vectors.",
        "// The kernel.",
        "%c = constant <f32: [1.000000e+00, 2.500000e+00]> : tile<2xf32> // two values",
        "%s = addf %c, %c rounding<zero> : tile<2xf32>",
        "%t = cmpf less_than ordered %s, %c : tile<2xf32> -> tile<2xi1>",
        "%x, %y, %z = get_tile_block_id : tile<i32>",
        "%f = for %i in (%x to %n, step %y) : tile<i32> iter_values(%acc = %s) -> (tile<2xf32>) {",
        "// before return",
    ):
        assert needle in out, needle
    # Comments stay in order, attached to the code they precede.
    assert out.index("// before return") < out.index("return\n")
    assert roundtrip(out) == out


def test_parse_records_types_uses_and_spans():
    result = parse(KERNEL, "t.tileir")
    entry = result.module.entries()[0]
    body = entry.regions[0].blocks[0]
    const, addf = body.ops[0], body.ops[1]
    assert const.results[0].type == T.TileType((2,), T.FLOAT_TYPES["f32"])
    assert [op.name for op, _ in const.results[0].uses] == ["cuda_tile.addf", "cuda_tile.addf", "cuda_tile.cmpf"]
    assert addf.operands[0] is const.results[0]
    text = result.source.text
    assert text[addf.span.start : addf.span.end].startswith("%s = addf")
    assert text[addf.name_span.start : addf.name_span.end] == "addf"


def test_generic_form_round_trips():
    generic = roundtrip(KERNEL, generic=True)
    assert '"cuda_tile.addf"(%c, %c) <{rounding_mode = #cuda_tile.rounding<zero>}>' in generic
    assert roundtrip(generic, keep_comments=False) == roundtrip(KERNEL, keep_comments=False)


def test_errors_are_reported_with_ranges_and_parsing_continues():
    text = KERNEL.replace("%s = addf %c, %c rounding<zero>", "%s = addf %c %c").replace(
        "mulf %acc, %acc", "mulf %acc, %nope"
    )
    result = parse(text, "bad.tileir")
    errors = [d for d in result.diagnostics if d.is_error]
    assert len(errors) >= 2
    messages = " | ".join(d.message for d in errors)
    assert "expected ','" in messages
    assert "use of undeclared SSA value name '%nope'" in messages
    for d in errors:
        assert 0 <= d.span.start <= d.span.end <= len(text)
    # The ops after the first error are still there.
    entry = result.module.entries()[0]
    names = [op.mnemonic for op in entry.regions[0].blocks[0].ops]
    assert "cmpf" in names and "for" in names and "return" in names


def test_every_failed_op_is_reported_when_the_next_one_starts_where_it_failed():
    """`bogus1` fails at the next line's `bogus2` (the parser has read the name and looks at
    what follows): recovery starts from the failed op's line, so `bogus2` is an op of its
    own and every one of the four is reported (it was every other one)."""
    body = "\n".join(f"    bogus{i}" for i in range(1, 5))
    text = f"cuda_tile.module @m {{\n  entry @k() {{\n{body}\n    return\n  }}\n}}\n"
    errors = [d for d in parse(text, "four.tileir").diagnostics if d.is_error]
    assert [d.message.split("'")[1] for d in errors] == ["bogus1", "bogus2", "bogus3", "bogus4"]
    assert [text[d.span.start : d.span.end] for d in errors] == ["bogus1", "bogus2", "bogus3", "bogus4"]


_CLEAN = "  entry @{name}(%n: tile<i32>) {{\n    %c = constant <f32: 1.0> : tile<f32>\n    return\n  }}\n"


@pytest.mark.parametrize(
    ("half", "message", "at"),
    [
        # A kernel's `{` not closed: the error is at that `{`.
        ("  entry @k(%n: tile<i32>) {\n    %c = constant <f32: 1.0> : tile<f32>\n", "expected '}'", "{\n"),
        # An `(` not closed in the signature.
        ("  entry @k(%n: tile<i32>\n", "expected ')'", "\n"),
        # `%c =` last in a kernel left open: the next line's `entry` is not its op.
        ("  entry @k(%n: tile<i32>) {\n    %c =\n", "expected operation name", "\n"),
        # An unclosed `<`, which a dense literal looks for as far as it takes.
        ("  entry @k(%n: tile<i32>) {\n    %c = constant <f32\n", None, None),
    ],
)
def test_a_bracket_left_open_ends_at_the_next_kernel(half, message, at):
    """What a kernel typed without its closing brackets leaves: the error is where it is, and
    the kernels after it are still kernels of the module, verified (one took in every kernel
    after it, and the only error was at the module's `{`)."""
    from compiler.verify import verify

    text = (
        "cuda_tile.module @m {\n"
        + _CLEAN.format(name="a")
        + half
        + _CLEAN.format(name="b")
        + _CLEAN.format(name="c")
        + "}\n"
    )
    result = parse(text, "half.tileir")
    errors = [d for d in result.diagnostics if d.is_error]
    assert errors
    start = text.index(half)
    assert all(start <= d.span.start <= start + len(half) for d in errors), [d.message for d in errors]
    if message is not None:
        assert errors[0].message.startswith(message), errors[0].message
        assert text[errors[0].span.start :].startswith(at)
    kernels = result.module.ops[0].regions[0].blocks[0].ops
    names = [op.properties["sym_name"].value for op in kernels]
    assert names[0] == "a" and names[-2:] == ["b", "c"]
    # The kernels after it verify as they would without it.
    assert not [d for d in verify(result.module) if d.span.start > start + len(half)]


def test_a_kernel_nested_deeper_in_a_kernel_is_still_read_so():
    """The end of a kernel left open is taken at the next `entry` no further right than it;
    one indented deeper is nested in it, as MLIR's parser reads it (valid text stays valid)."""
    inner = "    entry @inner() {\n      return\n    }\n"
    text = "cuda_tile.module @m {\n  entry @outer() {\n" + inner + "    return\n  }\n}\n"
    result = parse(text, "nested.tileir")
    assert not result.diagnostics
    outer = result.module.ops[0].regions[0].blocks[0].ops[0]
    assert [op.name for op in outer.regions[0].blocks[0].ops] == ["cuda_tile.entry", "cuda_tile.return"]


@pytest.mark.parametrize(
    ("attribute", "message"),
    [
        ("foo = 2.5 : i64", "floating point value not valid for specified type"),  # was an internal error
        ("foo = 70000 : i16", "integer constant out of range for attribute"),
        ("foo = 128 : si8", "integer constant out of range for attribute"),
        ("foo = -1 : ui8", "negative integer literal not valid for unsigned integer type"),
    ],
)
def test_typed_number_attributes_are_checked_as_mlir_checks_them(attribute: str, message: str):
    """And the error inside the dictionary leaves the ops after it alone: recovery counts the
    brackets the failed op opened (the dictionary's `}` ended the kernel's block before)."""
    ok = "{a = 255 : i8, b = -128 : i8, c = 127 : si8, d = 255 : ui8}"
    op = '%{n} = "cuda_tile.exp"(%a) {attrs} : (!cuda_tile.tile<f32>) -> !cuda_tile.tile<f32>'
    text = (
        "cuda_tile.module @m {\n  entry @k() {\n    %a = constant <f32: 1.0> : tile<f32>\n"
        f"    {op.format(n='b', attrs='{' + attribute + '}')}\n    {op.format(n='c', attrs=ok)}\n"
        "    return\n  }\n}\n"
    )
    errors = [d for d in parse(text, "attr.tileir").diagnostics if d.is_error]
    assert [d.message for d in errors] == [message]
    assert text[errors[0].span.start :].startswith(attribute.split(" = ")[1])


def test_whitespace_around_the_x_of_a_dimension_list_is_taken_as_mlir_takes_it():
    """MLIR's lexer skips whitespace there (`tile<2 x f32>`, `tile=(16 x 64)`); we refused it."""
    text = (
        "cuda_tile.module @m {\n  entry @k(%p: tile<ptr<f32>>) {\n"
        "    %a = constant <f32: 1.0> : tile<2 x 4 xf32>\n"
        "    %t = make_tensor_view %p, shape = [16, 64], strides = [64, 1]"
        " : tensor_view<16 x 64 x f32, strides=[64,1]>\n"
        "    %v = make_partition_view %t : partition_view<tile=(16 x 64), tensor_view<16x 64xf32, strides=[64,1]>>\n"
        "    %w = make_partition_view %t : partition_view<tile=(8x 8), tensor_view<16x64xf32, strides=[64,1]>>\n"
        "    %z = make_partition_view %t : partition_view<tile=(2 x8), tensor_view<16x64xf32, strides=[64,1]>>\n"
        "    return\n  }\n}\n"
    )
    result = parse(text, "ws.tileir")
    assert not result.diagnostics, [d.message for d in result.diagnostics]
    printed = print_module(result.module)
    assert "tile<2x4xf32>" in printed and printed.count("tensor_view<16x64xf32, strides=[64,1]>") == 4
    assert "tile=(16x64)" in printed and "tile=(8x8)" in printed and "tile=(2x8)" in printed


def test_diagnostic_format_names_file_line_and_column():
    result = parse("cuda_tile.module @m {\n  entry @e() {\n    %0 = bogus_op : tile<i32>\n  }\n}\n", "k.tileir")
    (d,) = [d for d in result.diagnostics if d.is_error]
    assert d.format().startswith("k.tileir:3:10: error: custom op 'bogus_op' is unknown")


def test_unregistered_ops_need_the_flag():
    text = '%0 = "some.op"() : () -> tile<i32>\n'
    assert not parse(text, "u").ok
    result = parse(text, "u", ParseOptions(allow_unregistered=True))
    assert result.ok
    assert print_module(result.module) == '%0 = "some.op"() : () -> !cuda_tile.tile<i32>\n'


def test_module_wrapper_and_bare_entries():
    text = (
        "module attributes {nv_tileaa.compute_capability = 90 : i32, tt.num_warps = 4 : i32} {\n"
        "  entry @k() {\n    return\n  }\n}\n"
    )
    result = parse(text, "w")
    assert result.ok
    (wrapper,) = result.module.ops
    assert wrapper.name == "builtin.module"
    assert str(wrapper.attributes["tt.num_warps"]) == "4 : i32"
    assert result.module.entries()[0].properties["sym_name"].value == "k"


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.tileir")), ids=lambda p: p.name)
def test_examples_print_canonically(path: Path):
    text = path.read_text()
    once = roundtrip(text)
    assert roundtrip(once) == once


def test_samples_print_exactly_as_tileirdisasm():
    samples = sorted((SHARED / "samples").glob("*.tileir"))
    if not samples:
        pytest.skip("../shared/samples is not present")
    for path in samples:
        text = path.read_text()
        assert roundtrip(text) == text, path.name


def test_spec_simplified_grammar_is_accepted_with_warnings_and_fixes():
    text = (
        "cuda_tile.module @m {\n"
        "  global @g : tile<[2]xf32> = [1.0, 2.0]\n"
        "  func @k(%a: tile<[4x8]xb32>) -> () {\n"
        "    return\n"
        "  }\n"
        "}\n"
    )
    result = parse(text, "s.tileir")
    assert result.ok
    warnings = [d for d in result.diagnostics if d.code == "simplified-syntax"]
    assert len(warnings) == 5
    for d in warnings:
        (fix,) = d.fixes
        (edit,) = fix.edits
        assert edit.span == d.span
    # Applying the `func` fix gives canonical syntax.
    func = next(d for d in warnings if "`func`" in d.message)
    assert text[func.span.start : func.span.end] == "func"
    assert func.fixes[0].edits[0].new_text == "entry"
    out = print_module(result.module)
    assert "global @g <f32: [1.000000e+00, 2.000000e+00]> : tile<2xf32>" in " ".join(out.split())
    assert "entry @k(%a: tile<4x8xi32>) {" in out
    assert parse(out, "o").diagnostics == []

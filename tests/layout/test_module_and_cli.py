"""Extents found in a module (constants, `assume bounded`), pictures, and `tileir layout`."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from compiler.cli import main
from compiler.layout import layout_data, layout_of_type, svg_picture, text_picture, view_layout_of
from compiler.text import parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

KERNEL = """entry @k(%p: tile<ptr<f32>>, %m: tile<i32>) {
  %n = assume bounded<0, 4096>, %m : tile<i32>
  %c = constant <i32: 100> : tile<i32>
  %tv = make_tensor_view %p, shape = [%n, %c], strides = [%c, 1] : tile<i32> -> tensor_view<?x?xf32, strides=[?,1]>
  %pv = make_partition_view %tv : partition_view<tile=(64x32), tensor_view<?x?xf32, strides=[?,1]>>
  return
}
"""

SVG = "{http://www.w3.org/2000/svg}"


def value_named(module, name):
    for op in module.walk():
        for r in op.results:
            if r.name == name:
                return r
    raise KeyError(name)


def test_extents_from_constants_and_assume_bounds():
    module = parse(KERNEL).module
    layout = view_layout_of(value_named(module, "pv"))
    assert layout.tensor_shape == (None, 100)  # dim 1 is the constant 100
    assert layout.index_shape == (None, 4)  # ceil(100 / 32)
    assert layout.index_bounds == (64, 4)  # ceil(4096 / 64) from bounded<0, 4096>
    assert layout.index_exprs[0] == "ceildiv(S0, 64)"
    chosen = view_layout_of(value_named(module, "pv"), extents={0: 129})
    assert chosen.index_shape == (3, 4)
    tv = view_layout_of(value_named(module, "tv"))
    assert tv.kind == "tensor_view" and tv.index_shape == (None, 100)
    assert view_layout_of(value_named(module, "c")) is None


def test_text_picture_marks_partial_tiles_and_transpose():
    t = parse("!t = !cuda_tile.partition_view<tile=(4x2), tensor_view<6x16xf32, strides=[16,1]>, dim_map=[1, 0]>\n")
    layout = layout_of_type(t.module.type_aliases["t"])
    # index 0 along dim 1: 16/4 = 4; index 1 along dim 0: 6/2 = 3, no partial tiles.
    picture = text_picture(layout)
    rows = [line for line in picture.splitlines() if "(" in line and ")" in line and "cells" not in line]
    assert len(rows) == 3
    assert rows[0].split()[-4:] == ["(0,0)", "(1,0)", "(2,0)", "(3,0)"]  # transposed labels
    assert "*" not in picture
    t2 = parse("!t = !cuda_tile.partition_view<tile=(4), tensor_view<10xf32, strides=[1]>>\n")
    line = [x for x in text_picture(layout_of_type(t2.module.type_aliases["t"])).splitlines() if "(0)" in x][0]
    assert line.split() == ["(0)", "(1)", "(2)*"]


def test_text_picture_caps_large_spaces():
    t = parse("!t = !cuda_tile.partition_view<tile=(2x2), tensor_view<1000x1000xf32, strides=[1000,1]>>\n")
    picture = text_picture(layout_of_type(t.module.type_aliases["t"]))
    assert "(499,499)" in picture and "(8,0)" not in picture and "..." in picture
    assert len(picture.splitlines()) < 16


def test_svg_well_formed_with_one_rect_per_tile():
    t = parse("!t = !cuda_tile.partition_view<tile=(4x2), tensor_view<64x16xf32, strides=[16,1]>>\n")
    layout = layout_of_type(t.module.type_aliases["t"])
    svg = svg_picture(layout, highlight=(3, 7))
    root = ET.fromstring(svg)
    classes = [r.get("class") for r in root.iter(f"{SVG}rect")]
    assert sum(c.split()[0] == "tile" for c in classes) == 16 * 8
    assert classes.count("highlight") == 1 and classes.count("tensor") == 1
    assert svg == svg_picture(layout, highlight=(3, 7))  # deterministic
    assert "<script" not in svg and "href" not in svg
    with pytest.raises(ValueError):
        svg_picture(layout, highlight=(16, 0))
    # Partial tiles: 10 elements in tiles of 4 -> 3 tiles, the last one partial.
    t2 = parse("!t = !cuda_tile.strided_view<tile=(4), traversal_strides=[4], tensor_view<10xf32, strides=[1]>>\n")
    root2 = ET.fromstring(svg_picture(layout_of_type(t2.module.type_aliases["t"])))
    kinds = [r.get("class") for r in root2.iter(f"{SVG}rect") if r.get("class", "").startswith("tile")]
    assert kinds == ["tile", "tile", "tile partial"]


def test_layout_data_is_json_and_complete():
    import json

    t = parse("!t = !cuda_tile.partition_view<tile=(4), tensor_view<10xf32, strides=[1]>>\n")
    data = layout_data(layout_of_type(t.module.type_aliases["t"]))
    json.dumps(data)
    assert data["index_shape"] == [3]
    assert [tile["elements"] for tile in data["tiles"]] == [[[0, 4]], [[4, 8]], [[8, 10]]]
    assert [tile["padded"] for tile in data["tiles"]] == [False, False, True]


def test_cli_layout_happy_path(capsys, tmp_path):
    out_svg = tmp_path / "pa.svg"
    rc = main(
        ["layout", str(EXAMPLES / "vector_add.tileir"), "--value", "pa", "--extent", "0=4000", "--svg", str(out_svg)]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert "index space: 4" in out  # ceil(4000 / 1024)
    assert "(3)*" in out
    ET.fromstring(out_svg.read_text(encoding="utf-8"))


def test_cli_layout_refuses_an_empty_extent_and_warns_of_a_dimension_no_view_has(capsys):
    """0 ended in an internal error (the picture's width was the max of nothing); a dimension
    past every view's rank was ignored without a word (now a warning: one command line may
    serve files of several ranks)."""
    vadd = str(EXAMPLES / "vector_add.tileir")
    assert main(["layout", vadd, "--value", "pa", "--extent", "0=0"]) == 2
    assert "--extent 0=0: the extent must be at least 1" in capsys.readouterr().err
    assert main(["layout", vadd, "--extent", "5=4"]) == 0
    assert "warning: --extent 5=4: no view here has a tensor dimension 5" in capsys.readouterr().err


def test_an_empty_tensor_is_pictured_as_no_tiles():
    from compiler.layout import view_layout_of
    from compiler.layout.picture import svg_picture, text_picture
    from compiler.runtime import load_module

    (entry,) = load_module(EXAMPLES / "vector_add.tileir").entries()
    view = next(v for op in entry.walk() for v in op.results if "partition_view" in str(v.type))
    layout = view_layout_of(view, {0: 0})
    assert text_picture(layout) == "no tiles: the tensor is empty (extent 0 in dim 0), index space 0"
    ET.fromstring(svg_picture(layout))


def test_cli_layout_lists_every_view(capsys):
    assert main(["layout", str(EXAMPLES / "vector_add.tileir")]) == 0
    out = capsys.readouterr().out
    for name in ("%va", "%vb", "%vc", "%pa", "%pb", "%pc"):
        assert f"{name} (" in out


def test_cli_layout_of_bytecode_names_views_as_disasm_does(capsys, tmp_path):
    """Bytecode keeps no value names: `tileir layout` calls each view what `tileir disasm`
    prints, and --value finds it by that name."""
    bc = tmp_path / "v.tileirbc"
    assert main(["asm", str(EXAMPLES / "vector_add.tileir"), "-o", str(bc)]) == 0
    assert main(["disasm", str(bc)]) == 0
    disasm = capsys.readouterr().out
    printed = [line.split(" = ")[0].strip() for line in disasm.splitlines() if "_view %" in line]
    assert len(printed) == 6 and "%None" not in printed
    assert main(["layout", str(bc)]) == 0
    out = capsys.readouterr().out
    assert [line.split(" (")[0] for line in out.splitlines() if line.startswith("%")] == printed
    assert main(["layout", str(bc), "--value", printed[-1].lstrip("%"), "--extent", "0=4000"]) == 0
    assert "index space: 4" in capsys.readouterr().out


def test_cli_layout_of_damaged_bytecode_names_the_broken_type(capsys, tmp_path):
    """A tensor extent no text can spell (negative, from a damaged varint; found by the faces
    fuzzer) is refused where the type table holds it, in tileirdisasm's words, not drawn."""
    from compiler.bytecode import BytecodeError, read_bytecode, write_bytecode
    from compiler.ir.types import TensorViewType

    module = parse((EXAMPLES / "vector_add.tileir").read_text(), "v.tileir").module
    for op in module.walk():
        for r in op.results:
            if isinstance(r.type, TensorViewType):  # a new type: types are shared, never changed
                r.type = TensorViewType(r.type.element, (-(1 << 62),), r.type.strides)
    bc = tmp_path / "bad.tileirbc"
    bc.write_bytes(write_bytecode(module))
    message = "dimensions must have strictly positive constant sizes but got [-4611686018427387904]"
    with pytest.raises(BytecodeError, match=re.escape(message)):
        read_bytecode(bc.read_bytes())
    assert main(["layout", str(bc)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.err.strip().endswith(message), captured.err


@pytest.mark.parametrize(
    ("args", "status", "message"),
    [
        (["--extent", "x=1"], 2, "expected DIM=N"),
        (["--value", "nope"], 2, "no view value named %nope"),
        (["--line", "1"], 2, "no view value is defined on line 1"),
        (["--svg", "never.svg"], 2, "--svg draws one view"),
        (["--value", "pa", "--line", "3"], 2, "cannot be used together"),
    ],
)
def test_cli_layout_bad_usage(capsys, args, status, message):
    rc = main(["layout", str(EXAMPLES / "vector_add.tileir"), *args])
    err = capsys.readouterr().err
    assert rc == status
    assert message in err and "Traceback" not in err


def test_cli_layout_bad_files(capsys, tmp_path):
    assert main(["layout", str(tmp_path / "missing.tileir")]) == 2
    garbage = tmp_path / "g.tileir"
    garbage.write_bytes(b"entry @k( %% \x00 garbage")
    assert main(["layout", str(garbage)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "has errors" in err

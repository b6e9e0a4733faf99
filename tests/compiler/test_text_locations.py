# ruff: noqa: E501  (expected outputs are verbatim printer output)
"""Locations: aliases used before they are defined (as --mlir-print-debuginfo prints them),
and printing with debug info in MLIR's alias order."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.cli import main
from compiler.ir import attributes as A
from compiler.text import PrintOptions, parse, print_module

REPO = Path(__file__).resolve().parents[2]
DEBUG_INFO = REPO.parent / "shared" / "conformance" / "cuda-tile" / "test" / "Bytecode" / "debug_info.mlir"

# Written as `cuda-tile-opt --mlir-print-debuginfo` prints: every alias after the ops, ordered
# by depth (1 + the deepest alias inside), then name, then first use in print order.
PRINTED = """\
cuda_tile.module @kernels {
  entry @k() {
    %c = constant <i32: 42> : tile<i32> loc(#loc6)
    %d = constant <i32: 7> : tile<i32> loc(#loc4)
    return loc(#loc7)
  } loc(#loc5)
} loc(#loc)
#di_file = #cuda_tile.di_file<"k.py" in "/src">
#loc = loc(unknown)
#loc1 = loc("k.py":8:3)
#loc2 = loc("k.py":10:10)
#loc3 = loc("k.py":12:5)
#di_compile_unit = #cuda_tile.di_compile_unit<file = #di_file>
#loc4 = loc(callsite(#loc2 at #loc3))
#di_subprogram = #cuda_tile.di_subprogram<file = #di_file, line = 8, name = "k", linkageName = "k", compileUnit = #di_compile_unit, scopeLine = 8>
#loc5 = #cuda_tile.di_loc<#loc1 in #di_subprogram>
#loc6 = #cuda_tile.di_loc<#loc2 in #di_subprogram>
#loc7 = #cuda_tile.di_loc<#loc3 in #di_subprogram>
"""


def _parse(text: str):
    result = parse(text, "t.mlir")
    assert not result.diagnostics, [d.format() for d in result.diagnostics]
    return result.module


def test_forward_location_aliases_resolve() -> None:
    module = _parse(PRINTED)
    top = module.body.ops[0]
    assert isinstance(top.location, A.UnknownLoc)
    entry = top.regions[0].blocks[0].ops[0]
    assert isinstance(entry.location, A.DILocAttr)
    assert entry.location.source == A.FileLineColLoc("k.py", 8, 3)
    scope = entry.location.scope
    assert isinstance(scope, A.DIAttr) and scope.kind == "di_subprogram"
    c, d, ret = entry.regions[0].blocks[0].ops
    assert c.location == A.DILocAttr(A.FileLineColLoc("k.py", 10, 10), scope)
    assert d.location == A.CallSiteLoc(A.FileLineColLoc("k.py", 10, 10), A.FileLineColLoc("k.py", 12, 5))
    assert ret.location.source == A.FileLineColLoc("k.py", 12, 5)


def test_print_debuginfo_reproduces_the_file() -> None:
    assert print_module(_parse(PRINTED), PrintOptions(debuginfo=True)) == PRINTED


def test_aliases_defined_in_any_order() -> None:
    # Definitions referring to aliases defined after them, all after the ops.
    text = """\
cuda_tile.module @kernels {
  entry @k() {
    return loc(#ret)
  } loc(#fn)
}
#fn = #cuda_tile.di_loc<#here in #sp>
#ret = #cuda_tile.di_loc<loc("k.py":2:1) in #sp>
#sp = #cuda_tile.di_subprogram<file = #file, line = 1, name = "k", linkageName = "k", compileUnit = #cu, scopeLine = 1>
#cu = #cuda_tile.di_compile_unit<file = #file>
#here = loc("k.py":1:1)
#file = #cuda_tile.di_file<"k.py" in "/src">
"""
    module = _parse(text)
    entry = module.body.ops[0].regions[0].blocks[0].ops[0]
    assert entry.location.source == A.FileLineColLoc("k.py", 1, 1)
    assert entry.location.scope.kind == "di_subprogram"
    out = print_module(module, PrintOptions(debuginfo=True))
    assert out.endswith(
        "#loc3 = #cuda_tile.di_loc<#loc1 in #di_subprogram>\n#loc4 = #cuda_tile.di_loc<#loc2 in #di_subprogram>\n"
    )
    assert "} loc(#loc3)\n} loc(#loc)\n" in out
    # Printed without debug info, the aliases are gone and the module is the same.
    assert print_module(module) == "cuda_tile.module @kernels {\n  entry @k() {\n    return\n  }\n}\n"


def test_undefined_alias_is_still_an_error() -> None:
    result = parse("cuda_tile.module @m {\n  entry @k() {\n    return loc(#nope)\n  }\n}\n", "t.mlir")
    assert any("undefined symbol alias id 'nope'" in d.message for d in result.diagnostics)


def test_broken_forward_definition_reported_once() -> None:
    text = 'cuda_tile.module @m {\n  entry @k() {\n    return loc(#bad)\n  }\n}\n#bad = loc("k.py":1:)\n'
    messages = [d.message for d in parse(text, "t.mlir").diagnostics]
    assert len([m for m in messages if "expected" in m]) == 1, messages


def test_comments_survive_a_forward_reference() -> None:
    text = """\
// head
cuda_tile.module @m {
  // inside
  entry @k() {
    return loc(#l)
  }
}
// tail
#l = loc("k.py":1:1)
"""
    module = parse(text, "t.mlir").module
    assert [c.text for c in module.comments] == ["// head", "// inside", "// tail"]


def test_ops_without_location_print_unknown() -> None:
    module = _parse("entry @k() {\n  %0 = make_token : token\n  return\n}\n")
    out = print_module(module, PrintOptions(debuginfo=True))
    assert out == (
        "entry @k() {\n  %0 = make_token : token loc(#loc)\n  return loc(#loc)\n} loc(#loc)\n#loc = loc(unknown)\n"
    )


def test_generic_block_arguments_print_their_locations_first() -> None:
    # Block-argument locations cannot be deferred: MLIR prints their aliases before the ops.
    text = """\
"cuda_tile.entry"() <{function_type = () -> (), sym_name = "k"}> ({
  "cuda_tile.return"() : () -> () loc("k.py":2:1)
}) : () -> () loc("k.py":1:1)
"""
    module = _parse(text)
    out = print_module(module, PrintOptions(debuginfo=True, generic=True))
    assert out.endswith('#loc = loc("k.py":1:1)\n#loc1 = loc("k.py":2:1)\n')


def test_shared_debug_info_round_trip(tmp_path: Path, capsys) -> None:
    if not DEBUG_INFO.exists():
        pytest.skip("../shared is absent")
    assert main(["opt", str(DEBUG_INFO), "--mlir-print-debuginfo"]) == 0
    out = capsys.readouterr().out
    body = [line for line in DEBUG_INFO.read_text().splitlines() if line and not line.startswith("//")]
    assert out.splitlines() == body

"""Debug-info scopes of kernels and ops, and the struct syntax of the debug-info attributes."""

from __future__ import annotations

from compiler.verify import VerifyOptions, check_text

HEADER = """#file = #cuda_tile.di_file<"foo.py" in "/tmp/">
#cu = #cuda_tile.di_compile_unit<file = #file>
#sp = #cuda_tile.di_subprogram<file = #file, line = 1, name = "test", linkageName = "test", compileUnit = #cu>
#other = #cuda_tile.di_subprogram<file = #file, line = 9, name = "o", linkageName = "o", compileUnit = #cu>
#block = #cuda_tile.di_lexical_block<scope = #sp, file = #file, line = 3>
"""


def _diags(body: str, name: str = "test", fn_loc: str = ""):
    text = HEADER + f"cuda_tile.module @m {{\n  entry @{name}() {{\n{body}  }}{fn_loc}\n}}\n"
    _, diags = check_text(text, "t.mlir", VerifyOptions(keep_going=False), allow_unregistered=True)
    return [(d.message, d.location()[1], d.code) for d in diags]


SP_LOC = ' loc(#cuda_tile.di_loc<loc("f.py":1:1) in #sp>)'


def test_consistent_scopes_are_fine() -> None:
    body = '    return loc(#cuda_tile.di_loc<loc("f.py":2:1) in #block>)\n'
    assert _diags(body, fn_loc=SP_LOC) == []
    assert _diags("    return\n") == []


def test_function_scope_must_be_a_subprogram() -> None:
    (d,) = _diags("    return\n", fn_loc=' loc(#cuda_tile.di_loc<loc("f.py":1:1) in #block>)')
    assert d[0].startswith("'cuda_tile.entry' op invalid function debug info scope: #cuda_tile.di_lexical_block<")
    assert d[0].endswith("Function location must have cuda_tile.di_subprogram debug info scope.")
    assert d[1:] == (7, "debug-info")


def test_function_name_must_match_linkage_name() -> None:
    (d,) = _diags("    return\n", name="foo", fn_loc=SP_LOC)
    assert d[0].endswith('. Function name "foo" does not match subprogram scope linkage name "test".')


def test_op_scope_without_function_scope() -> None:
    (d,) = _diags('    return loc(#cuda_tile.di_loc<loc("f.py":2:1) in #sp>)\n')
    assert d[0].startswith("'cuda_tile.return' op invalid operation debug info scope: #cuda_tile.di_subprogram<")
    assert d[0].endswith("Operation has debug info scope, but function debug info scope is undefined.")
    assert d[1] == 8


def test_op_scope_must_match_function_scope() -> None:
    (d,) = _diags('    return loc(#cuda_tile.di_loc<loc("f.py":2:1) in #other>)\n', fn_loc=SP_LOC)
    assert d[0].startswith("invalid operation debug info scope: #cuda_tile.di_subprogram<")
    assert "Operation debug info scope does not match function debug info scope: " in d[0]


def test_struct_parameters() -> None:
    def parse_error(attr: str) -> str:
        text = f'#file = #cuda_tile.di_file<"foo.py" in "/tmp/">\n#x = {attr}\n'
        _, diags = check_text(text, "t.mlir", VerifyOptions(keep_going=False))
        assert len(diags) == 1
        return diags[0].message

    assert parse_error("#cuda_tile.di_compile_unit<>") == "expected a parameter name in struct"
    assert parse_error("#cuda_tile.di_lexical_block<file = #file, line = 1>") == (
        "struct is missing required parameter: scope"
    )
    assert parse_error("#cuda_tile.di_compile_unit<file = #file, file = #file>") == (
        "duplicate or unknown struct parameter name: file"
    )

"""Completion and inspection inside `%%tileir` cells (tile_kernel.editor, on the language
server's code), and through IPython's completer with the extension alone."""

from __future__ import annotations

import pytest

pytest.importorskip("lsprotocol", reason="the `kernel` extra (lsprotocol, pygls) is not installed")

from tile_kernel import editor  # noqa: E402

from .conftest import ROOT, Shell, example  # noqa: E402

CELL = "%%tileir vadd --run vector_add\n" + example("vector_add")


def cursor_after(code: str, text: str) -> int:
    return code.index(text) + len(text)


def test_op_names_with_their_snippets() -> None:
    pos = cursor_after(CELL, "%sum = ad")
    found = editor.complete(CELL, pos)
    assert found is not None
    labels = [m.label for m in found.matches]
    assert labels[:2] == ["addf", "addi"]
    assert all(label.startswith("ad") for label in labels)
    addf = found.matches[0]
    assert addf.text == "addf %lhs, %rhs : type"  # the snippet, spelled out
    assert addf.type == "function" and addf.signature == "cuda_tile.addf (since 13.1)"
    assert CELL[found.start : found.end] == "ad"


def test_values_in_scope() -> None:
    pos = cursor_after(CELL, "%sum = addf %x, %")
    found = editor.complete(CELL, pos)
    assert found is not None
    labels = [m.label for m in found.matches]
    assert "%x" in labels and "%y" in labels and "%a" in labels
    assert "%sum" not in labels  # defined by this very op
    x = next(m for m in found.matches if m.label == "%x")
    assert x.type == "variable" and x.signature == "tile<1024xf32>"


def test_types_and_enum_keywords() -> None:
    code = "%%tileir\ncuda_tile.module @m {\n  entry @k(%p: tile<f32>) {\n    %x = addf %p, %p "
    found = editor.complete(code, len(code))
    assert found is not None
    labels = {m.label for m in found.matches}
    assert {"rounding<nearest_even>", "rounding<zero>", "flush_to_zero"} <= labels
    found = editor.complete(code + "rounding<", len(code) + len("rounding<"))
    assert found is not None and {"nearest_even", "zero"} <= {m.label for m in found.matches}
    code = "%%tileir\ncuda_tile.module @m {\n  entry @k(%p: tile<"
    found = editor.complete(code, len(code))
    assert found is not None and "f32" in {m.label for m in found.matches}


def test_not_a_tileir_cell_or_on_the_magic_line() -> None:
    assert editor.complete("import os\nos.pa", 15) is None
    assert editor.complete("%%tileirx\nad", 12) is None
    assert editor.complete(CELL, 5) is None  # the magic line is IPython's
    assert editor.inspect("x = 1", 2) is None


def test_inspect_op_value_and_type() -> None:
    data = editor.inspect(CELL, cursor_after(CELL, "%sum = add"))
    assert data is not None
    assert "cuda_tile.addf" in data["text/markdown"] and "cuda_tile.addf" in data["text/plain"]
    # Shift-Tab right after a word inspects that word.
    data = editor.inspect(CELL, cursor_after(CELL, "%sum = addf"))
    assert data is not None and "cuda_tile.addf" in data["text/plain"]
    data = editor.inspect(CELL, cursor_after(CELL, "%sum = addf %"))
    assert data is not None and "tile<1024xf32>" in data["text/plain"]
    # A view type: its index space.
    data = editor.inspect(CELL, cursor_after(CELL, "%pa = make_partition_view %va : partition_"))
    assert data is not None and "index space" in data["text/plain"]


def test_replies_have_the_protocol_shape() -> None:
    reply = editor.complete_reply(CELL, cursor_after(CELL, "%sum = ad"))
    assert reply is not None
    assert reply["status"] == "ok" and reply["matches"][0] == "addf"
    types = reply["metadata"]["_jupyter_types_experimental"]
    assert len(types) == len(reply["matches"])
    assert types[0] == {
        "start": reply["cursor_start"],
        "end": reply["cursor_end"],
        "text": "addf %lhs, %rhs : type",
        "type": "function",
        "signature": "cuda_tile.addf (since 13.1)",
    }
    reply = editor.inspect_reply(CELL, cursor_after(CELL, "// c[i]"))
    assert reply == {"status": "ok", "found": False, "data": {}, "metadata": {}}


def test_broken_cells_still_complete() -> None:
    code = (
        "%%tileir\ncuda_tile.module @m {\n  entry @k(%p: tile<f32>) {\n    %x = addf %p, %nope : tile<f32>\n    %y = mu"
    )
    found = editor.complete(code, len(code))
    assert found is not None and "mulf" in {m.label for m in found.matches}


def test_ipython_completer_with_the_extension_alone(shell: Shell) -> None:
    from IPython.core.completer import provisionalcompleter

    pos = cursor_after(CELL, "%sum = ad")
    with provisionalcompleter():
        completions = list(shell.ip.Completer.completions(CELL, pos))
    texts = [c.text for c in completions]
    assert texts[:2] == ["addf", "addi"]
    assert all(c.start == pos - 2 and c.end == pos for c in completions)
    # Python's matchers are suppressed inside the cell.
    assert "abs" not in texts
    with provisionalcompleter():
        python = [c.text for c in shell.ip.Completer.completions("import os\nos.pa", 15)]
    assert "path" in python or "os.path" in python


def test_magic_line_is_inspected_by_ipython() -> None:
    # None: the kernel falls back to IPython, which shows the magic's docstring.
    assert editor.inspect_reply(CELL, 3) is None
    assert editor.inspect_reply(CELL, CELL.index("\n")) is None
    assert editor.inspect_reply(CELL, cursor_after(CELL, "%sum = add")) is not None


def test_magic_line_completes_options_values_and_names(shell: Shell) -> None:
    shell.run("%%tileir vadd_done\n" + example("vector_add"))
    ns = shell.ns

    def labels(code: str) -> list[str]:
        found = editor.complete(code, len(code), ns)
        assert found is not None, code
        assert found.end == len(code)
        return [m.label for m in found.matches]

    assert labels("%%tileir m --ba") == ["--backend"]
    assert set(labels("%tileir vadd_done --r")) == {"--run", "--rtol"}
    assert "--name" in labels("%tileir x.tileir --")  # the line magic's own option
    assert "--name" not in labels("%%tileir m --")
    assert labels("%%tileir m --backend c") == ["cpu"]
    assert labels("%%tileir m --show ir,by") == ["bytecode"]
    assert labels("%tileir vadd_d") == ["vadd_done"]
    assert labels("%tileir vadd_done --run vec") == ["vector_add"]
    assert labels(f"%tileir {ROOT}/examples/vector_a") == [f"{ROOT}/examples/vector_add.tileir"]
    assert editor.complete("%tileir vadd_done --nosuch", 26, ns) is None  # nothing: IPython's turn


def test_magic_line_completes_through_ipython_and_the_kernel(shell: Shell) -> None:
    from IPython.core.completer import provisionalcompleter

    shell.run("%%tileir vadd_done\n" + example("vector_add"))
    for code, expected in (("%%tileir m --ba", "--backend"), ("%tileir vadd_d", "vadd_done")):
        with provisionalcompleter():
            texts = [c.text for c in shell.ip.Completer.completions(code, len(code))]
        assert expected in texts, (code, texts)
        reply = editor.complete_reply(code, len(code), shell.ns)
        assert reply is not None and expected in reply["matches"]

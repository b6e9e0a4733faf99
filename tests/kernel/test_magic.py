"""`%%tileir` and `%tileir` through a real IPython InteractiveShell: every option, bad options,
cells with syntax and verifier errors (rendered, nothing bound, no traceback), and kernels
launched with NumPy arrays and checked against NumPy."""

from __future__ import annotations

import re

import numpy as np
import pytest

from compiler.runtime import LaunchError

from .conftest import ROOT, CellRun, Shell, example, needs_triton

VECTOR_ADD = example("vector_add")


def no_traceback(run: CellRun) -> None:
    everything = run.text() + run.html()
    assert "Traceback" not in everything
    assert 'File "' not in everything


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    # What CI has: these tests run the CPU interpreter everywhere (test_magic_gpu.py runs cells
    # on a GPU).
    monkeypatch.setenv("TILEIR_NO_GPU", "1")


# --------------------------------------------------------------------------------------------
# Binding


def test_cell_binds_the_module_under_its_symbol(shell: Shell, arrays) -> None:
    run = shell.run("%%tileir\n" + VECTOR_ADD)
    assert run.ok, run.text()
    from tile_kernel.module import TileModule

    mod = shell.ns["vector_add"]
    assert isinstance(mod, TileModule)
    assert "vector_add = Tile IR module: @vector_add(%a: tile<ptr<f32>>" in run.text()
    a, b, c = arrays
    result = mod.vector_add[4](a, b, c, cutile_args=True)
    assert result.backend == "cpu" and result.grid == (4, 1, 1)
    np.testing.assert_array_equal(c, a + b)


def test_cell_binds_the_name_given(shell: Shell, arrays) -> None:
    run = shell.run("%%tileir vadd_named\n" + VECTOR_ADD)
    assert run.ok
    a, b, c = arrays
    n = a.size
    mod = shell.ns["vadd_named"]
    # The kernel's own calling convention: pointer, length, stride per array.
    mod.vector_add[(n + 1023) // 1024](a, n, 1, b, n, 1, c, n, 1)
    np.testing.assert_array_equal(c, a + b)
    assert mod["vector_add"] is mod.vector_add
    assert "vector_add" in dir(mod)


def test_bare_entry_binds_under_the_kernel_name(shell: Shell) -> None:
    body = VECTOR_ADD.split("cuda_tile.module @vector_add {", 1)[1].rsplit("}", 1)[0]
    run = shell.run("%%tileir\n" + body.replace("@vector_add(", "@bare_add("))
    assert run.ok, run.text()
    assert "bare_add" in shell.ns


def test_not_a_python_name_is_a_usage_error(shell: Shell) -> None:
    run = shell.run("%%tileir\n" + VECTOR_ADD.replace("module @vector_add", 'module @"odd-name"'))
    assert not run.ok
    assert "is not a Python name" in run.text()
    no_traceback(run)


# --------------------------------------------------------------------------------------------
# Diagnostics


SYNTAX_ERROR = """%%tileir broken_syntax
cuda_tile.module @broken_syntax {
  entry @k() {
    %x = addf %y, %y : tile<f32>
    return
  }
}
"""

VERIFIER_ERROR = """%%tileir broken_types
cuda_tile.module @broken_types {
  entry @k(%p: tile<f32>, %q: tile<f16>) {
    %x = addf %p, %q : tile<f32>
    return
  }
}
"""


def test_syntax_error_is_rendered_and_binds_nothing(shell: Shell) -> None:
    shell.ns.pop("broken_syntax", None)
    run = shell.run(SYNTAX_ERROR)
    assert not run.ok
    assert "broken_syntax" not in shell.ns
    count = run.result.execution_count
    # Plain text: the CLI's form, with the line numbered as the cell numbers it (magic line = 1).
    assert f"In[{count}]:4:15: error: use of undeclared SSA value name '%y'" in run.text()
    assert "    %x = addf %y, %y : tile<f32>" in run.text()
    assert "^~" in run.text()
    # HTML: the message, the line number, the source line and the caret.
    html = run.html()
    assert "tileir-diagnostics" in html and "line 4, column 15" in html and "^~" in html
    assert "TileIRError: 1 error in the Tile IR; nothing was bound" in run.stdout
    assert isinstance(run.result.error_in_exec, Exception)
    no_traceback(run)


def test_cell_out_of_the_history_is_not_named_after_another(shell: Shell) -> None:
    from IPython.utils.capture import capture_output

    shell.run("1 + 1")  # a numbered cell before
    with capture_output() as captured:
        result = shell.ip.run_cell(SYNTAX_ERROR, store_history=False)
    assert not result.success
    text = "\n".join(o.data.get("text/plain", "") for o in captured.outputs)
    assert "<cell>:4:15: error: use of undeclared SSA value name '%y'" in text
    assert "In[" not in text
    run = shell.run(SYNTAX_ERROR)  # and the next numbered cell has its own number
    assert f"In[{run.result.execution_count}]:4:15: error" in run.text()


def test_verifier_error_is_rendered_and_binds_nothing(shell: Shell) -> None:
    shell.ns.pop("broken_types", None)
    run = shell.run(VERIFIER_ERROR)
    assert not run.ok
    assert "broken_types" not in shell.ns
    text = run.text()
    assert ":4:" in text and "error:" in text
    assert "nothing was bound" in run.stdout
    no_traceback(run)


def test_an_error_keeps_the_previous_binding(shell: Shell) -> None:
    shell.run("%%tileir keep_me\n" + VECTOR_ADD)
    before = shell.ns["keep_me"]
    shell.run("%%tileir keep_me\n" + VECTOR_ADD.replace("%sum = addf %x, %y", "%sum = addf %x, %zz"))
    assert shell.ns["keep_me"] is before


# --------------------------------------------------------------------------------------------
# --run, --args, --grid, --cutile-args, --check, --time, --backend


RUN = "%%tileir vadd_run --run vector_add --grid 4 --args a,b,c --cutile-args"


def test_run_and_check_against_numpy(shell: Shell, arrays) -> None:
    a, b, c = arrays
    run = shell.run(f"{RUN} --check 'arg2 = arg0 + arg1'\n{VECTOR_ADD}")
    assert run.ok, run.text()
    np.testing.assert_array_equal(c, a + b)
    text = run.text()
    assert "ran @vector_add  grid 4x1x1 (4 tile blocks)  backend cpu" in text
    assert "arg2  f32[4000]" in text
    assert "check arg2 = arg0 + arg1: ok (4000 elements, max abs error 0; rtol 1e-05, atol 1e-06)" in text
    # The result view: result and reference heat maps, and where they differ.
    assert "tileir-result" in run.html() and "|result - reference|" in run.html()
    no_traceback(run)


def test_run_report_summarizes_arrays_in_a_tuple(shell: Shell, arrays) -> None:
    run = shell.run("%%tileir vadd_tuple --run --grid 4 --args (a,b,c) --cutile-args\n" + VECTOR_ADD)
    assert run.ok, run.text()
    text = run.text()
    assert "  arg0  tuple of 3\n  arg0[0]  f32[4000]  min " in text and "  arg0[2]  f32[4000]  min " in text
    assert "array(" not in text


def test_auto_backend_says_the_cpu_interpreter_ran(shell: Shell, arrays) -> None:
    run = shell.run(f"{RUN} --backend auto\n{VECTOR_ADD}")
    assert run.ok
    assert "no GPU on this machine: the CPU interpreter ran (backend auto -> cpu)" in run.text()
    run = shell.run(f"{RUN}\n{VECTOR_ADD}")  # auto is the default
    assert "the CPU interpreter ran" in run.text()


def test_cpu_backend_named(shell: Shell, arrays) -> None:
    run = shell.run(f"{RUN} --backend cpu\n{VECTOR_ADD}")
    assert run.ok
    assert "backend cpu" in run.text()
    assert "auto -> cpu" not in run.text()


@pytest.mark.parametrize("backend", ["triton", "tileiras"])
def test_gpu_backends_need_a_gpu(shell: Shell, arrays, backend: str) -> None:
    run = shell.run(f"{RUN} --backend {backend}\n{VECTOR_ADD}")
    assert not run.ok
    assert f"backend '{backend}' needs an NVIDIA GPU and this machine has none" in run.text()
    assert "TileIRError: --run failed" in run.stdout
    no_traceback(run)


def test_auto_with_a_gpu_but_no_cuda_core_runs_on_the_cpu_and_says_why(
    shell: Shell, arrays, monkeypatch: pytest.MonkeyPatch
) -> None:
    import compiler.runtime.backends as backends
    import tile_kernel.module as module

    monkeypatch.setattr(module, "gpu_present", lambda: True)
    monkeypatch.setattr(backends, "gpu_present", lambda: True)
    monkeypatch.setattr(backends, "gpu_launcher_missing", lambda: "cuda.core is not installed (pip install cuda-core)")
    run = shell.run(f"{RUN} --backend triton\n{VECTOR_ADD}")
    assert "the triton backend launches through cuda.core: cuda.core is not installed" in run.text()
    run = shell.run(f"{RUN} --backend auto\n{VECTOR_ADD}")
    assert run.ok and "a GPU is present but cuda.core is not installed" in run.text()
    assert "(backend auto -> cpu)" in run.text()


@needs_triton
def test_triton_interpret_backend(shell: Shell, arrays) -> None:
    a, b, c = arrays
    run = shell.run(f"{RUN} --backend triton-interpret --check 'arg2 = arg0 + arg1'\n{VECTOR_ADD}")
    assert run.ok, run.text()
    assert "backend triton-interpret" in run.text()
    assert "check arg2 = arg0 + arg1: ok" in run.text()
    np.testing.assert_array_equal(c, a + b)


def test_time_reports_median_and_spread(shell: Shell, arrays) -> None:
    a, b, c = arrays
    run = shell.run(f"{RUN} --time 3\n{VECTOR_ADD}")
    assert run.ok
    assert any(t.startswith("cpu: median ") and "over 3 runs (min " in t for t in run.texts())
    np.testing.assert_array_equal(c, a + b)
    run = shell.run(f"{RUN} --time\n{VECTOR_ADD}")  # the default number of runs
    assert "over 5 runs" in run.text()


def test_time_restores_inputs_between_runs(shell: Shell) -> None:
    # c += a, run 1 + 3 times: without restoring, c would hold 4 * a.
    shell.ns.update(acc_a=np.ones(8, np.float32), acc_c=np.zeros(8, np.float32))
    cell = """%%tileir accumulate --run --grid 1 --args acc_a,acc_c --cutile-args --time 3
!pv = !cuda_tile.partition_view<tile=(8), tensor_view<8xf32, strides=[1]>>
cuda_tile.module @accumulate {
  entry @accumulate(%a: tile<ptr<f32>>, %n: tile<i32>, %s: tile<i32>,
                    %c: tile<ptr<f32>>, %cn: tile<i32>, %cs: tile<i32>) {
    %tok = make_token : token
    %va = make_tensor_view %a, shape = [8], strides = [1] : tensor_view<8xf32, strides=[1]>
    %vc = make_tensor_view %c, shape = [8], strides = [1] : tensor_view<8xf32, strides=[1]>
    %pa = make_partition_view %va : !pv
    %pc = make_partition_view %vc : !pv
    %i = constant <i32: 0> : tile<i32>
    %x, %t1 = load_view_tko weak %pa[%i] token = %tok : !pv, tile<i32> -> tile<8xf32>, token
    %y, %t2 = load_view_tko weak %pc[%i] token = %t1 : !pv, tile<i32> -> tile<8xf32>, token
    %s2 = addf %x, %y : tile<8xf32>
    %t3 = store_view_tko weak %s2, %pc[%i] token = %t2 : tile<8xf32>, !pv, tile<i32> -> token
    return
  }
}
"""
    run = shell.run(cell)
    assert run.ok, run.text()
    np.testing.assert_array_equal(shell.ns["acc_c"], np.ones(8, np.float32))


def test_failed_check_is_reported_without_traceback(shell: Shell, arrays) -> None:
    run = shell.run(f"{RUN} --check 'arg2 = arg0 - arg1'\n{VECTOR_ADD}")
    assert not run.ok
    assert "check arg2 = arg0 - arg1: FAILED:" in run.text()
    assert "TileIRError: --check 'arg2 = arg0 - arg1' failed (the module is bound as vadd_run)" in run.stdout
    assert "vadd_run" in shell.ns  # a failed check does not unbind a valid module
    no_traceback(run)


def test_check_of_an_all_nan_result(shell: Shell, arrays) -> None:
    a, _, _ = arrays
    a[:] = np.nan
    run = shell.run(f"{RUN} --check 'arg2 = np.zeros(4000, np.float32)'\n{VECTOR_ADD}")
    assert not run.ok
    assert "FAILED: 4000 of 4000 elements differ" in run.text()
    assert "NaN where a number was expected at 4000 elements" in run.html()
    assert "|result - reference|" in run.html()
    assert "TileIRError: --check 'arg2 = np.zeros(4000, np.float32)' failed" in run.stdout
    no_traceback(run)


def test_check_tolerances(shell: Shell, arrays) -> None:
    run = shell.run(f"{RUN} --check 'arg2 = arg0 + arg1 + 1e-3' --atol 0.01 --rtol 0\n{VECTOR_ADD}")
    assert run.ok, run.text()
    assert "rtol 0, atol 0.01" in run.text()


def test_check_expression_that_cannot_be_evaluated(shell: Shell, arrays) -> None:
    run = shell.run(f"{RUN} --check 'arg2 = nosuch(arg0)'\n{VECTOR_ADD}")
    assert not run.ok
    assert "cannot evaluate the expression: NameError" in run.text()
    no_traceback(run)


def test_grid_and_args_are_python_expressions(shell: Shell, arrays) -> None:
    a, b, _ = arrays
    shell.ns["n"] = a.size
    run = shell.run(
        "%%tileir vadd_expr --run --grid '(n + 1023) // 1024' --cutile-args "
        "--args 'a, b, np.zeros(n, dtype=np.float32)' --check 'arg2 = arg0 + arg1'\n" + VECTOR_ADD
    )
    assert run.ok, run.text()
    assert "grid 4x1x1" in run.text()


def test_launch_that_cannot_start(shell: Shell, arrays) -> None:
    run = shell.run("%%tileir vadd_count --run vector_add --grid 4 --args a,b,c\n" + VECTOR_ADD)
    assert not run.ok
    assert "kernel @vector_add takes 9 arguments, got 3" in run.text()
    assert "with --cutile-args, each array is passed as pointer, shape, strides" in run.text()
    no_traceback(run)
    run = shell.run("%%tileir vadd_nokernel --run nosuch --grid 4 --args a\n" + VECTOR_ADD)
    assert "no kernel named 'nosuch'" in run.text()
    no_traceback(run)


def test_kernel_failure_is_the_interpreter_report(shell: Shell) -> None:
    shell.ns["short"] = np.zeros(100, np.float32)
    # Lengths that lie: the kernel reads past the arrays.
    run = shell.run("%%tileir vadd_oob --run --grid 4 --args short,4000,1,short,4000,1,short,4000,1\n" + VECTOR_ADD)
    assert not run.ok
    text = run.text()
    assert "@vector_add failed" in text
    assert "error: load_view_tko" in text and "tile block" in text
    no_traceback(run)


# --------------------------------------------------------------------------------------------
# --show, --arch, --layout


def test_show_ir(shell: Shell) -> None:
    run = shell.run("%%tileir vadd_ir --show ir\n" + VECTOR_ADD)
    assert run.ok
    assert "vadd_ir: canonical Tile IR" in run.text()
    # Highlighted by the project's pygments lexer (inline styles).
    assert "<span style=" in run.html() and "addf" in run.html()


def test_show_bytecode(shell: Shell) -> None:
    run = shell.run("%%tileir vadd_bc --show bytecode\n" + VECTOR_ADD)
    assert run.ok
    text = run.text()
    assert "vadd_bc: Tile IR bytecode," in text
    assert "00000000: 7f54 696c 6549 5200" in text  # the magic number, \x7fTileIR\0
    assert 'download="vadd_bc.tileirbc" href="data:application/octet-stream;base64,' in run.html()


@needs_triton
def test_show_triton_source(shell: Shell) -> None:
    run = shell.run("%%tileir vadd_tt --show triton\n" + VECTOR_ADD)
    assert run.ok, run.text()
    assert "@vector_add: Triton source for sm_90" in run.text()
    assert "@triton.jit" in run.text()


@needs_triton
def test_show_ttir_and_ptx_with_arch_and_progress(shell: Shell) -> None:
    run = shell.run("%%tileir vadd_ptx --show ttir,ptx --arch sm_80\n" + VECTOR_ADD)
    assert run.ok, run.text()
    text = run.text()
    assert "@vector_add: TTIR for sm_80" in text and "tt.func" in text
    assert "@vector_add: PTX for sm_80" in text and ".target sm_80" in text
    assert "compiling @vector_add for sm_80 with Triton" in text  # the progress line
    assert "compiled @vector_add for sm_80 in" in text


@needs_triton
def test_show_ptx_warns_of_a_hint_not_applied(shell: Shell) -> None:
    """Clusters Triton cannot compile (tests/lower/test_tuning.py's kernel): the PTX without
    them, and the compile's warning under it."""
    from tests.lower.test_tuning import SCANS_IN_A_CLUSTER

    run = shell.run("%%tileir scans --show ptx --arch sm_90\n" + SCANS_IN_A_CLUSTER)
    assert run.ok, run.text()
    text = run.text()
    assert "@k: PTX for sm_90" in text
    assert ":3:3: warning: the hint num_cta_in_cga = 2 for sm_90 is not applied: Triton " in text  # (cell line 3)
    assert "compiled without clusters, which computes the same" in text


def test_show_triton_warns_of_warps_raised_for_a_product(shell: Shell) -> None:
    """A hint of 1 warp for a kernel with a 128x128 f32 product on sm_80: the lowering raises
    it to 4 (tests/lower/test_tuning.py), and --show triton says so under the source."""
    import re

    from tests.lower.test_tuning import KERNELS

    text = (KERNELS / "gpu_matmul_f16_t128.tileir").read_text()
    hint = " optimization_hints=<sm_80 = {num_worker_warps_per_cta = 1}> {"
    text = re.sub(r"(entry @\w+\([^)]*\))(?: optimization_hints=<[^>]*>)? \{", lambda m: m[1] + hint, text)
    run = shell.run("%%tileir t128 --show triton --arch sm_80\n" + text)
    assert run.ok, run.text()
    said = run.text()
    assert "Triton source for sm_80" in said
    assert "warning: the hint num_worker_warps_per_cta = 1 for sm_80 is raised to 4" in said


@needs_triton
def test_show_sass(shell: Shell) -> None:
    from compiler.lower.build import tool_path

    if tool_path("cuobjdump") is None:
        pytest.skip("cuobjdump (shipped in Triton's wheel) is not there")
    run = shell.run("%%tileir vadd_sass --show sass\n" + VECTOR_ADD)
    assert run.ok, run.text()
    assert "@vector_add: SASS for sm_90" in run.text() and "Function : vector_add" in run.text()


def test_show_tileiras(shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    """--show tileiras: NVIDIA's SASS of the module (the cubin --backend tileiras launches);
    where tileiras cannot be had, the cell says so and the module is still bound."""
    from compiler.lower.build import tool_path
    from compiler.runtime import find_tileiras

    if find_tileiras() is None or tool_path("cuobjdump") is None:
        pytest.skip("needs NVIDIA's tileiras (pip install nvidia-cuda-tileiras) and cuobjdump (Triton's wheel)")
    run = shell.run("%%tileir vadd_nv --show tileiras,sass --arch sm_80\n" + VECTOR_ADD)
    assert run.ok, run.text()
    text = run.text()
    ours, theirs = text.index("@vector_add: SASS for sm_80"), text.index("vadd_nv: SASS for sm_80 by NVIDIA's tileiras")
    assert theirs < ours  # in the order asked for
    assert "compiling vadd_nv for sm_80 with tileiras" in text and "Function : vector_add" in text[theirs:ours]
    assert "EF_CUDA_SM80" in text[theirs:ours]

    import compiler.runtime.tileiras as tileiras

    monkeypatch.setattr(tileiras, "_find_tool", lambda: None)
    run = shell.run("%%tileir vadd_no_nv --show tileiras --arch sm_86\n" + VECTOR_ADD)
    assert not run.ok and "vadd_no_nv" in shell.ns
    assert "compiling for sm_86 with the tileiras backend needs NVIDIA's tileiras" in run.text()
    assert "--show tileiras failed (the module is bound as vadd_no_nv)" in run.text()
    no_traceback(run)


def test_show_what_the_lowering_cannot_do(shell: Shell, monkeypatch: pytest.MonkeyPatch) -> None:
    import compiler.lower as lower
    from compiler.lower import LowerError

    def refuse(*args, **kwargs):
        raise LowerError("the Triton lowering has no emitter for this op", op="addf", where="In[9]:24:5")

    monkeypatch.setattr(lower, "lower", refuse)
    run = shell.run("%%tileir vadd_refused --show triton\n" + VECTOR_ADD)
    assert not run.ok
    assert "--show triton: @vector_add cannot be lowered" in run.text()
    assert "In[9]:24:5: error: addf: the Triton lowering has no emitter for this op" in run.text()
    assert "vadd_refused" in shell.ns
    no_traceback(run)


def test_layout_shows_the_explorer_for_every_view(shell: Shell) -> None:
    run = shell.run("%%tileir softmax_layout --layout\n" + example("softmax"))
    assert run.ok, run.text()
    widgets = run.widgets()
    assert len(widgets) == 1
    assert "partition_view: tile 4x1024 over tensor" in widgets[0]["text/plain"]


def test_layout_of_a_module_without_views(shell: Shell) -> None:
    run = shell.run("%%tileir noviews --layout\ncuda_tile.module @noviews {\n  entry @k() {\n    return\n  }\n}\n")
    assert run.ok
    assert "noviews has no partition, strided or gather/scatter views to picture" in run.text()


# --------------------------------------------------------------------------------------------
# Bad options


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("--bogus", "unrecognized arguments: --bogus"),
        ("--show nope", "--show nope: one of triton, ttir, ptx, sass, tileiras, bytecode, ir"),
        ("--backend gpu", "invalid choice: 'gpu'"),
        ("--time 0 --run", "--time 0: the number of runs must be at least 1"),
        ("--time x --run", "invalid int value: 'x'"),
        ("--check 'arg0 = 1'", "--check without --run"),
        ("--args a", "--args without --run"),
        ("--run --check 'arg0 = 1'", "--check compares the arguments after the run: give them with --args"),
        ("--run --args undefined_name", "--args: cannot evaluate 'undefined_name': NameError"),
        ("--run --grid 'nope('", "--grid: cannot evaluate"),
        ("--run --grid '\"x\"'", "expected an int or a tuple of ints"),
        ("--check 'unbalanced", "cannot split the options"),
        ("--run --args a --check 'nonsense'", "expected 'argN = EXPRESSION'"),
        ("--run --args a --check 'arg0 = a' --rtol -1", "--rtol -1.0: give a tolerance of 0 or more"),
        ("--run --args a --check 'arg0 = a' --atol nan", "--atol nan: give a tolerance of 0 or more"),
        (
            "--run --args a, b, c --cutile-args",
            "unrecognized arguments: b, c (--args a, b, c: quote it, --args 'a, b, c', or drop the spaces, "
            "--args a,b,c)",
        ),
        ("--run --grid 4, 2 --args a", "(--grid 4, 2: quote it, --grid '4, 2', or drop the spaces, --grid 4,2)"),
    ],
)
def test_bad_options_are_one_line(shell: Shell, arrays, options: str, message: str) -> None:
    run = shell.run(f"%%tileir bad_options {options}\n{VECTOR_ADD}")
    assert not run.ok
    assert message in run.text()
    no_traceback(run)


def test_name_taken_by_run_is_hinted(shell: Shell, arrays) -> None:
    run = shell.run(f"%%tileir --grid 4 --args a,b,c --cutile-args --run vadd_late\n{VECTOR_ADD}")
    assert not run.ok
    assert (
        "no kernel named 'vadd_late'; the module has: vector_add (to bind the module as vadd_late, put NAME "
        "first: %%tileir vadd_late --run ..., or name the kernel: --run KERNEL vadd_late)"
    ) in run.text()
    no_traceback(run)
    run = shell.run(f"%%tileir --grid 4 --args a,b,c --cutile-args --run vector_add vadd_late\n{VECTOR_ADD}")
    assert run.ok and "vadd_late" in shell.ns


def test_help_documents_the_options(shell: Shell) -> None:
    doc = shell.ip.find_cell_magic("tileir").__doc__
    assert doc.lstrip().startswith("::\n\n  %%tileir")
    for option in ("--run", "--grid", "--args", "--cutile-args", "--backend", "--arch", "--time", "--check", "--show"):
        assert option in doc
    assert "--layout" in doc
    assert "%tileir" in shell.ip.find_line_magic("tileir").__doc__


# --------------------------------------------------------------------------------------------
# %tileir (the line magic)


def test_line_magic_loads_a_file(shell: Shell, arrays) -> None:
    path = ROOT / "examples" / "vector_add.tileir"
    run = shell.run(
        f"%tileir {path} --name vadd_file --run --grid 4 --args a,b,c --cutile-args --check 'arg2 = arg0 + arg1'"
    )
    assert run.ok, run.text()
    assert "vadd_file" in shell.ns
    # Diagnostics of a file are named by its path.
    assert "check arg2 = arg0 + arg1: ok" in run.text()


def test_line_magic_loads_bytecode(shell: Shell, arrays, tmp_path) -> None:
    from compiler.bytecode import write_bytecode
    from compiler.runtime import load_module

    path = tmp_path / "vector_add.tileirbc"
    path.write_bytes(write_bytecode(load_module(str(ROOT / "examples" / "vector_add.tileir"))))
    run = shell.run(f"%tileir {path} --name vadd_bytes --run --grid 4 --args a,b,c --cutile-args")
    assert run.ok, run.text()
    a, b, c = arrays
    np.testing.assert_array_equal(c, a + b)


def test_line_magic_acts_on_a_bound_module(shell: Shell, arrays) -> None:
    shell.run("%%tileir vadd_again\n" + VECTOR_ADD)
    run = shell.run("%tileir vadd_again --run --grid 4 --args a,b,c --cutile-args --time 2 --show ir")
    assert run.ok, run.text()
    assert "over 2 runs" in run.text() and "canonical Tile IR" in run.text()


def test_line_magic_without_source_lists_backends(shell: Shell) -> None:
    run = shell.run("%tileir")
    assert run.ok
    assert "backends here: cpu" in run.text()
    assert "GPU: none (auto runs the CPU interpreter)" in run.text()


def test_line_magic_unknown_source(shell: Shell) -> None:
    run = shell.run("%tileir no/such/file.tileir")
    assert not run.ok
    assert "is neither a file nor a Tile IR module in the notebook" in run.text()
    no_traceback(run)


# --------------------------------------------------------------------------------------------
# The Python face: errors show as one line, keep their types


def test_python_launch_errors_are_one_line(shell: Shell, arrays) -> None:
    shell.run("%%tileir vadd_py\n" + VECTOR_ADD)
    run = shell.run("vadd_py.vector_add[4](a, b, c)")
    assert not run.ok
    assert isinstance(run.result.error_in_exec, LaunchError)
    assert "LaunchError: kernel @vector_add takes 9 arguments, got 3" in run.stdout
    no_traceback(run)
    run = shell.run("vadd_py.vector_add(a, b, c)")
    assert "give a grid: vadd_py.vector_add[grid](*args)" in run.stdout
    run = shell.run("vadd_py.nosuch")
    assert "module 'vadd_py' has no kernel 'nosuch'; its kernels: vector_add" in run.stdout
    run = shell.run("vadd_py.vector_add[4](a, b, c, cutile_args=True, backend='tileiras')")
    assert "backend 'tileiras' needs an NVIDIA GPU" in run.stdout
    no_traceback(run)


def test_python_launch_timing(shell: Shell, arrays) -> None:
    shell.run("%%tileir vadd_time\n" + VECTOR_ADD)
    timing = shell.ns["vadd_time"].vector_add[4].time(*arrays, repeat=2, cutile_args=True)
    assert len(timing.times) == 2 and timing.backend == "cpu"
    assert "cpu: median" in repr(timing)


def test_time_backends_lists_every_backend(shell: Shell, arrays) -> None:
    import tile_kernel

    shell.run("%%tileir vadd_all\n" + VECTOR_ADD)
    table = tile_kernel.time_backends(shell.ns["vadd_all"].vector_add[4], *arrays, cutile_args=True, repeat=1)
    assert [row.backend for row in table.rows] == tile_kernel.available_backends()
    assert table.rows[0].timing is not None
    a, b, c = arrays
    np.testing.assert_array_equal(c, a + b)


def test_unload_and_reload(shell: Shell) -> None:
    shell.ip.run_line_magic("unload_ext", "tile_kernel")
    assert shell.ip.find_cell_magic("tileir") is None
    shell.ip.run_line_magic("load_ext", "tile_kernel")
    shell.ip.run_line_magic("load_ext", "tile_kernel")  # twice is harmless
    assert shell.ip.find_cell_magic("tileir") is not None
    assert sum(getattr(m, "_tileir", False) for m in shell.ip.Completer.custom_matchers) == 1


# --------------------------------------------------------------------------------------------
# Runaway kernels: Kernel > Interrupt, and the Python launch's limits

SPIN = """cuda_tile.module @spin_mod {
  entry @spin(%n: tile<i32>) {
    %c0 = constant <i32: 0> : tile<i32>
    %c1 = constant <i32: 1> : tile<i32>
    %acc = for %i in (%c0 to %n, step %c1) : tile<i32> iter_values(%s = %c0) -> (tile<i32>) {
      %t = addi %s, %c1 : tile<i32>
      continue %t : tile<i32>
    }
    return
  }
}
"""


@pytest.fixture
def interrupt_soon():
    """Kernel > Interrupt (a SIGINT, which Python raises as KeyboardInterrupt) 0.3 s after
    the cell starts."""
    import signal

    def interrupt(*_):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    yield lambda: signal.setitimer(signal.ITIMER_REAL, 0.3)
    signal.setitimer(signal.ITIMER_REAL, 0)
    signal.signal(signal.SIGALRM, previous)


def test_interrupted_cell_is_one_line_report(shell: Shell, interrupt_soon) -> None:
    shell.run("%%tileir spin_int\n" + SPIN)
    interrupt_soon()
    run = shell.run("%tileir spin_int --run spin --grid 1 --args 1000000000 --max-steps 0")
    assert not run.ok
    # Where it was, as a runaway's report says it: the loop's cell line and its iteration.
    assert re.search(r"In\[\d+\]:6:\d+: for: @spin was interrupted at iteration \d+ of this loop", run.text())
    assert "TileIRError: --run failed (the module is bound as spin_int)" in run.stdout
    no_traceback(run)
    assert shell.run("1 + 1").ok  # the kernel goes on


def test_interrupted_python_launch_is_one_line(shell: Shell, interrupt_soon) -> None:
    shell.run("%%tileir spin_py_int\n" + SPIN)
    interrupt_soon()
    run = shell.run("spin_py_int.spin[1](1000000000, max_steps=0)")
    assert not run.ok
    # Still a KeyboardInterrupt (a loop of launches stops), shown as one line.
    assert isinstance(run.result.error_in_exec, KeyboardInterrupt)
    assert re.search(r"KeyboardInterrupt: In\[\d+\]:6:\d+: for: @spin was interrupted at iteration", run.stdout)
    no_traceback(run)


def test_python_launch_limits_are_keywords(shell: Shell) -> None:
    from compiler.interp import RunawayError

    shell.run("%%tileir spin_py\n" + SPIN)
    run = shell.run("spin_py.spin[1](2000, max_steps=100)")
    assert not run.ok
    assert type(run.result.error_in_exec) is RunawayError  # public (compiler.interp), an InterpError
    assert "RunawayError: In[" in run.stdout
    assert "ran past 100 loop iterations (max_steps=100)" in run.stdout
    assert "raise or lift the limit with max_steps=N (0: no limit)" in run.stdout and "--max-steps" not in run.stdout
    no_traceback(run)
    assert shell.run("spin_py.spin[1](2000, max_steps=0)").ok
    run = shell.run("spin_py.spin[1](10 ** 9, max_steps=0, timeout=0.2)")
    assert "time limit of 0.2 s (timeout=0.2)" in run.stdout and "timeout=SECONDS" in run.stdout
    run = shell.run("spin_py.spin[1](10, max_steps=-1)")
    assert "LaunchError: max_steps=-1: give 0 (no limit) or more" in run.stdout
    run = shell.run("spin_py.spin[1](10, timeout=float('nan'))")
    assert "LaunchError: timeout=nan: give 0 (no limit) or more" in run.stdout


def test_python_timing_names_the_repeat_keyword(shell: Shell, arrays) -> None:
    import tile_kernel

    shell.run("%%tileir vadd_rep\n" + VECTOR_ADD)
    launch = shell.ns["vadd_rep"].vector_add[4]
    with pytest.raises(LaunchError, match=r"^repeat=0: the number of runs must be at least 1$"):
        tile_kernel.time_backends(launch, *arrays, cutile_args=True, repeat=0)
    with pytest.raises(LaunchError, match=r"^repeat=0: the number of runs must be at least 1$"):
        launch.time(*arrays, cutile_args=True, repeat=0)


def test_line_magic_on_a_directory_or_an_unreadable_file(
    shell: Shell, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = shell.run(f"%tileir {tmp_path}")
    assert not run.ok
    assert f"'{tmp_path}' is a directory: give a .tileir or .tileirbc file in it" in run.text()
    no_traceback(run)
    python = tmp_path / "kernels.py"
    python.write_text("import cuda.tile as ct\n")
    run = shell.run(f"%tileir {python}")
    assert not run.ok and f"'{python}' is Python, not Tile IR: import its cuTile kernel and bind it with " in run.text()
    no_traceback(run)
    locked = tmp_path / "locked.tileir"
    locked.write_text(VECTOR_ADD)

    def refuse(path, *args, **kwargs):  # what open() does without read permission (tests may run as root)
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr("tile_kernel.magic.open", refuse, raising=False)
    run = shell.run(f"%tileir {locked}")
    assert not run.ok
    assert f"cannot read '{locked}': Permission denied" in run.text()
    no_traceback(run)


def test_binding_says_what_it_replaces(shell: Shell) -> None:
    import types

    shell.run("replaced_fn = lambda x: x\nimport numpy as replaced_np")
    run = shell.run("%%tileir\n" + VECTOR_ADD.replace("@vector_add {", "@replaced_fn {"))
    assert run.ok
    assert "warning: the module replaces replaced_fn, a function" in run.text()
    run = shell.run("%%tileir replaced_np\n" + VECTOR_ADD)
    assert "warning: the module replaces replaced_np, the module numpy" in run.text()
    assert not isinstance(shell.ns["replaced_np"], types.ModuleType)
    run = shell.run("%%tileir replaced_np\n" + VECTOR_ADD)  # a module over a module: nothing to say
    assert run.ok and "replaces" not in run.text()


def test_line_magic_binds_a_module_again_or_says_options_do_nothing(shell: Shell) -> None:
    from tile_kernel.module import TileModule

    shell.run("%%tileir vadd_first\n" + VECTOR_ADD)
    run = shell.run("%tileir vadd_first --name vadd_alias --backend cpu")
    assert run.ok and "vadd_alias = Tile IR module: @vector_add(" in run.text()
    alias = shell.ns["vadd_alias"]
    assert isinstance(alias, TileModule) and alias.name == "vadd_alias" and alias.backend == "cpu"
    assert shell.ns["vadd_first"].backend is None
    run = shell.run("%tileir vadd_first --backend cpu --arch sm_80")
    assert run.ok
    assert (
        "warning: --backend cpu --arch sm_80: no effect without --run or --show (vadd_first keeps the defaults "
        "it was bound with); to change them, bind it again: %tileir vadd_first --name vadd_first --backend cpu "
        "--arch sm_80"
    ) in run.text()
    run = shell.run("%tileir vadd_first --arch sm_80 --show ir")
    assert "no effect" not in run.text()


def test_two_kernels_of_one_name_agree_on_the_first(shell: Shell) -> None:
    cell = """%%tileir twice
cuda_tile.module @first {
  entry @k() {
    return
  }
}
cuda_tile.module @second {
  entry @k(%n: tile<i32>) {
    return
  }
}
"""
    run = shell.run(cell)
    assert run.ok, run.text()
    assert "twice = Tile IR module: @k()\n" in run.text() + "\n"  # the one --run k launches
    assert "warning: two kernels are named @k: twice.k and --run k launch the first, @k(); not @k(%n: tile<i32>)" in (
        run.text()
    )
    mod = shell.ns["twice"]
    assert mod.k.signature == "@k()" and mod.kernel("k") is mod.k
    assert shell.run("%tileir twice --run k").ok  # no arguments: the first kernel's

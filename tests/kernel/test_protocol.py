"""The "Tile IR" kernel over the Jupyter messaging protocol (jupyter_kernel_test), started from
the kernelspec that `python -m tile_kernel install --prefix` wrote: Python cells as IPython's
kernel answers them, and `%%tileir` cells with their completion, inspection and outputs. Every
message is validated against the protocol's schema."""

from __future__ import annotations

import pytest

jkt = pytest.importorskip("jupyter_kernel_test", reason="the `test` extra (jupyter_kernel_test) is not installed")
from jupyter_kernel_test.msgspec_v5 import validate_message  # noqa: E402

from .conftest import example  # noqa: E402

TIMEOUT = 60
VECTOR_ADD = example("vector_add")
CELL = "%%tileir vadd\n" + VECTOR_ADD


@pytest.mark.usefixtures("kernelspec")
class TestTileIRKernel(jkt.KernelTests):
    kernel_name = "tileir"
    language_name = "python"
    file_extension = ".py"

    # Python cells keep working.
    code_hello_world = "print('hello, world')"
    code_stderr = "import sys; print('oops', file=sys.stderr)"
    completion_samples = [{"text": "zi", "matches": {"zip"}}]
    complete_code_samples = ["1", "print('hello, world')"]
    incomplete_code_samples = ["print('''hello"]
    code_page_something = "print?"
    code_generate_error = "raise ValueError('boom')"
    code_execute_result = [{"code": "6 * 7", "result": "42"}]
    code_display_data = [
        {"code": "from IPython.display import HTML, display; display(HTML('<b>x</b>'))", "mime": "text/html"}
    ]
    code_history_pattern = "6 * 7"
    supported_history_operations = ("tail", "search")
    code_inspect_sample = "zip"
    code_clear_output = "from IPython.display import clear_output; clear_output()"

    # -- %%tileir cells --------------------------------------------------------------------

    def reply_to(self, msg_id: str, kind: str) -> dict:
        reply = self.get_non_kernel_info_reply(timeout=TIMEOUT)
        validate_message(reply, kind, msg_id)
        return reply

    def test_tileir_completion(self) -> None:
        self.flush_channels()
        pos = CELL.index("%sum = ad") + len("%sum = ad")
        reply = self.reply_to(self.kc.complete(CELL, pos), "complete_reply")["content"]
        assert reply["status"] == "ok"
        assert reply["matches"][:2] == ["addf", "addi"]
        assert (reply["cursor_start"], reply["cursor_end"]) == (pos - 2, pos)
        types = reply["metadata"]["_jupyter_types_experimental"]
        assert types[0]["text"] == "addf %lhs, %rhs : type" and types[0]["type"] == "function"
        # Values in scope after `%`.
        pos = CELL.index("%sum = addf %x, %") + len("%sum = addf %x, %")
        reply = self.reply_to(self.kc.complete(CELL, pos), "complete_reply")["content"]
        assert {"%x", "%y", "%tok"} <= set(reply["matches"])

    def test_tileir_inspection(self) -> None:
        self.flush_channels()
        pos = CELL.index("%sum = addf") + len("%sum = add")
        reply = self.reply_to(self.kc.inspect(CELL, pos), "inspect_reply")["content"]
        assert reply["status"] == "ok" and reply["found"]
        assert "cuda_tile.addf" in reply["data"]["text/markdown"]
        assert "cuda_tile.addf" in reply["data"]["text/plain"]
        # Nothing under the cursor (a comment): not found, still ok.
        reply = self.reply_to(self.kc.inspect(CELL, CELL.index("// c[i]") + 3), "inspect_reply")["content"]
        assert reply["status"] == "ok" and not reply["found"]

    def test_magic_line_inspection_and_completion(self) -> None:
        self.flush_channels()
        # Shift-Tab on the magic line: IPython's answer, the magic's docstring.
        reply = self.reply_to(self.kc.inspect(CELL, 5), "inspect_reply")["content"]
        assert reply["status"] == "ok" and reply["found"]
        assert "--run [KERNEL]" in reply["data"]["text/plain"]
        code = "%%tileir m --ba"
        reply = self.reply_to(self.kc.complete(code, len(code)), "complete_reply")["content"]
        assert reply["matches"] == ["--backend"] and reply["cursor_start"] == len(code) - 4

    def test_tileir_cell_runs_and_binds(self) -> None:
        self.flush_channels()
        code = (
            "import numpy as np\n"
            "a = np.arange(3000, dtype=np.float32); b = np.ones(3000, np.float32); c = np.zeros(3000, np.float32)"
        )
        reply, _ = self.execute_helper(code, timeout=TIMEOUT)
        assert reply["content"]["status"] == "ok"
        reply, outputs = self.execute_helper(
            CELL.replace(
                "%%tileir vadd", "%%tileir vadd --run --grid 3 --args a,b,c --cutile-args --check 'arg2 = arg0 + arg1'"
            ),
            timeout=TIMEOUT,
        )
        assert reply["content"]["status"] == "ok"
        texts = [m["content"]["data"].get("text/plain", "") for m in outputs if m["msg_type"] == "display_data"]
        assert any("check arg2 = arg0 + arg1: ok" in t for t in texts)
        assert any("no GPU on this machine: the CPU interpreter ran" in t for t in texts) or any(
            "backend auto -> triton on the GPU" in t for t in texts
        )
        assert all("text/html" in m["content"]["data"] for m in outputs if m["msg_type"] == "display_data")
        reply, outputs = self.execute_helper("print(float(c[2999]), vadd.vector_add)", timeout=TIMEOUT)
        stdout = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
        assert stdout.startswith("3000.0 <Tile IR kernel @vector_add(")

    def test_tileir_error_is_one_line(self) -> None:
        self.flush_channels()
        reply, outputs = self.execute_helper(
            CELL.replace("%sum = addf %x, %y", "%sum = addf %x, %nope"), timeout=TIMEOUT, stop_on_error=False
        )
        assert reply["content"]["status"] == "error"
        kinds = [m["msg_type"] for m in outputs]
        assert kinds == ["display_data", "error"]
        diagnostics = outputs[0]["content"]["data"]
        assert "use of undeclared SSA value name '%nope'" in diagnostics["text/plain"]
        assert "tileir-diagnostics" in diagnostics["text/html"]
        error = outputs[1]["content"]
        assert error["ename"] == "TileIRError"
        assert error["traceback"] == ["TileIRError: 1 error in the Tile IR; nothing was bound"]

"""`TileModule.from_cutile`: a cuTile Python kernel function in a notebook, exported by cuTile
for its arguments, launched with the function's own arguments (ct.Constant ones left out of the
launch) on the CPU where there is no GPU, timed, and its views pictured."""

from __future__ import annotations

import numpy as np
import pytest

from tile_kernel.module import TileModule

ct = pytest.importorskip("cuda.tile", reason="cuTile Python (pip cuda-tile) is not installed")


def _scale():
    def scale(x, tile, s, y):  # a constant between the arrays: the launch must leave it out
        i = ct.bid(0)
        ct.store(y, index=(i,), tile=ct.load(x, index=(i,), shape=(tile,)) * s)

    scale.__annotations__ = {"tile": ct.Constant[int]}
    return ct.kernel(scale)


def test_launch_time_and_layouts_of_a_cutile_kernel() -> None:
    x, y = np.arange(64, dtype=np.float32), np.zeros(64, np.float32)
    module = TileModule.from_cutile(_scale(), x, 16, 2.5, y, backend="cpu")
    assert module.name == "scale" and list(module.kernels) == ["scale"]
    assert module.cutile_constants == frozenset({1})
    assert "make_partition_view" in module.text
    result = module.scale[4](x, 16, 2.5, y)
    assert result.backend == "cpu"
    np.testing.assert_array_equal(y, x * np.float32(2.5))
    timing = module.scale[4].time(x, 16, 2.5, y, repeat=2)
    assert len(timing.times) == 2
    pytest.importorskip("ipywidgets")
    from tile_kernel.widgets import LayoutExplorer

    explorer = LayoutExplorer.of_module(module.module)
    assert any("tile=(16)" in v.label for v in explorer.views)


def test_what_is_not_a_cutile_kernel_and_what_cutile_refuses() -> None:
    from compiler.runtime import LaunchError

    with pytest.raises(LaunchError, match="expected a cuTile @ct.kernel function, got function"):
        TileModule.from_cutile(lambda: None)
    with pytest.raises(LaunchError, match="cuTile kernel scale takes 4 arguments, got 2"):
        TileModule.from_cutile(_scale(), np.zeros(4, np.float32), 4)

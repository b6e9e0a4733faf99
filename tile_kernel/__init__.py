"""Jupyter kernel and IPython extension (`%%tileir`) for Tile IR.

Built by the notebook-kernel issue: an ipykernel subclass, the `%%tileir` cell magic and widgets
that run a kernel on the GPU (or the CPU interpreter) and show the result next to NumPy's.
"""

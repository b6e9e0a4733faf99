"""Imports every emitter module, so that `registry.EMITTERS` is complete."""

from . import (  # noqa: F401
    ops_bits,
    ops_control,
    ops_conversion,
    ops_float,
    ops_integer,
    ops_math,
    ops_memory,
    ops_misc,
    ops_mma,
    ops_reduce,
    ops_shape,
    ops_view,
)

"""Imports every emitter module, so that `registry.EMITTERS` is complete."""

from . import ops_control, ops_float, ops_misc, ops_view  # noqa: F401

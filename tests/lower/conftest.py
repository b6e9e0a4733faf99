from .harness import _private_cache  # noqa: F401  (every lowering test uses a private cache)

"""The shared core: records, finding codes, errors, configuration, the event loop.

Every other subpackage may import from here; nothing here imports another
subpackage of `audit` (import-linter checks it in `make lint`).
"""

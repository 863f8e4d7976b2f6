"""The benchmark suites: run one with `python -m bench.suites.NAME --help` from the repository root."""

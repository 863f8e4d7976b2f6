"""Results kept between runs: the SQLite state store, the incremental run, diff.

`store` (the --state file and its writer thread), `incremental` (the hook
that makes a crawl resumable and conditional), `diff` (two reports or state
files compared over a temporary SQLite database).
"""

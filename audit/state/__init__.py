"""Results kept between runs: the SQLite state store, the incremental run, diff.

`store` (the --state file: a run's handle on it) over `schema` (tables, recognition,
migration), `lock` (one run per file), `writer` (the writer thread) and `read` (earlier
results, a state file's records); `incremental` (the hook that makes a crawl resumable
and conditional), `diff` (two reports or state files compared) over `compare` (the
comparison in a temporary SQLite database, and its alerts).
"""

"""The benchmark: the product measured from the outside, by its command line, on loopback.

    bench/suites/   the entry points, each run from the repository root as
                    `python -m bench.suites.NAME` (`make bench` runs the set);
    bench/results/  the tables they write and the ones kept by hand (RESULTS.md, VERSUS.md, ...);
    bench/out/      generated data, logs and quick runs (git-ignored);
    bench/*.py      what the suites share: paths and measured subprocesses (common), generated
                    sets (gen), nginx (server), a linked site (links_site), per-process peak
                    memory (measure), the alternatives' environments (alternatives); and the
                    scripts run as their own process by a path, often under another Python
                    (bare_head, bare_iterparse, full_validate, alt_driver, links_adv, plot).

Nothing here edits `sys.path`: `bench` is a package found from the repository root.
"""

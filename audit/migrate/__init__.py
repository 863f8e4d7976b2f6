"""`migrate OLD NEW`: every old URL judged on the new site.

`auditor` (the pipeline with each old URL checked on the new site and given
one migration outcome), `redirect_map` (the --map CSV of exact rows and regex
rules, pure).
"""

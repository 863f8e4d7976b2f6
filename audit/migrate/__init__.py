"""`migrate OLD NEW`: every old URL judged on the new site.

`auditor` (the pipeline with each old URL checked on the new site, through its
RunContext, and given one migration outcome), `outcomes` (what an answer on the new
site means: one outcome and its migrate-* findings, pure), `redirect_map` (the --map CSV of exact rows and regex
rules, pure).
"""

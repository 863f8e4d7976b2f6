"""The pipeline: stages wired with queues inside one TaskGroup.

`auditor` (sitemap queue -> expanders -> bounded frontier -> workers ->
recorder, and the hooks capabilities plug into), `context` (the `RunContext` a
feature sees instead of the Auditor, and the jobs), `targets` (what a target is),
`discover` (where a site's
sitemaps are), `runner` (one audit from a target to its summary), `recorder`
(records to the report sinks), `spool` (socket -> spool -> parser),
`progress` (the bar on stderr).
"""

"""The pipeline: stages wired with queues inside one TaskGroup.

`auditor` (wires the run: sitemap queue -> expanders -> bounded frontier -> workers ->
recorder), `expand` (the expanders: sitemaps in, listed URLs out), `check` (the
standard check of a listed URL), `chain` (the hooks at each point), `hooks` (the hook
points, the numbered HOOK_ORDER, Next/Done), `context` (the `RunContext` a feature sees
instead of the Auditor, and the jobs), `frontier` (one queue per host), `links`
(--links), `targets` (what a target is), `discover` (where a site's sitemaps are),
`runner` (one audit from its targets to its summary), `recorder` (records to the report
sinks), `rollup`, `spool` (socket -> spool -> parser), `progress` (the bar on stderr).
What an option adds lives in audit.features.
"""

"""What an option adds to a run: hooks that see the run through a RunContext
(audit.pipeline.context), never the Auditor, asked in audit.pipeline.hooks.HOOK_ORDER.

`builtin` (which of them a run gets), `agents` and `agentfetch` (indexability, --agents,
--agents-fetch), `deploy` (deploy stamps), `indexlastmod` (index <lastmod> truth),
`llms` (--llms), `render` (--render), `intent` (--intent), and over time with --state:
`incremental` (the StateHook: evidence kept, 304s, resume, --changed-only), `lastmod`
(content over time), `budget` (--budget), `ledger` (the published-URL ledger).
The link crawl (--links) is a hook of the pipeline's (audit.pipeline.links).
"""

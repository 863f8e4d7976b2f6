"""The command line: the entry point (main), the option table (options), one thin module per
command (crawl, validate, inspect, discover, report, diff, migrate, codes, fix) that parses,
calls the front door and maps the outcome to an exit code, the report file and signals
(output), --config files (configfile) and the demo.

Nothing in the package imports this subpackage; it goes through the front door (`audit.api`)
like any library user, and imports nothing else below it but `audit.core` and `audit.report`
(an import-linter contract).
"""

"""What the front door (audit.api) wires around a run: the run options and their checks
(options), the --state store and what reads it (state), IndexNow and the notifications after
the run (after), and the migration check (migrate).

Callers go through `audit.api`; the command line imports nothing from here directly.
"""

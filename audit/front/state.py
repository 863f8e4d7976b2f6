"""--state and what reads it, wired around one run: the store opened (its identity from the
options that change what a run finds), its sink and hook, the published-URL ledger and its
stage after every target, --budget, and lastmod over time (--content, --page-checks).

`open_state` opens the store before the report is opened (an unusable state file must not
cost an earlier report); `wire` returns the sinks, the hook factory and the after-stage the
run's `Audit` takes; `close_state` closes the store, complete only when the run went
through to the end.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from audit.core.config import CrawlConfig
from audit.front.options import RunOptions

__all__ = ["NOT_FINGERPRINTED", "Wiring", "close_state", "open_state", "wire"]

# Options that change how politely or where a run goes, not what it finds: a state may be
# resumed or continued with other values of these.
NOT_FINGERPRINTED = frozenset(
    {
        "rate",
        "concurrency",
        "fetch_workers",
        "fetch_workers_after",
        "fetch_workers_min_rate",
        "fetch_workers_min_busy",
        "max_per_host",
        "politeness_key",
        "timeout",
        "retries",
        "retry_after_cap",
        "backoff_base",
        "backoff_cap",
        "stream_timeout",
        # credentials rotate; a new password must not make the state "another audit"
        "auth",
        "cookies",
        "extra_headers",
        # where the checks run, not what they find (issue 21)
        "cluster",
        "cluster_batch",
        "cluster_fence",
        # a plan is edited between nights: the intent file never ties the state
        "intent",
    }
)


# the options that change what a run finds: a state's identity holds those set away from
# their defaults
_FINGERPRINTED = tuple(
    f for f in dataclasses.fields(CrawlConfig) if f.name not in NOT_FINGERPRINTED
)
_NO_MORE: Mapping[str, Any] = MappingProxyType({})  # a command without options of its own


def open_state(
    path: str,
    mode: str,
    targets: Sequence[str],
    config: CrawlConfig,
    *,
    fresh: bool = False,
    ignore: Sequence[str] = (),
    more: Mapping[str, Any] = _NO_MORE,
) -> Any:
    """The --state store of a run (audit.state.store.StateStore); an unusable file, or the
    state of another audit, is a StateError (one line, exit 2)."""
    from audit.state.identity import identity
    from audit.state.store import StateStore, fingerprint

    # Only options set away from their defaults: an option added by a later version (at
    # its default) must not make an existing state "another audit".
    options = {
        f.name: value for f in _FINGERPRINTED if (value := getattr(config, f.name)) != f.default
    }
    if ignore:  # the state holds the report as filtered: another audit
        options["ignore"] = sorted(set(ignore))
    options.update(more)  # a command's own options (migrate's --map, --new-sitemap)
    targets = list(targets)
    return StateStore.open(
        path,
        fingerprint=fingerprint(mode, targets, options),
        targets=targets,
        fresh=fresh,
        identity=identity(mode, targets, options),
    )


def close_state(store: Any, *, complete: bool) -> str | None:
    """Close the --state store; why it could not be written (one line), or None. The
    report is written before: a full disk under the state never costs the report."""
    if store is None:
        return None
    from audit.state.store import StateError

    try:
        store.close(complete=complete)
    except StateError as exc:
        return str(exc)
    return None


HookFactory = Callable[[], list[Any]]


@dataclass(slots=True)
class Wiring:
    """What the run's options add to its Audit: record sinks, a hook factory (one call per
    run; `list`: none), and a stage after every target."""

    sinks: list[Any] = field(default_factory=list)
    hooks: HookFactory = list
    after: Callable[[Any], Awaitable[None]] | None = None


def wire(
    store: Any, opts: RunOptions, config: CrawlConfig, targets: Sequence[str], mode: str
) -> Wiring:
    """The store's sink and hook (one StateHook per run), the ledger and --budget on a crawl,
    and lastmod over time in front (its after_answer must see a 304 before the StateHook
    carries it)."""
    out = Wiring()
    if store is not None:
        from audit.features.incremental import StateHook, StateSink

        sink = StateSink(store)
        out.sinks.append(sink)
        shared: list[Any] = []
        if mode == "crawl":
            from audit.features.ledger import Ledger

            ledger = Ledger(store, config, list(targets), dropped_max=opts.dropped_max)
            shared.append(ledger)
            if opts.budget:
                from audit.features.budget import BudgetHook

                shared.insert(0, BudgetHook(store, opts.budget))
            out.sinks.append(ledger)
            out.after = _ledger_stage(ledger, store)
        changed_only = opts.changed_only

        def state_hooks() -> list[Any]:
            return [StateHook(sink, changed_only=changed_only), *shared]

        out.hooks = state_hooks
    if mode == "crawl" and (opts.fingerprints or config.page_checks):
        out.hooks = _with_lastmod(out.hooks, store, config.page_cap)
    return out


def _with_lastmod(factory: HookFactory, store: Any, cap: int) -> HookFactory:
    from audit.features.lastmod import LastmodHook

    def hooks() -> list[Any]:
        return [LastmodHook(store, cap), *factory()]

    return hooks


_CUT_NOTES = ("max_urls_reached", "excluded_urls", "excluded_sitemaps")


def _ledger_stage(ledger: Any, store: Any) -> Callable[[Any], Awaitable[None]]:
    """After every target: the dropped URLs judged, unless the run was cut (--max-urls)
    or a target could not be audited; such a run neither judges nor updates the ledger."""

    async def after(run: Any) -> None:
        notes = run.recorder.notes
        store.cut = {key: notes[key] for key in _CUT_NOTES if notes.get(key)}
        if run.cut:
            store.ledger_update = False
            return
        await ledger.judge_dropped(run.recorder)

    return after

"""Rendering pages in headless Chromium: a run's browser as a bounded resource.

`Renderer(options)` renders one URL at a time per call (`await render(url)`) and returns
a `Rendered` value: the document's HTML as the browser built it, or why it did not
finish, or where a script navigated to. At most `tabs` pages are open at once.

- One browser per run, started for the first page; closed and started again after every
  `RESTART_EVERY` pages it rendered and after a crash. `close()` ends it (the caller
  calls it in a `finally`); its keeper (browserguard.py) ends it when this process dies.
- Each page gets a fresh browser context (no cookies, storage, cache or service worker
  from another page), the audit's User-Agent, and on the origins the credentials are for
  the run's credential headers (`Access.headers_for`). Every request of the page, its
  sub-resources included, passes `Access.allows` first (the run's private-address rule),
  through the protocol's request interception; a refused one fails in the browser.
- The DOM is read after the load event, once no request has been in flight for `QUIET_S`
  or `SETTLE_S` after the load event, whichever comes first. No load event within
  `timeout` of the navigation's start: the tab is closed at once, `failure` says so.
- The first time the main frame starts loading another document after the page's own
  (a script set location, submitted a form, a meta refresh fired), the render ends with
  `navigated_to`. History API and fragment changes are no navigation.
- A tab or browser crash: the page is tried once more in a new browser, then `failure`.

Knows no sitemaps and no HTML parsing: the caller judges what `html` says.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from audit.core.config import CrawlConfig
from audit.http.addresses import PrivateGuard, ip_of, normal_host
from audit.http.cdp import (
    BROWSER_FLAGS,
    BrowserGone,
    BrowserProcess,
    CdpError,
    StartError,
    retrieved,
)
from audit.http.credentials import RequestScope
from audit.http.hosts import origin_key

__all__ = [
    "BROWSER_ENV",
    "BROWSER_NAMES",
    "QUIET_S",
    "RESTART_EVERY",
    "SETTLE_S",
    "Access",
    "Rendered",
    "Renderer",
    "RendererOptions",
    "StartError",
    "find_browser",
    "run_access",
]

QUIET_S: Final = 0.5  # no request in flight this long after the load event: read the DOM
SETTLE_S: Final = 2.0  # ... or this long after the load event, whichever comes first
RESTART_EVERY: Final = 100  # pages a browser renders before a new one is started
_READ_DOM: Final = (
    "[location.href, document.documentElement ? document.documentElement.outerHTML : '']"
)


@dataclass(frozen=True, slots=True)
class Access:
    """What the browser's requests may do: `allows(url)` (the private-address rule, awaited
    for every request) and `headers_for(url, page)`: the credential headers a request of
    `url` made by the page at `page` carries."""

    allows: Callable[[str], Awaitable[bool]]
    headers_for: Callable[[str, str], dict[str, str]]


@dataclass(frozen=True, slots=True)
class RendererOptions:
    executable: str
    user_agent: str
    access: Access
    tabs: int = 2
    timeout: float = 20.0
    sandbox: bool = True  # False only where the sandbox cannot work (as root)
    restart_every: int = RESTART_EVERY


@dataclass(frozen=True, slots=True)
class Rendered:
    """One render: `html` and `final_url` when the DOM was read; `navigated_to` when the
    page loaded another document by itself; `failure` when it did not finish."""

    url: str
    ms: float
    html: str | None = None
    final_url: str | None = None
    navigated_to: str | None = None
    failure: str | None = None


class _Crash(Exception):
    """The tab or the browser crashed while rendering (the page gets one more try)."""


class Renderer:
    """The run's browser: started on first use, at most `tabs` pages at once."""

    def __init__(self, options: RendererOptions) -> None:
        self.options = options
        self._tabs = asyncio.Semaphore(max(1, options.tabs))
        self._browser: BrowserProcess | None = None
        self._starting: asyncio.Lock = asyncio.Lock()
        self._open = 0  # pages open in the current browser
        self._served = 0  # pages the current browser was given
        self._idle = asyncio.Condition()
        self.started_at = 0.0  # monotonic time of the first start (0.0: none yet)
        self.ended_at = 0.0  # ... and of the end of the last render (0.0: none yet)
        self.starts = 0
        self.peak_memory = 0  # bytes, the browser's process tree, sampled after each page
        # why no browser starts from now on: one that did not start will not now, and
        # none starts once the run is over (close())
        self._start_error: str | None = None

    async def render(self, url: str) -> Rendered:
        """Render one page (waits for a free tab first)."""
        async with self._tabs:
            began = time.monotonic()
            try:
                out = await self._attempt(url, began)
            except _Crash:  # once more in a new browser
                try:
                    out = await self._attempt(url, time.monotonic())
                except _Crash as exc:
                    out = Rendered(url, _ms(began), failure=f"the browser crashed twice ({exc})")
            self.ended_at = time.monotonic()
            return out

    async def _attempt(self, url: str, began: float) -> Rendered:
        browser = await self._acquire()
        try:
            return await _Page(browser, self.options, url, began).run()
        except (BrowserGone, _Crash) as exc:
            if browser.conn.closed:  # the browser died: gone for every page
                await self._discard(browser)
            else:  # a tab crashed: the browser is replaced once its other pages are done,
                # as after restart_every pages (it is the current one: the browser of a page
                # still open is replaced only once no page is open, or when it is gone)
                self._served = self.options.restart_every
            raise _Crash(str(exc)) from None
        except CdpError as exc:  # the browser refused a call: this page is not rendered
            return Rendered(url, _ms(began), failure=f"the browser refused: {exc}")
        finally:
            self.peak_memory = max(self.peak_memory, browser.memory())
            await self._release()

    async def _acquire(self) -> BrowserProcess:
        """The browser for one more page: a new one after RESTART_EVERY pages (once the
        pages open in the old one are done), after a crash, or at first."""
        async with self._starting:
            browser = self._browser
            if browser is not None and (
                self._served >= self.options.restart_every or browser.conn.closed
            ):
                async with self._idle:
                    await self._idle.wait_for(lambda: self._open == 0)
                await self._discard(browser)
                browser = None
            if browser is None:
                browser = self._browser = await self._start()
                self._served = 0
            self._served += 1
            self._open += 1
            return browser

    async def start_only(self) -> None:
        """Start the browser now (it is then used by the first render); StartError if it
        cannot be started."""
        async with self._starting:
            if self._browser is None:
                self._browser = await self._start()

    async def _release(self) -> None:
        async with self._idle:
            self._open -= 1
            self._idle.notify_all()

    async def _start(self) -> BrowserProcess:
        if self._start_error is not None:
            raise StartError(self._start_error)
        flags = BROWSER_FLAGS if self.options.sandbox else ("--no-sandbox", *BROWSER_FLAGS)
        try:
            browser = await BrowserProcess.start(self.options.executable, flags)
        except (StartError, OSError) as exc:
            self._start_error = str(exc)
            raise StartError(self._start_error) from None
        self.starts += 1
        if not self.started_at:
            self.started_at = time.monotonic()
        return browser

    async def _discard(self, browser: BrowserProcess) -> None:
        if self._browser is browser:
            self._browser = None
        await browser.close()

    async def close(self) -> None:
        """End the browser (every process of it) and remove its profile."""
        self._start_error = "the run is over"
        browser, self._browser = self._browser, None
        if browser is not None:
            await asyncio.shield(browser.close())

    @property
    def seconds(self) -> float:
        """From the browser's first start to the end of the last render (0.0 before a
        render ended: a render ends after its browser started)."""
        return max(0.0, self.ended_at - self.started_at)


def _ms(began: float) -> float:
    return round((time.monotonic() - began) * 1000.0, 1)


@dataclass(slots=True)
class _Net:
    """What the page's session reports: requests in flight, the document, navigations."""

    loaded: asyncio.Event = field(default_factory=asyncio.Event)
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # in flight, or navigated
    inflight: set[str] = field(default_factory=set)
    last_quiet: float = 0.0
    frame: str | None = None
    loader: str = ""  # the document's loader id: "" until Page.navigate names it
    statuses: dict[str, int] = field(default_factory=dict)  # document answers by loader
    doc_error: str | None = None
    navigated: str | None = None
    crashed: bool = False


class _Page:
    """One page in its own browser context: navigate, wait, read, close."""

    def __init__(self, browser: BrowserProcess, options: RendererOptions, url: str, began: float):
        self.conn = browser.conn
        self.options = options
        self.url = url
        self.began = began
        self.net = _Net()
        self.session = ""
        self.context = ""

    async def run(self) -> Rendered:
        try:
            await self._open()
            return await self._render()
        finally:
            await self._close()

    async def _open(self) -> None:
        conn = self.conn
        made = await conn.send("Target.createBrowserContext", {"disposeOnDetach": True})
        self.context = made["browserContextId"]
        target = await conn.send(
            "Target.createTarget", {"url": "about:blank", "browserContextId": self.context}
        )
        attached = await conn.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        self.session = attached["sessionId"]
        conn.listen(self.session, self._event)
        for method, params in (
            ("Network.setUserAgentOverride", {"userAgent": self.options.user_agent}),
            ("Network.setCacheDisabled", {"cacheDisabled": True}),
            ("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}),
            ("Network.enable", {}),
            ("Page.enable", {}),
            ("Inspector.enable", {}),
        ):
            await conn.send(method, params, session=self.session)
        tree = await conn.send("Page.getFrameTree", session=self.session)
        self.net.frame = tree["frameTree"]["frame"]["id"]

    async def _render(self) -> Rendered:
        net, timeout = self.net, self.options.timeout
        try:  # one deadline, from the navigation's start to the load event
            async with asyncio.timeout(timeout):
                # Page.navigate answers once the document's answer has begun
                nav = await self._call("Page.navigate", {"url": self.url})
                if nav.get("errorText"):
                    return self._failed(f"navigation error: {nav['errorText']}")
                net.loader = nav.get("loaderId", "")
                # (its own limit, `timeout` from now, comes after the deadline: never first)
                await self._wait_for(lambda: net.loaded.is_set() or self._stopped(), timeout)
        except TimeoutError:
            return self._failed(f"no load event after {timeout:g} s")
        early = self._outcome()
        if early is not None:
            return early
        await self._settle()
        early = self._outcome()
        if early is not None:
            return early
        href, html = (await self._eval(_READ_DOM)) or [self.url, ""]
        late = self._outcome()  # a navigation while the DOM was read
        if late is not None:
            return late
        return Rendered(self.url, _ms(self.began), html=html, final_url=href)

    def _stopped(self) -> bool:
        net = self.net
        return net.crashed or net.navigated is not None or net.doc_error is not None

    def _outcome(self) -> Rendered | None:
        """The page's render ended early: a crash, a navigation, a failed document."""
        net = self.net
        if net.crashed:
            raise _Crash("the tab crashed")
        if net.navigated is not None:
            return Rendered(
                self.url, _ms(self.began), final_url=net.navigated, navigated_to=net.navigated
            )
        if net.doc_error is not None:
            return self._failed(net.doc_error)
        status = net.statuses.get(net.loader, 200)  # (none yet: no failure)
        if not 200 <= status < 300:
            return self._failed(f"the browser's request for the page got HTTP {status}")
        return None

    def _failed(self, why: str) -> Rendered:
        return Rendered(self.url, _ms(self.began), failure=why)

    async def _settle(self) -> None:
        """After the load event: until QUIET_S without a request in flight, at most SETTLE_S."""
        net = self.net
        end = time.monotonic() + SETTLE_S
        while not self._stopped():
            quiet = end if net.inflight else net.last_quiet + QUIET_S  # when it is quiet
            wait = min(end, quiet) - time.monotonic()
            if wait <= 0:
                return
            await self._wait_for(lambda: False, wait)

    async def _wait_for(self, done: Callable[[], bool], seconds: float) -> bool:
        """Until `done()` (checked whenever the session reports), at most `seconds`."""
        end = time.monotonic() + max(0.0, seconds)
        while not done():
            left = end - time.monotonic()
            if left <= 0:
                return False
            self.net.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.net.changed.wait(), left)
            if self.conn.closed:
                raise BrowserGone("the browser is gone")
        return True

    async def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return await self.conn.send(method, params, session=self.session)

    async def _eval(self, expression: str) -> Any:
        try:
            out = await self._call(
                "Runtime.evaluate", {"expression": expression, "returnByValue": True}
            )
        except BrowserGone:
            raise
        except CdpError:
            return None
        return out.get("result", {}).get("value")

    async def _close(self) -> None:
        """The tab closed at once (its requests end with it), its context disposed."""
        conn = self.conn
        conn.listen(self.session, None)
        with contextlib.suppress(CdpError):  # a closed connection's BrowserGone too
            if self.context:
                await conn.send("Target.disposeBrowserContext", {"browserContextId": self.context})

    # --- events ------------------------------------------------------------------

    def _event(self, method: str, params: dict[str, Any]) -> None:
        handler = _EVENTS.get(method)
        if handler is not None:
            handler(self, params)
            self.net.changed.set()

    def _paused(self, params: dict[str, Any]) -> None:
        asyncio.ensure_future(self._answer_paused(params)).add_done_callback(retrieved)

    async def _answer_paused(self, params: dict[str, Any]) -> None:
        request_id = params["requestId"]
        url = params["request"]["url"]
        conn, session = self.conn, self.session
        if url.startswith(("http://", "https://")) and not await self.options.access.allows(url):
            conn.notify(
                "Fetch.failRequest",
                {"requestId": request_id, "errorReason": "AccessDenied"},
                session=session,
            )
            return
        more = self.options.access.headers_for(url, self.url)
        answer: dict[str, Any] = {"requestId": request_id}
        if more:  # the page's headers, a credential header replacing one of the same name
            sent = [*params["request"].get("headers", {}).items(), *more.items()]
            named = {k.lower(): (k, v) for k, v in sent}  # by name: the last one given
            answer["headers"] = [{"name": k, "value": v} for k, v in named.values()]
        conn.notify("Fetch.continueRequest", answer, session=session)

    def _request(self, params: dict[str, Any]) -> None:
        net = self.net
        net.inflight.add(params["requestId"])
        frame = params.get("frameId")
        if (
            params.get("type") == "Document"
            and frame == net.frame
            and net.loader  # (named: the page's own document is no navigation)
            and params.get("loaderId") != net.loader
        ):
            self._navigation(params["request"]["url"])

    def _finished(self, params: dict[str, Any]) -> None:
        net = self.net
        net.inflight.discard(params["requestId"])
        if not net.inflight:
            net.last_quiet = time.monotonic()

    def _failed_request(self, params: dict[str, Any]) -> None:
        net = self.net
        if params["requestId"] == net.loader and not net.loaded.is_set():
            net.doc_error = f"the browser's request for the page failed: {params.get('errorText')}"
        self._finished(params)

    def _response(self, params: dict[str, Any]) -> None:
        net = self.net
        if params.get("type") == "Document" and params.get("frameId") in (None, net.frame):
            # it may come before Page.navigate's answer names the loader: kept by loader
            net.statuses[params.get("loaderId") or ""] = int(params["response"].get("status", 0))

    def _requested_navigation(self, params: dict[str, Any]) -> None:
        if params.get("frameId") == self.net.frame:
            self._navigation(params.get("url", ""))

    def _navigation(self, url: str) -> None:
        """The main frame starts loading another document: the first such URL ends it
        (the same URL again, a reload, is no navigation away)."""
        if self.net.navigated is None and _same_doc(url) != _same_doc(self.url):
            self.net.navigated = url

    def _loaded(self, params: dict[str, Any]) -> None:
        self.net.loaded.set()
        if not self.net.inflight:
            self.net.last_quiet = time.monotonic()

    def _crashed(self, params: dict[str, Any]) -> None:
        self.net.crashed = True

    def _dialog(self, params: dict[str, Any]) -> None:
        """alert(), confirm(), prompt(): answered at once (a page waits on them)."""
        self.conn.notify("Page.handleJavaScriptDialog", {"accept": True}, session=self.session)


def _same_doc(url: str) -> str:
    return url.split("#", 1)[0]


_EVENTS: Final[dict[str, Callable[[_Page, dict[str, Any]], None]]] = {
    "Fetch.requestPaused": _Page._paused,
    "Network.requestWillBeSent": _Page._request,
    "Network.loadingFinished": _Page._finished,
    "Network.loadingFailed": _Page._failed_request,
    "Network.responseReceived": _Page._response,
    "Page.frameRequestedNavigation": _Page._requested_navigation,
    "Page.loadEventFired": _Page._loaded,
    "Inspector.targetCrashed": _Page._crashed,
    "Page.javascriptDialogOpening": _Page._dialog,
    "Browser.gone": _Page._crashed,
}


# --- the run's browser: where it is, what it may reach ---------------------------------

BROWSER_ENV: Final = "SITEMAP_AUDIT_BROWSER"
BROWSER_NAMES: Final = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_browser(given: str | None, env: Mapping[str, str] = os.environ) -> str:
    """The browser's executable: `given` (--browser, and only it), else
    $SITEMAP_AUDIT_BROWSER, else the first of BROWSER_NAMES on PATH (`env`: the process's
    environment, read as it is at the call). StartError names what was looked for and how
    to get it."""
    how = "install it (Debian: apt-get install chromium) or give --browser PATH"
    if given:
        return _executable(given, f"--browser {given}", how)
    named = env.get(BROWSER_ENV)
    if named:
        return _executable(named, f"${BROWSER_ENV} {named}", how)
    for name in BROWSER_NAMES:
        path = shutil.which(name, path=env.get("PATH"))
        if path:
            return path
    raise StartError(
        f"--render needs Chromium or Chrome: none of {', '.join(BROWSER_NAMES)} is on PATH; {how}"
    )


def _executable(path: str, what: str, how: str) -> str:
    found = shutil.which(path) if os.sep not in path else path
    if found is None or not os.path.isfile(found):
        raise StartError(f"--render: {what}: no such browser; {how}")
    if not os.access(found, os.X_OK):
        raise StartError(f"--render: {what}: not executable; {how}")
    return found


def run_access(config: CrawlConfig) -> Access:
    """The browser's requests under the run's rules: the private-address rule of the HTTP
    client (a DNS name is judged by its answers, looked up once per host), and the staging
    credentials on the origins they are for (without a scope: the page's own origin)."""
    guard = PrivateGuard.of(config.credential_origins, config.allow_private)
    scope = RequestScope(config)  # the HTTP client's own rule for its credentials
    judged: dict[str, bool] = {}

    async def allows(url: str) -> bool:
        if not guard.active:
            return True
        if guard.refuses(url):
            return False
        host = urlsplit(url).hostname or ""
        if normal_host(host) in guard.trusted or ip_of(host) is not None:
            return True
        if host not in judged:
            judged[host] = await _resolves_public(guard, host)
        return judged[host]

    def headers_for(url: str, page: str) -> dict[str, str]:
        # (no credentials: the empty dict, sent or not)
        return scope.credentials if scope.may_send(origin_key(url), origin_key(page)) else {}

    return Access(allows, headers_for)


async def _resolves_public(guard: PrivateGuard, host: str) -> bool:
    try:
        answers = await asyncio.get_running_loop().getaddrinfo(host, None)
    except OSError:
        return True  # the browser's own lookup fails the same way
    return all(guard.keeps(host, str(a[4][0])) for a in answers)

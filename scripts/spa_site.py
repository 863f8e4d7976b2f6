"""A local single-page app built with Vue 3 and Vue Router 4 (their own browser builds), to
show what `crawl --render` finds on a client-rendered site.

    cd /tmp && npm pack vue@3 vue-router@4 && for f in vue-*.tgz; do mkdir -p "${f%.tgz}" \\
        && tar xzf "$f" -C "${f%.tgz}"; done
    .venv/bin/python scripts/spa_site.py --vue /tmp/vue-3.*/package/dist/vue.global.prod.js \\
        --router /tmp/vue-router-4.*/package/dist/vue-router.global.prod.js --port 8990 &
    .venv/bin/sitemap-audit crawl http://127.0.0.1:8990/ --render all --links

Every route answers the same shell (`<div id="app">` and the scripts): the router renders
the page, sets its title, and on a product page sets the canonical to the product's clean URL
and on the retired page adds a robots noindex. The navigation is `<router-link>`s, written
into the DOM by the app. The sitemap lists the home page, /about, /products, two products
and /retired; /contact is reached only through the app's navigation.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from aiohttp import web

SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Garden shop</title>
<script src="/vue.js"></script><script src="/vue-router.js"></script></head>
<body><div id="app"></div><script src="/app.js"></script></body></html>
"""

APP = r"""
const { createApp, h } = Vue;
const { createRouter, createWebHistory, RouterLink, RouterView } = VueRouter;
const text = (s) => s.repeat(6);
const page = (title, body, extra) => ({
  setup() {
    document.title = title + " | Garden shop";
    if (extra) extra();
    return () => h("main", [h("h1", title), h("p", text(body))]);
  },
});
function setMeta(name, content) {
  let m = document.querySelector(`meta[name="${name}"]`);
  if (!m) { m = document.createElement("meta"); m.name = name; document.head.append(m); }
  m.content = content;
}
function setCanonical(href) {
  let l = document.querySelector('link[rel="canonical"]');
  if (!l) { l = document.createElement("link"); l.rel = "canonical"; document.head.append(l); }
  l.href = href;
}
const routes = [
  { path: "/", component: page("Home", "Tools and seeds for every garden. ") },
  { path: "/about", component: page("About us", "A family business since 1952. ") },
  { path: "/products", component: page("Products", "Spades, rakes, hoes and seeds. ") },
  { path: "/products/:id", component: {
      setup() {
        const id = VueRouter.useRoute().params.id;
        document.title = "Product " + id + " | Garden shop";
        setCanonical("/p/" + id);
        return () => h("main", [h("h1", "Product " + id), h("p", text("A fine tool. "))]);
      } } },
  { path: "/retired", component: page("Retired", "This range is gone. ",
      () => setMeta("robots", "noindex")) },
  { path: "/contact", component: page("Contact", "Write to us or call. ") },
];
const router = createRouter({ history: createWebHistory(), routes });
const nav = ["/", "/about", "/products", "/products/1", "/products/2", "/contact"];
createApp({
  render: () => h("div", [
    h("nav", nav.map((to) => h(RouterLink, { to }, () => to))),
    h(RouterView),
  ]),
}).use(router).mount("#app");
"""

LISTED = ("/", "/about", "/products", "/products/1", "/products/2", "/retired")


def app(vue: Path, router: Path) -> web.Application:
    scripts = {"/vue.js": vue.read_bytes(), "/vue-router.js": router.read_bytes()}

    async def handle(request: web.Request) -> web.StreamResponse:
        path = request.path
        if path in scripts:
            return web.Response(body=scripts[path], content_type="text/javascript")
        if path == "/app.js":
            return web.Response(text=APP, content_type="text/javascript")
        base = f"http://{request.host}"
        if path == "/robots.txt":
            return web.Response(text=f"User-agent: *\nAllow: /\nSitemap: {base}/sitemap.xml\n")
        if path == "/sitemap.xml":
            locs = "".join(f"<url><loc>{base}{p}</loc></url>" for p in LISTED)
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>'
                f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locs}</urlset>'
            )
            return web.Response(text=body, content_type="application/xml")
        if path == "/favicon.ico":
            return web.Response(status=404)
        return web.Response(text=SHELL, content_type="text/html")  # every route: the shell

    application = web.Application()
    application.router.add_get("/{tail:.*}", handle)
    return application


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vue", type=Path, required=True, help="vue.global.prod.js")
    ap.add_argument("--router", type=Path, required=True, help="vue-router.global.prod.js")
    ap.add_argument("--port", type=int, default=8990)
    args = ap.parse_args()
    web.run_app(app(args.vue, args.router), host="127.0.0.1", port=args.port, print=None)


if __name__ == "__main__":
    main()

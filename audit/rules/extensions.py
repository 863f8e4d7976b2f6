"""The extensions of a <url> entry: images, videos, news and hreflang alternates
(RULES.md "Entries"; Google's image, video and news sitemaps, video.xsd).

    ext = ExtensionCheck(source, now=utc_now, hreflang=graph_or_None)
    ext.check(entry, loc, norm, out)            # findings appended to out
    ext.news                                    # URLs with <news:news> so far

Video and news extension values come as `fields` dicts of local name -> text;
attributes, where the parser records them, as "element@attribute"
(`restriction@relationship`, `platform@relationship`, `player_loc@allow_embed`,
`price@currency`, `price@type`, `price@resolution`). news-stale when the whole
publication_date span ends more than 2 days before the audit. hreflang alternates go to
the run's HreflangGraph for hreflang-not-reciprocal at the end of the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from decimal import Decimal

from audit.core.records import Alternate, Entry, Finding, Image, News, Video
from audit.rules.dates import W3CDate, parse_w3c_datetime
from audit.rules.findings import DECIMAL, XML_SPACE, ZERO, add, show
from audit.rules.hreflang import HreflangGraph
from audit.rules.langtags import check_hreflang, check_news_language
from audit.rules.limits import MAX_IMAGES
from audit.rules.urls import is_absolute_http, normalize_url

__all__ = ["NEWS_MAX_AGE", "ExtensionCheck"]

NEWS_MAX_AGE = timedelta(days=2)  # Google News: articles from the last two days
VIDEO_MAX_DESCRIPTION = 2048  # video.xsd maxLength
VIDEO_MAX_TITLE = 100  # video.xsd maxLength
VIDEO_MAX_CATEGORY = 256  # video.xsd maxLength
VIDEO_MAX_DURATION = 28_800  # video.xsd and Google: 1 to 28,800 seconds (8 hours)

_NON_NEG_INT = re.compile(r"\+?\d+", re.ASCII)  # xsd:nonNegativeInteger lexical form
_YES_NO = frozenset({"yes", "Yes", "YES", "no", "No", "NO"})  # video.xsd tYesNo
_COUNTRY_LIST = re.compile(r"(?:[A-Z]{2}(?: +[A-Z]{2})*)?", re.ASCII)  # video.xsd tCountryList
_PLATFORM_LIST = re.compile(r"(?:(?:web|mobile|tv)(?: (?:web|mobile|tv))*)?")  # tPlatformList
_CURRENCY = re.compile(r"[A-Z]{3}", re.ASCII)
_RELATIONSHIPS = frozenset({"allow", "deny"})
_PRICE_TYPES = frozenset({"purchase", "PURCHASE", "rent", "RENT"})
_RESOLUTIONS = frozenset({"sd", "SD", "hd", "HD"})
_FIVE = Decimal(5)


class ExtensionCheck:
    """The extension checks of one sitemap's entries; `hreflang` is the run's graph of
    alternates (None: reciprocity is not checked)."""

    __slots__ = ("_news_oldest", "hreflang", "news", "now", "source")

    def __init__(self, source: str, *, now: datetime, hreflang: HreflangGraph | None) -> None:
        self.source = source
        self.now = now
        self.hreflang = hreflang
        self._news_oldest = now - NEWS_MAX_AGE
        self.news = 0  # URLs with <news:news> (news-too-many, and no lastmod-uniform)

    def check(self, entry: Entry, loc: str | None, norm: str | None, out: list[Finding]) -> None:
        """The findings of `entry`'s extensions; `loc` as stripped, `norm` normalised."""
        if entry.images:
            self._check_images(entry.images, entry.line, loc, out)
        for video in entry.videos or ():
            self._check_video(video, loc, out)
        if entry.news:
            self.news += 1  # counted once per URL for news-too-many
            for news in entry.news:
                self._check_news(news, loc, out)
        if entry.alternates:
            self._check_alternates(entry.alternates, entry.line, loc, norm, out)

    def _check_images(
        self, images: list[Image], line: int, loc: str | None, out: list[Finding]
    ) -> None:
        if len(images) > MAX_IMAGES:
            add(
                out,
                self.source,
                "image-too-many",
                f"{len(images):,} <image:image> elements for one URL, over Google's limit of "
                f"{MAX_IMAGES:,}: keep the {MAX_IMAGES:,} most important images",
                line,
                loc,
            )
        with_deprecated: list[Image] = []  # (image-deprecated-tag, below)
        for image in images:
            if image.loc is None or not image.loc.strip(XML_SPACE):
                add(
                    out,
                    self.source,
                    "image-loc-missing",
                    "<image:image> has no <image:loc>"
                    + (" (it is empty)" if image.loc is not None else "")
                    + ": add the image's URL in <image:loc> or remove the <image:image>",
                    image.line,
                    loc,
                )
            if image.deprecated:
                with_deprecated.append(image)
        # image-deprecated-tag, once for the <image:image> elements that have such tags
        if with_deprecated:  # (local names: `caption`), each once
            tags = ", ".join(
                dict.fromkeys(
                    f"<image:{tag}>" for image in with_deprecated for tag in image.deprecated
                )
            )
            add(
                out,
                self.source,
                "image-deprecated-tag",
                f"{tags} in {len(with_deprecated)} <image:image> element(s): Google deprecated "
                "these tags in 2022 and ignores them; remove them",
                with_deprecated[0].line,
                loc,
            )

    def _check_video(self, video: Video, loc: str | None, out: list[Finding]) -> None:
        f = video.fields
        line = video.line
        values = {k: v.strip(XML_SPACE) for k, v in f.items()}
        # the required children it lacks (empty counts as absent)
        missing = _missing(values, "video", ("thumbnail_loc", "title", "description"))
        if not values.get("content_loc") and not values.get("player_loc"):
            missing.append("<video:content_loc> or <video:player_loc>")
        if missing:
            add(
                out,
                self.source,
                "video-required-missing",
                f"<video:video> lacks {', '.join(missing)}: add "
                f"{'it' if len(missing) == 1 else 'them'} (Google needs them to index the video)",
                line,
                loc,
            )
        for name, shown, why, fix in _video_problems(f, values):
            add(
                out,
                self.source,
                "video-invalid-value",
                f"<video:{name}> {show(shown, 60)} {why}: {fix}",
                line,
                loc,
            )

    def _check_news(self, news: News, loc: str | None, out: list[Finding]) -> None:
        line = news.line
        values = {k: v.strip(XML_SPACE) for k, v in news.fields.items()}
        missing = _missing(values, "news", ("name", "language", "publication_date", "title"))
        if missing:
            add(
                out,
                self.source,
                "news-required-missing",
                f"<news:news> lacks {', '.join(missing)}: add {'it' if len(missing) == 1 else 'them'}"
                " (<news:publication> needs "
                "<news:name> and <news:language>)",
                line,
                loc,
            )
        language = values.get("language")
        if language and (why := check_news_language(language)) is not None:
            add(
                out,
                self.source,
                "news-invalid-value",
                f"<news:language> {show(language)} {why}: use e.g. en, de, zh-cn",
                line,
                loc,
            )
        published = values.get("publication_date", "")
        if not published:  # missing: said above
            return
        parsed = _date_or_problem(published, _NEWS_DATE_TOO_COARSE)
        if isinstance(parsed, str):
            add(
                out,
                self.source,
                "news-invalid-value",
                f"<news:publication_date> {show(published)} is invalid ({parsed}); use "
                "YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm",
                line,
                loc,
            )
        elif parsed.end <= self._news_oldest:
            add(
                out,
                self.source,
                "news-stale",
                f"<news:publication_date> {show(published)} is more than two days before "
                f"the audit ({self.now:%Y-%m-%d}): news sitemaps should list only articles "
                "of the last two days; drop the <news:news> of older ones",
                line,
                loc,
            )

    def _check_alternates(
        self,
        alternates: list[Alternate],
        line: int,
        loc: str | None,
        norm: str | None,
        out: list[Finding],
    ) -> None:
        hrefs = [href for alt in alternates if (href := self._check_alternate(alt, loc, out))]
        if norm is None or loc is None:
            return
        # a broken href may be the self link: said already
        if len(hrefs) == len(alternates) and not any(normalize_url(h) == norm for h in hrefs):
            add(
                out,
                self.source,
                "hreflang-missing-self",
                f"{show(loc)} lists hreflang alternates but not itself: add an xhtml:link "
                "with its own language and href (each version must list itself and all others)",
                line,
                loc,
            )
        if self.hreflang is not None and hrefs:
            self.hreflang.add(loc, hrefs, sitemap=self.source, line=line)

    def _check_alternate(self, alt: Alternate, loc: str | None, out: list[Finding]) -> str | None:
        """hreflang-invalid for one xhtml:link; its href (stripped), None when unusable."""
        code = alt.hreflang
        why = "is missing" if code is None else check_hreflang(code)
        if why is not None:
            shown = f"hreflang {show(code)}" if code is not None else "the hreflang attribute"
            add(
                out,
                self.source,
                "hreflang-invalid",
                f"{shown} {why}: use an ISO 639-1 language with an optional ISO 3166-1 "
                "region (en, en-GB) or x-default",
                alt.line,
                loc,
            )
        href = (alt.href or "").strip(XML_SPACE)
        if is_absolute_http(href):
            return href
        add(
            out,
            self.source,
            "hreflang-invalid",
            f"xhtml:link href {show(href)} is not an absolute http(s) URL: "
            "give the full URL of the alternate page",
            alt.line,
            loc,
        )
        return None


# --- hreflang, news and video values (video.xsd), one rule per element or attribute -----


def _missing(values: dict[str, str], prefix: str, required: tuple[str, ...]) -> list[str]:
    """The required children an element lacks (empty counts as absent)."""
    return [f"<{prefix}:{name}>" for name in required if not values.get(name)]


# What a date of a precision too coarse for the element lacks (the XSD): a
# <news:publication_date> needs a full date at least; a video date (xsd:date or
# xsd:dateTime) also seconds in a time.
_NEWS_DATE_TOO_COARSE = {
    "year": "only a year, not a full date",
    "month": "only a month, not a full date",
}
_VIDEO_DATE_TOO_COARSE = {**_NEWS_DATE_TOO_COARSE, "minute": "a time without seconds"}


def _date_or_problem(text: str, too_coarse: Mapping[str, str]) -> W3CDate | str:
    """A date parsed, or why it is invalid: not a W3C date, or of a precision `too_coarse`
    names (with what it lacks)."""
    try:
        parsed = parse_w3c_datetime(text)
    except ValueError as exc:
        return str(exc)
    return too_coarse.get(parsed.precision, parsed)


def _bad_duration(v: str) -> bool:
    return not _NON_NEG_INT.fullmatch(v) or not 1 <= int(v) <= VIDEO_MAX_DURATION


def _bad_rating(v: str) -> bool:
    return not DECIMAL.fullmatch(v) or not ZERO <= Decimal(v) <= _FIVE


def _bad_price(v: str) -> bool:
    # An empty <video:price> is allowed: the price may live in its attributes.
    return bool(v) and (not DECIMAL.fullmatch(v) or Decimal(v) < ZERO)


def _not_in(allowed: frozenset[str]) -> Callable[[str], bool]:
    return lambda v: v not in allowed


def _not_matching(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda v: pattern.fullmatch(v) is None


_YES_NO_RULE = (_not_in(_YES_NO), "is not yes or no", "write yes or no")
_RELATIONSHIP_RULE = (_not_in(_RELATIONSHIPS), "is not allow or deny", "write allow or deny")
# (element or element@attribute, is the stripped value bad?, why, fix), in report order
_VIDEO_VALUE_RULES: tuple[tuple[str, Callable[[str], bool], str, str], ...] = (
    (
        "duration",
        _bad_duration,
        "is not a whole number of seconds from 1 to 28,800",
        "fix it",
    ),
    ("rating", _bad_rating, "is not a number from 0.0 to 5.0", "fix it"),
    (
        "view_count",
        _not_matching(_NON_NEG_INT),
        "is not a non-negative whole number",
        "fix it",
    ),
)
_VIDEO_FLAG_RULES: tuple[tuple[str, Callable[[str], bool], str, str], ...] = (
    ("family_friendly", *_YES_NO_RULE),
    ("live", *_YES_NO_RULE),
    ("requires_subscription", *_YES_NO_RULE),
    ("player_loc@allow_embed", *_YES_NO_RULE),
    (
        "restriction",
        _not_matching(_COUNTRY_LIST),
        "is not a space-separated list of ISO 3166 country codes",
        "write upper-case two-letter codes such as 'US CA'",
    ),
    (
        "platform",
        _not_matching(_PLATFORM_LIST),
        "is not a list of web, mobile, tv",
        "write e.g. 'web mobile'",
    ),
    ("restriction@relationship", *_RELATIONSHIP_RULE),
    ("platform@relationship", *_RELATIONSHIP_RULE),
    (
        "price@currency",
        _not_matching(_CURRENCY),
        "is not an ISO 4217 code",
        "write e.g. EUR or USD",
    ),
    ("price@type", _not_in(_PRICE_TYPES), "is not purchase or rent", "write purchase or rent"),
    ("price@resolution", _not_in(_RESOLUTIONS), "is not sd or hd", "write sd or hd"),
    ("price", _bad_price, "is not a non-negative decimal", "write e.g. 1.99"),
)
_VIDEO_MAX_LENGTHS = (
    ("title", VIDEO_MAX_TITLE),
    ("description", VIDEO_MAX_DESCRIPTION),
    ("category", VIDEO_MAX_CATEGORY),
)


def _video_problems(
    fields: dict[str, str], values: dict[str, str]
) -> list[tuple[str, str, str, str]]:
    """(name, value, why, fix) for every invalid video value, in report order.

    `fields` are the values as written (lengths count them), `values` the same stripped.
    """
    problems: list[tuple[str, str, str, str]] = []
    for name, limit in _VIDEO_MAX_LENGTHS:
        v = fields.get(name, "")
        if len(v) > limit:
            problems.append(
                (name, v, f"is {len(v):,} characters long", f"shorten it to {limit:,} at most")
            )
    _video_rule_problems(_VIDEO_VALUE_RULES, values, problems)
    for name in ("publication_date", "expiration_date"):
        if name in values:
            why = _date_or_problem(values[name], _VIDEO_DATE_TOO_COARSE)
            if isinstance(why, str):
                problems.append(
                    (
                        name,
                        values[name],
                        f"is invalid ({why})",
                        "use YYYY-MM-DD or YYYY-MM-DDThh:mm:ss+hh:mm",
                    )
                )
    _video_rule_problems(_VIDEO_FLAG_RULES, values, problems)
    return problems


def _video_rule_problems(
    rules: tuple[tuple[str, Callable[[str], bool], str, str], ...],
    values: dict[str, str],
    problems: list[tuple[str, str, str, str]],
) -> None:
    for name, is_bad, why, fix in rules:
        v = values.get(name)
        if v is not None and is_bad(v):
            problems.append((name, v, why, fix))

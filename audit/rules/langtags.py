"""Language tags: hreflang values (Google) and news:language values.

Pure, standard library only; imports nothing of HTTP, asyncio or the rest of
the package. hreflang, as Google reads it: an ISO 639-1 language, optionally a
script (ISO 15924, four letters: zh-Hant) and/or an ISO 3166-1 alpha-2 region
(en-GB, zh-Hant-TW), or `x-default`; case-insensitive.
"""

from __future__ import annotations

import re

__all__ = [
    "ISO_639_1",
    "ISO_3166_1_ALPHA2",
    "check_hreflang",
    "check_news_language",
    "is_valid_hreflang",
]

# ISO 639-1, all two-letter codes (including "bh", withdrawn in 2021 but still in use).
# fmt: off
ISO_639_1: frozenset[str] = frozenset({
    "aa", "ab", "ae", "af", "ak", "am", "an", "ar", "as", "av", "ay", "az", "ba", "be", "bg", "bh",
    "bi", "bm", "bn", "bo", "br", "bs", "ca", "ce", "ch", "co", "cr", "cs", "cu", "cv", "cy", "da",
    "de", "dv", "dz", "ee", "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi", "fj", "fo", "fr",
    "fy", "ga", "gd", "gl", "gn", "gu", "gv", "ha", "he", "hi", "ho", "hr", "ht", "hu", "hy", "hz",
    "ia", "id", "ie", "ig", "ii", "ik", "io", "is", "it", "iu", "ja", "jv", "ka", "kg", "ki", "kj",
    "kk", "kl", "km", "kn", "ko", "kr", "ks", "ku", "kv", "kw", "ky", "la", "lb", "lg", "li", "ln",
    "lo", "lt", "lu", "lv", "mg", "mh", "mi", "mk", "ml", "mn", "mr", "ms", "mt", "my", "na", "nb",
    "nd", "ne", "ng", "nl", "nn", "no", "nr", "nv", "ny", "oc", "oj", "om", "or", "os", "pa", "pi",
    "pl", "ps", "pt", "qu", "rm", "rn", "ro", "ru", "rw", "sa", "sc", "sd", "se", "sg", "si", "sk",
    "sl", "sm", "sn", "so", "sq", "sr", "ss", "st", "su", "sv", "sw", "ta", "te", "tg", "th", "ti",
    "tk", "tl", "tn", "to", "tr", "ts", "tt", "tw", "ty", "ug", "uk", "ur", "uz", "ve", "vi", "vo",
    "wa", "wo", "xh", "yi", "yo", "za", "zh", "zu",
})
# fmt: on

# ISO 3166-1 alpha-2, the officially assigned codes.
# fmt: off
ISO_3166_1_ALPHA2: frozenset[str] = frozenset({
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW",
})
# fmt: on

# Frequent mistakes and what was meant, for the message.
_LANGUAGE_HINTS = {
    "jp": "ja",
    "cn": "zh",
    "gr": "el",
    "dk": "da",
    "cz": "cs",
    "ua": "uk",
    "vn": "vi",
    "iw": "he",
    "in": "id",
    "ji": "yi",
    "mo": "ro",
    "kz": "kk",
}
_REGION_HINTS = {"UK": "GB", "EN": "GB or US", "EU": "a country code"}
# ... as the message says them
_LANGUAGE_HINT_TEXT = {
    code: f" (did you mean {meant!r}?)" for code, meant in _LANGUAGE_HINTS.items()
}
_REGION_HINT_TEXT = {code: f" (did you mean {meant}?)" for code, meant in _REGION_HINTS.items()}

_TAG = re.compile(r"([A-Za-z]{2,3})(?:-([A-Za-z]{4}))?(?:-([A-Za-z0-9]{2,3}))?", re.ASCII)


def check_hreflang(value: str) -> str | None:
    """Why `value` is not a valid hreflang (a short reason naming the fix), or None."""
    v = value.strip()
    if v.lower() == "x-default":
        return None
    if not v:
        return "is empty (use a language code such as en or en-GB, or x-default)"
    if "_" in v:
        return f"uses '_' instead of '-' (write {v.replace('_', '-')!r})"
    m = _TAG.fullmatch(v)
    if m is None:
        return "is not language[-Script][-REGION] (such as en, en-GB, zh-Hant-TW) or x-default"
    lang, _script, region = m.groups()
    lang = lang.lower()
    if lang not in ISO_639_1:
        extra = _LANGUAGE_HINT_TEXT.get(lang, "")
        return f"language {lang!r} is not an ISO 639-1 two-letter code{extra}"
    if region is not None and region.upper() not in ISO_3166_1_ALPHA2:
        extra = _REGION_HINT_TEXT.get(region.upper(), "")
        return f"region {region!r} is not an ISO 3166-1 alpha-2 country code{extra}"
    return None


def is_valid_hreflang(value: str) -> bool:
    return check_hreflang(value) is None


_NEWS_LANG = re.compile(r"[a-z]{2,3}|zh-cn|zh-tw", re.ASCII | re.IGNORECASE)


def check_news_language(value: str) -> str | None:
    """Why `value` is not a valid <news:language>, or None.

    Google: an ISO 639 code of two or three letters, except zh-cn and zh-tw
    for Chinese. Three-letter codes are checked for shape only (ISO 639-2/3
    has thousands of them).
    """
    v = value.strip()
    if not _NEWS_LANG.fullmatch(v):
        return "is not an ISO 639 language code (two or three letters, or zh-cn / zh-tw)"
    if len(v) == 2 and v.lower() not in ISO_639_1:
        return f"is not an ISO 639-1 code{_LANGUAGE_HINT_TEXT.get(v.lower(), '')}"
    return None

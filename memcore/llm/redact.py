"""Credentials never leave the process: URLs and messages are redacted before they are shown or stored.

URLs are redacted by default-deny: in every URL (an endpoint, a store URI, a URL inside an error message)
the userinfo (`user:password@`) is masked, and so is every query value and the fragment, unless the
parameter's name is on `HARMLESS` (settings that select an API, never a credential: `api-version`, `model`,
...). A new credential-bearing parameter (`X-Amz-Signature`, `jwt`, `code`, `#token=`) is therefore masked
without anyone listing it. Free text besides URLs loses OpenAI-style keys, bearer tokens and
`name=value` pairs whose name looks secret (`SECRET_NAMES`: a query string without its URL), and any `secrets` the caller passes.
`redact_url` and `redact` are the one guard for every place an endpoint or URL is printed or stored
(the provider's label and messages, eval run records, ledger rows, results, exports, CLI errors).
"""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit, urlunsplit

MASK = "***"
# query parameters and fragment keys whose values are shown (compared lower-case, '-' and '_' alike)
HARMLESS: frozenset[str] = frozenset({"api_version", "version", "model", "deployment", "region", "format",
                                      "lang", "locale", "timeout", "stream"})
# names that mark a secret in free text (`password=...`), outside any URL
SECRET_NAMES = (r"api[_-]?key|key|api[_-]?token|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|"
                r"token|auth|authorization|password|passwd|pass|pwd|secret|client[_-]?secret|sig|signature|"
                r"x-amz-signature|x-amz-credential|x-amz-security-token|credential|code|session|session[_-]?id|"
                r"sessionid|jwt")
_URL = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>`]+")
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_KEY = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}")  # OpenAI-style keys
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._\-~+/]{8,}=*")
_NAMED = re.compile(rf"(?i)(?<![A-Za-z0-9_-])((?:{SECRET_NAMES})=)[^\s&\"',;#]+")


def _harmless(name: str) -> bool:
    return name.strip().lower().replace("-", "_") in HARMLESS


def _pairs(text: str, sep: str = "&") -> str:
    """`a=1&b=2` with every value whose name is not HARMLESS masked; a piece without `=` is masked whole."""
    out = []
    for piece in text.split(sep):
        name, eq, _ = piece.partition("=")
        if not piece:
            out.append(piece)
        elif eq:
            out.append(piece if _harmless(name) else f"{name}={MASK}")
        else:
            out.append(MASK)
    return sep.join(out)


def redact_url(url: str) -> str:
    """The URL with userinfo, every query value and the fragment masked, except HARMLESS parameters."""
    if not url:
        return url
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # not parseable as a URL: mask as free text
        return _free_text(url)
    if not parts.scheme or not (parts.netloc or parts.query or parts.fragment):
        return _free_text(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = _pairs(parts.query) if parts.query else ""
    fragment = _pairs(parts.fragment) if parts.fragment else ""
    return urlunsplit(SplitResult(parts.scheme, netloc, parts.path, query, fragment))


def _free_text(text: str) -> str:
    out = _USERINFO.sub(lambda m: m.group("scheme") + f"{MASK}@", text)
    out = _KEY.sub(lambda m: m.group(1) + f"-{MASK}", out)
    out = _BEARER.sub(lambda m: m.group(1) + f" {MASK}", out)
    return _NAMED.sub(lambda m: m.group(1) + MASK, out)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with every URL redacted (redact_url), API keys, bearer tokens, secret-named values and `secrets` masked."""
    if not text:
        return text
    out = _URL.sub(lambda m: redact_url(m.group()), str(text))
    out = _free_text(out)
    for s in secrets:
        if s and len(s) >= 4:
            out = out.replace(s, MASK)
    return out


def url_secrets(url: str) -> tuple[str, ...]:
    """The credentials a URL carries, as they appear in it: its userinfo (and password), and every query or
    fragment value whose name is not HARMLESS (values of fewer than 4 characters left out: masking them would
    mask ordinary words)."""
    if not url:
        return ()
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ()
    found: list[str] = []
    if "@" in parts.netloc:
        user = parts.netloc.rpartition("@")[0]
        found += [user, user.partition(":")[2]]
    for text in (parts.query, parts.fragment):
        for piece in text.split("&") if text else []:
            name, eq, value = piece.partition("=")
            if eq and not _harmless(name):
                found.append(value)
    return tuple(s for s in found if len(s) >= 4)


def mask_secrets(text: str, secrets: tuple[str, ...]) -> str:
    """`text` with each of `secrets` (an API key, url_secrets of the endpoint) masked wherever it appears, and
    nothing else changed: a model's reply keeps every other word (redact would also mask `code=...` in data)."""
    if not text:
        return text
    for s in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(s, MASK)
    return text

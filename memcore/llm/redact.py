"""Credentials never leave the process: URLs and messages are redacted before they are shown or stored."""

from __future__ import annotations

import re

_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_SECRETS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{8,}"),  # OpenAI-style keys
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-~+/]{8,}=*"),
    re.compile(r"(?i)([?&](?:api[_-]?key|key|token|access_token|sig|signature)=)[^&\s]+"),
]


def redact_url(url: str) -> str:
    """The URL without user:password@ (and without secret query parameters)."""
    return redact(url)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with URL credentials, API keys, bearer tokens, secret query values and `secrets` masked."""
    if not text:
        return text
    out = _USERINFO.sub(lambda m: m.group("scheme") + "***@", text)
    out = _SECRETS[0].sub(lambda m: m.group(1) + "-***", out)
    out = _SECRETS[1].sub(lambda m: m.group(1) + " ***", out)
    out = _SECRETS[2].sub(lambda m: m.group(1) + "***", out)
    for s in secrets:
        if s and len(s) >= 4:
            out = out.replace(s, "***")
    return out

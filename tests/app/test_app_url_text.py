"""URLs in the app's text carry no invisible character (issue 37 minor 5): a provider error and the sidebar show
the endpoint's URL as a code span (the browser's Markdown never links inside one), so the URL on screen, and
copied from it, is the URL given; no U+2060 word joiner or other format character (AppTest)."""

from __future__ import annotations

import re
import unicodedata

from memcore.llm.mock_server import MockOpenAIServer
from tests.app.test_app_provider import home, use

CODE_SPAN = re.compile(r"(`+) ?(.*?) ?\1(?!`)")


def invisible(text: str) -> list[str]:
    """The format characters (Unicode category Cf: U+2060 word joiner, zero-width space and joiners ...)."""
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cf"]


def shown(at, url: str) -> list[str]:
    """Every Markdown text of the page (main and sidebar) that shows the URL."""
    values = [e.value for kind in ("markdown", "caption", "info", "warning", "error", "success")
              for e in getattr(at, kind)]
    values += [e.value for kind in ("caption", "warning", "error") for e in getattr(at.sidebar, kind)]
    host = url.split("//", 1)[1].split("/", 1)[0]
    return [v for v in values if host in v.replace("\\", "")]


def assert_url_as_code(texts: list[str], url: str) -> None:
    assert texts, "the URL is shown nowhere"
    for v in texts:
        assert not invisible(v), (invisible(v), v)
        assert url in [m.group(2) for m in CODE_SPAN.finditer(v)], v  # whole, and in a code span: never a live link
        assert "http" not in CODE_SPAN.sub("", v), v  # no part of it outside the span, where it would be linked


def test_a_provider_error_shows_the_url_without_invisible_characters(app_env) -> None:
    url = "http://127.0.0.1:9/v1"
    at = use(home(), "openai", key="sk-test", url=url)
    errors = [e.value for e in at.error]
    assert any("cannot connect" in e for e in errors), errors
    assert_url_as_code([e for e in errors if "127.0.0.1:9" in e.replace("\\", "")], url)
    assert all(not invisible(t) for t in shown(at, url))


def test_the_sidebar_shows_the_endpoint_url_without_invisible_characters(app_env) -> None:
    at = use(home(), "openai")
    with MockOpenAIServer() as srv:
        at = use(at, "openai", key="sk-test-123", url=srv.base_url)
        assert not at.exception and not at.error, [e.value for e in at.error]
        llm = [c.value for c in at.sidebar.caption if c.value.startswith("**LLM:**")]
        host = srv.base_url.split("//", 1)[1].split("/", 1)[0]
        assert any(host in c for c in llm), llm
        for c in llm:
            assert not invisible(c), (invisible(c), c)
            assert "//" not in CODE_SPAN.sub("", c), c  # the URL sits in a code span: never a live link
        assert all(not invisible(t) for t in shown(at, srv.base_url))

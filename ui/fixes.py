"""Fix texts in the app's words: the library's errors name CLI flags and environment variables (the CLI's
controls); the app shows the same errors with the name of its own control instead."""

from __future__ import annotations

import re

from memcore.datasets.checks import LENIENT_FIX
from memcore.llm import fixes

PROVIDER_FORM = "Home › LLM provider"
FALLBACK_BOX = "Store the role's declared fallback when a reply stays unusable"  # the form's checkbox (ui/provider.py)

IN_APP: dict[str, str] = {
    fixes.NEEDS_KEY: f"it needs an API key: type it in the API key field ({PROVIDER_FORM}), or give the Base "
                     "URL of a local OpenAI-compatible server there, or choose the offline engine",
    fixes.FIX_URL: f"Fix: start the server or correct the Base URL in {PROVIDER_FORM}, or choose the offline "
                   "engine there",
    fixes.FIX_KEY: f"Fix: check the API key in {PROVIDER_FORM}",
    fixes.FIX_MODEL: f"Fix: check the Model, and that the Base URL ends in /v1 ({PROVIDER_FORM})",
    fixes.FIX_TIMEOUT: "Fix: check the server, or start the app with a longer read timeout "
                       "(MEMCORE_LLM_TIMEOUT, seconds)",
    fixes.LARGER_MODEL: f"a larger model (Model, {PROVIDER_FORM})",
    fixes.UNUSABLE_FALLBACK: f'tick "{FALLBACK_BOX}" ({PROVIDER_FORM}) to store the role\'s fallback output, named '
                             "as such in the results",
    LENIENT_FIX: 'or tick "Accept format problems" (Home › Load a dataset file) and load it again to accept it '
                 "as it is, with a warning",
}


# a dataset loaded as the wrong format (memcore.datasets.load_dataset): the CLI's --dataset is the loader's Format
LOADER = "Home › Load a dataset file"
_FORMAT_FIXES = ((re.compile(r"pass --dataset ([\w-]+) \(or --dataset auto\)"), rf'choose Format "\1" ({LOADER})'),
                 (re.compile(r"name its format with --dataset \([^)]*\)"), f"choose its Format ({LOADER})"),
                 # a run without a file (memcore.eval.runner.load_conversations)
                 (re.compile(r"--dataset ([\w-]+) needs --file PATH \(or use --dataset demo\)"),
                  r'Dataset "\1" needs a file: type its path in "Dataset file" (Benchmark › Start a run), or load the '
                  rf'file on Home ({LOADER}) and choose it, or choose the demo'))


def in_app(message: str) -> str:
    """An error message with each library fix text replaced by the app's own wording."""
    for cli, app in IN_APP.items():
        message = message.replace(cli, app)
    for pattern, app in _FORMAT_FIXES:
        message = pattern.sub(app, message)
    return message

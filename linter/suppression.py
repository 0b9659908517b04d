"""Suppression: `# noqa` comments and per-file ignores from the settings."""

from __future__ import annotations

import re

from .registry import Finding
from .settings import Settings
from .source import Source

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)


def suppressed(finding: Finding, source: Source | None, file_format: str | None, settings: Settings) -> bool:
    """Is `finding` switched off for its file (`settings` are that file's), by a per-file ignore or
    by a `# noqa` on its line? JSON has no comments: only per-file ignores apply there."""
    path = finding.span.path
    if any(finding.code.startswith(code) for code in settings.ignored_codes(path)):
        return True
    if source is None or file_format in (None, "json"):
        return False
    line_start = source.line_starts[finding.span.line - 1]
    match = _NOQA.search(source.text, line_start, source.line_end(line_start))
    if not match:
        return False
    codes = match.group("codes")
    return codes is None or finding.code in {code.strip().upper() for code in codes.split(",")}

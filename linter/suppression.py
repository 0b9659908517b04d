"""Suppression: whether a finding is silenced by `per-file-ignores` or a `# noqa` comment.

Moved out of engine.py so that suppression can grow (noqa code checks, key-path ignores for
JSON, baselines) without touching the pipeline.
"""

from __future__ import annotations

import re

from .ir import Run
from .registry import Finding
from .settings import Settings

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?", re.I)


def suppressed(finding: Finding, run: Run, settings: Settings) -> bool:
    """`settings` are the Settings for finding.span.path."""
    path = finding.span.path
    if any(finding.code.startswith(code) for code in settings.ignored_codes(path)):
        return True
    config = next((config for config in run.configs if config.path == path), None)
    if config is None or config.document is None or config.document.format == "json":
        return False
    source = config.document.source
    line_start = source.line_starts[finding.span.line - 1]
    match = _NOQA.search(source.text, line_start, source.line_end(line_start))
    if not match:
        return False
    codes = match.group("codes")
    return codes is None or finding.code in {code.strip().upper() for code in codes.split(",")}

"""Reporters: text (the default) and json (SPEC §8)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TextIO

from .fixes import Applicability, Fix
from .registry import Finding
from .source import Source

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


def display_path(path: Path) -> str:
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        return str(path)
    return str(path) if relative.startswith("..") else relative


def use_colour(stream: TextIO) -> bool:
    return stream.isatty() and "NO_COLOR" not in os.environ


def text(findings: list[Finding], stream: TextIO, fixed: int, quiet: bool, unsafe: bool) -> None:
    colour = use_colour(stream)
    for finding in findings:
        span = finding.span
        marker = " [*]" if finding.fix is not None and finding.fix.applies(unsafe) else ""
        code = finding.code
        if colour:
            code = f"{_BOLD}{_COLOURS.get(finding.severity, '')}{code}{_RESET}"
        stream.write(f"{display_path(span.path)}:{span.line}:{span.column}: {code}{marker} {finding.message}\n")
    if quiet:
        return
    if not findings:
        stream.write(f"All checks passed!{f' ({fixed} fixed)' if fixed else ''}\n")
        return
    safe = sum(1 for f in findings if f.fix is not None and f.fix.applies(False))
    hidden = sum(1 for f in findings if f.fix is not None and f.fix.edits
                 and f.fix.applicability is Applicability.UNSAFE)
    plural = "s" if len(findings) != 1 else ""
    if fixed:
        stream.write(f"Found {len(findings) + fixed} problem{'s' if len(findings) + fixed != 1 else ''} "
                     f"({fixed} fixed, {len(findings)} remaining).\n")
    else:
        stream.write(f"Found {len(findings)} problem{plural} ({safe} fixable with --fix, "
                     f"{hidden} with --unsafe-fixes).\n")


def _position(sources: dict[Path, Source], path: Path, offset: int) -> tuple[int, int]:
    source = sources.get(path)
    if source is None:
        return 1, 1
    position = source.position(offset)
    return position.line, position.column


def _fix_json(fix: Fix | None, sources: dict[Path, Source]) -> dict | None:
    if fix is None:
        return None
    edits = []
    for edit in fix.edits:
        line, column = _position(sources, edit.path, edit.start)
        end_line, end_column = _position(sources, edit.path, edit.end)
        edits.append({"file": display_path(edit.path), "line": line, "column": column,
                      "end_line": end_line, "end_column": end_column, "content": edit.content})
    applicability = fix.applicability.value if edits else Applicability.DISPLAY_ONLY.value
    return {"applicability": applicability, "message": fix.message, "edits": edits}


def as_json(findings: list[Finding], sources: dict[Path, Source]) -> list[dict]:
    return [
        {
            "code": finding.code,
            "name": finding.name,
            "severity": finding.severity,
            "message": finding.message,
            "file": display_path(finding.span.path),
            "line": finding.span.line,
            "column": finding.span.column,
            "end_line": finding.span.end_line,
            "end_column": finding.span.end_column,
            "framework": finding.framework,
            "targets": finding.targets,
            "fix": _fix_json(finding.fix, sources),
        }
        for finding in findings
    ]


def json_report(findings: list[Finding], sources: dict[Path, Source], stream: TextIO) -> None:
    json.dump(as_json(findings, sources), stream, indent=2)
    stream.write("\n")

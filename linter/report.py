"""Reporters: text (the default), json (validated by schemas/report.schema.json), sarif and github."""

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


_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _uri(path: Path) -> str:
    return display_path(path).replace(os.sep, "/")


def _region(sources: dict[Path, Source], path: Path, start: int, end: int) -> dict:
    line, column = _position(sources, path, start)
    end_line, end_column = _position(sources, path, end)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def sarif(findings: list[Finding], sources: dict[Path, Source], rules: list, version: str) -> dict:
    """A SARIF 2.1.0 log: one run, every rule with its help text, fixes as SARIF `fixes`."""
    index = {rule.code: position for position, rule in enumerate(rules)}
    results = []
    for finding in findings:
        span = finding.span
        result = {
            "ruleId": finding.code,
            "level": _SARIF_LEVELS[finding.severity],
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": _uri(span.path)},
                "region": {"startLine": span.line, "startColumn": span.column,
                           "endLine": span.end_line, "endColumn": span.end_column},
            }}],
        }
        if finding.code in index:
            result["ruleIndex"] = index[finding.code]
        if finding.targets:
            result["properties"] = {"targets": finding.targets}
        fix = finding.fix
        if fix is not None and fix.edits:
            by_file: dict[Path, list] = {}
            for edit in fix.edits:
                by_file.setdefault(edit.path, []).append({
                    "deletedRegion": _region(sources, edit.path, edit.start, edit.end),
                    "insertedContent": {"text": edit.content},
                })
            result["fixes"] = [{
                "description": {"text": f"{fix.message} ({fix.applicability.value})"},
                "artifactChanges": [{"artifactLocation": {"uri": _uri(path)}, "replacements": replacements}
                                    for path, replacements in by_file.items()],
            }]
        results.append(result)
    driver_rules = []
    for rule in rules:
        documentation = rule.documentation()
        summary = documentation.split("## What it does", 1)[-1].split("##", 1)[0].strip()
        driver_rules.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": summary.split(". ")[0].rstrip(".") + "."},
            "fullDescription": {"text": " ".join(summary.split())},
            "help": {"text": documentation, "markdown": documentation},
            "defaultConfiguration": {"level": _SARIF_LEVELS[rule.severity], "enabled": rule.default_enabled},
            "properties": {"fixable": rule.fix_applicability.value if rule.fix_applicability else None},
        })
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "trainlint", "version": version,
                                "informationUri": "https://github.com/trainlint/trainlint",
                                "rules": driver_rules}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


_GITHUB_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[Finding], stream: TextIO) -> None:
    """GitHub Actions workflow commands: one annotation per finding."""
    for finding in findings:
        span = finding.span
        properties = ",".join([
            f"file={_escape_property(display_path(span.path))}", f"line={span.line}", f"end_line={span.end_line}",
            f"col={span.column}", f"title={finding.code}",
        ])
        stream.write(f"::{_GITHUB_COMMANDS[finding.severity]} {properties}::{_escape_data(finding.message)}\n")


def statistics(findings: list[Finding], stream: TextIO, unsafe: bool) -> None:
    """Counts per code, most frequent first (ruff's --statistics)."""
    counts: dict[str, list[Finding]] = {}
    for finding in findings:
        counts.setdefault(finding.code, []).append(finding)
    for code, group in sorted(counts.items(), key=lambda item: (-len(item[1]), item[0])):
        fixable = "[*]" if any(f.fix is not None and f.fix.applies(unsafe) for f in group) else "[ ]"
        stream.write(f"{len(group):>5}\t{code:<7}\t{fixable} {group[0].name}\n")


def show_fixes(applied: list[tuple[Path, str, str]], stream: TextIO) -> None:
    """What --fix changed, per file and code (ruff's --show-fixes)."""
    if not applied:
        return
    stream.write(f"\nFixed {len(applied)} problem{'s' if len(applied) != 1 else ''}:\n")
    by_file: dict[Path, dict[tuple[str, str], int]] = {}
    for path, code, name in applied:
        counts = by_file.setdefault(path, {})
        counts[(code, name)] = counts.get((code, name), 0) + 1
    for path, counts in by_file.items():
        stream.write(f"- {display_path(path)}:\n")
        for (code, name), count in sorted(counts.items()):
            stream.write(f"    {count} × {code} ({name})\n")

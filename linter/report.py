"""Reporters: text (the default), json, SARIF 2.1.0 and GitHub Actions workflow commands."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TextIO

from .fixes import Applicability, Fix
from .registry import Finding
from .source import Source, checkout_root, display_path

_COLOURS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _RESET = "\033[1m", "\033[0m"


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
    if not quiet:
        stream.write(summary(findings, fixed) + "\n")


def summary(findings: list[Finding], fixed: int) -> str:
    if not findings:
        return f"All checks passed!{f' ({fixed} fixed)' if fixed else ''}"
    safe = sum(1 for f in findings if f.fix is not None and f.fix.applies(False))
    hidden = sum(1 for f in findings if f.fix is not None and f.fix.edits
                 and f.fix.applicability is Applicability.UNSAFE)
    plural = "s" if len(findings) != 1 else ""
    if fixed:
        return (f"Found {len(findings) + fixed} problem{'s' if len(findings) + fixed != 1 else ''} "
                f"({fixed} fixed, {len(findings)} remaining).")
    return f"Found {len(findings)} problem{plural} ({safe} fixable with --fix, {hidden} with --unsafe-fixes)."


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


def json_report(findings: list[Finding], sources: dict[Path, Source], stream: TextIO,
                applied: list[tuple[Path, str, str]] | None = None) -> None:
    """The findings array; with --show-fixes an object that also lists the fixes --fix applied
    (schemas/report.schema.json describes both)."""
    document: list | dict = as_json(findings, sources)
    if applied is not None:
        document = {"findings": document, "applied_fixes": applied_json(applied)}
    json.dump(document, stream, indent=2)
    stream.write("\n")


def applied_json(applied: list[tuple[Path, str, str]]) -> list[dict]:
    counts: dict[tuple[str, str, str], int] = {}
    for path, code, name in applied:
        key = (display_path(path), code, name)
        counts[key] = counts.get(key, 0) + 1
    return [{"file": file, "code": code, "name": name, "count": count}
            for (file, code, name), count in counts.items()]


def statistics_rows(findings: list[Finding], unsafe: bool) -> list[dict]:
    """Counts per code, most frequent first (ruff's --statistics)."""
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.code, []).append(finding)
    return [{"code": code, "name": group[0].name, "count": len(group),
             "fixable": any(f.fix is not None and f.fix.applies(unsafe) for f in group)}
            for code, group in sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))]


def statistics_json(findings: list[Finding], stream: TextIO, unsafe: bool) -> None:
    json.dump(statistics_rows(findings, unsafe), stream, indent=2)
    stream.write("\n")


# ---- SARIF 2.1.0 ----------------------------------------------------------------------------

_SARIF_LEVELS = {"error": "error", "warning": "warning", "info": "note"}
SRCROOT = "SRCROOT"
# Where each rule's page lives (docs/rules/<CODE>.md, generated from the registry). The GitHub
# Action sets TRAINLINT_RULE_DOCS_URL to the pages at the commit of trainlint it runs.
RULE_DOCS_URL = "https://github.com/trainlint/trainlint/blob/main/docs/rules/{code}.md"
REPOSITORY_URL = "https://github.com/trainlint/trainlint"


def rule_docs_url(code: str) -> str:
    base = os.environ.get("TRAINLINT_RULE_DOCS_URL")
    return f"{base.rstrip('/')}/{code}.md" if base else RULE_DOCS_URL.format(code=code)


def repository_root(start: Path | None = None) -> Path:
    """The folder SARIF URIs are relative to: $GITHUB_WORKSPACE under GitHub Actions, else the
    enclosing git work tree, else the current directory."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        return Path(os.path.realpath(workspace))
    here = Path(os.path.realpath(start or Path.cwd()))
    return checkout_root(here) or here


class _Uris:
    """Artifact locations: root-relative and percent-encoded under %SRCROOT%, or an absolute
    file URI for a file outside the root."""

    def __init__(self, root: Path):
        from urllib.parse import quote  # SARIF only

        self.root = root
        self._quote = quote

    def location(self, path: Path) -> dict:
        absolute = Path(os.path.realpath(path))
        try:
            relative = absolute.relative_to(self.root)
        except ValueError:
            return {"uri": absolute.as_uri()}
        return {"uri": self._quote(relative.as_posix()), "uriBaseId": SRCROOT}

    def base_ids(self) -> dict:
        return {SRCROOT: {"uri": self.root.as_uri().rstrip("/") + "/"}}


def _region(sources: dict[Path, Source], path: Path, start: int, end: int) -> dict:
    line, column = _position(sources, path, start)
    end_line, end_column = _position(sources, path, end)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _result_region(span) -> dict:
    """A finding's region, never empty: a point (SYN001, a key at end of file) covers one column."""
    end_line, end_column = span.end_line, span.end_column
    if (end_line, end_column) <= (span.line, span.column):
        end_line, end_column = span.line, span.column + 1
    return {"startLine": span.line, "startColumn": span.column, "endLine": end_line, "endColumn": end_column}


def one_line_summary(rule, limit: int = 120) -> str:
    """The first sentence of the rule's "What it does", on one line, at most `limit` characters."""
    documentation = rule.documentation()
    what = " ".join(documentation.split("## What it does", 1)[-1].split("##", 1)[0].split())
    sentence = what.split(". ")[0].rstrip(".") + "."
    if len(sentence) > limit:
        sentence = sentence[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return sentence


def _fingerprint(finding: Finding, uri: str, lines: dict[Path, list[str]], seen: dict[str, int]) -> str:
    """Stable across unrelated edits: the code, the file and the text of the finding's line (not
    its number), with a count for repeats."""
    import hashlib

    path = finding.span.path
    if path not in lines:
        try:
            lines[path] = Path(path).read_text("utf-8", errors="replace").splitlines()
        except OSError:
            lines[path] = []
    file_lines = lines[path]
    line_text = file_lines[finding.span.line - 1].strip() if 0 < finding.span.line <= len(file_lines) else ""
    digest = hashlib.sha256("\0".join((finding.code, uri, line_text)).encode()).hexdigest()[:32]
    seen[digest] = seen.get(digest, 0) + 1
    return f"{digest}:{seen[digest]}"


def automation_id(targets: list[str]) -> str:
    """A category per set of GPU targets, so that a CI matrix over targets keeps one result set each."""
    label = "+".join(name.replace(" ", "_") for name in sorted(set(targets))) or "no-target"
    return f"trainlint/{label}/"


def sarif(findings: list[Finding], sources: dict[Path, Source], rules: list, version: str,
          root: Path | None = None, automation: str | None = None,
          applied: list[tuple[Path, str, str]] | None = None, statistics: list[dict] | None = None) -> dict:
    """A SARIF 2.1.0 log: one run, every rule with its help text, fixes as SARIF `fixes`."""
    uris = _Uris(root or repository_root())
    index = {rule.code: position for position, rule in enumerate(rules)}
    lines: dict[Path, list[str]] = {}
    seen: dict[str, int] = {}
    results = []
    for finding in findings:
        span = finding.span
        location = uris.location(span.path)
        result = {
            "ruleId": finding.code,
            "level": _SARIF_LEVELS[finding.severity],
            "message": {"text": finding.message},
            "locations": [{"physicalLocation": {"artifactLocation": location, "region": _result_region(span)}}],
            "partialFingerprints": {"trainlint/v1": _fingerprint(finding, location["uri"], lines, seen)},
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
                "artifactChanges": [{"artifactLocation": uris.location(path), "replacements": replacements}
                                    for path, replacements in by_file.items()],
            }]
        results.append(result)
    driver_rules = []
    for rule in rules:
        documentation = rule.documentation()
        summary_text = documentation.split("## What it does", 1)[-1].split("##", 1)[0]
        driver_rules.append({
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": one_line_summary(rule)},
            "fullDescription": {"text": " ".join(summary_text.split())},
            "helpUri": rule_docs_url(rule.code),
            "help": {"text": documentation, "markdown": documentation},
            "defaultConfiguration": {"level": _SARIF_LEVELS[rule.severity], "enabled": rule.default_enabled},
            "properties": {"fixable": rule.fix_applicability.value if rule.fix_applicability else None},
        })
    run: dict = {
        "tool": {"driver": {"name": "trainlint", "version": version, "informationUri": REPOSITORY_URL,
                            "rules": driver_rules}},
        "automationDetails": {"id": automation or automation_id([])},
        "originalUriBaseIds": uris.base_ids(),
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    properties = {}
    if applied is not None:
        properties["appliedFixes"] = applied_json(applied)
    if statistics is not None:
        properties["statistics"] = statistics
    if properties:
        run["properties"] = properties
    return {"$schema": "https://json.schemastore.org/sarif-2.1.0.json", "version": "2.1.0", "runs": [run]}


# ---- GitHub Actions -------------------------------------------------------------------------

_GITHUB_COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _workspace_path(path: Path) -> str:
    """Annotation paths are relative to $GITHUB_WORKSPACE (the checkout), wherever trainlint runs."""
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace:
        try:
            return Path(os.path.realpath(path)).relative_to(Path(os.path.realpath(workspace))).as_posix()
        except ValueError:
            pass
    return display_path(path).replace(os.sep, "/")


def github(findings: list[Finding], stream: TextIO, fixed: int = 0, unsafe: bool = False) -> None:
    """GitHub Actions workflow commands, one annotation per finding, then the full text report in
    a collapsed group and a summary line: GitHub shows at most 10 error and 10 warning annotations
    per step, and the log keeps the rest."""
    for finding in findings:
        span = finding.span
        region = _result_region(span)
        path = _workspace_path(span.path)
        properties = ",".join([
            f"file={_escape_property(path)}", f"line={region['startLine']}", f"endLine={region['endLine']}",
            f"col={region['startColumn']}", f"endColumn={region['endColumn']}",
            f"title={_escape_property(f'{finding.code} {finding.name}')}",
        ])
        message = f"{display_path(span.path)}:{span.line}:{span.column}: {finding.message}"
        stream.write(f"::{_GITHUB_COMMANDS[finding.severity]} {properties}::{_escape_data(message)}\n")
    if findings:
        stream.write("::group::trainlint: every finding\n")
        text(findings, stream, fixed, quiet=True, unsafe=unsafe)
        stream.write("::endgroup::\n")
    stream.write(summary(findings, fixed) + "\n")


def statistics(findings: list[Finding], stream: TextIO, unsafe: bool) -> None:
    """Counts per code, most frequent first (ruff's --statistics)."""
    for row in statistics_rows(findings, unsafe):
        stream.write(f"{row['count']:>5}\t{row['code']:<7}\t{'[*]' if row['fixable'] else '[ ]'} {row['name']}\n")


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

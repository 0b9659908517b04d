"""Rule documentation as users read it: `trainlint rule CODE`, `trainlint rules` (a table, JSON
or markdown) and the generated pages under docs/rules/."""

from __future__ import annotations

import json
import sys

EXIT_CLEAN, EXIT_ERROR = 0, 2

def run_rule(args) -> int:
    from . import registry

    rule = registry.get(args.code)
    if rule is None:
        print(f"trainlint: unknown rule code {args.code!r}; `trainlint rules` lists them", file=sys.stderr)
        return EXIT_ERROR
    print(rule.documentation())
    return EXIT_CLEAN


def _rules_rows() -> list[dict]:
    from . import registry

    return [
        {"code": rule.code, "name": rule.name, "severity": rule.severity,
         "fixable": rule.fix_applicability.value if rule.fix_applicability else None,
         "default": rule.default_enabled, "needs_targets": rule.needs_targets,
         "summary": " ".join(rule.documentation().split("## What it does", 1)[-1].split("##", 1)[0].split())}
        for rule in registry.all_rules()
    ]


def rules_markdown() -> str:
    """The README's rule table, generated from the registry."""
    lines = ["| code | name | severity | fix | default | what it does |", "|---|---|---|---|---|---|"]
    for row in _rules_rows():
        first_sentence = row["summary"].split(". ")[0].rstrip(".") + "."
        lines.append(f"| [{row['code']}](docs/rules/{row['code']}.md) | {row['name']} | {row['severity']} | {row['fixable'] or '-'} | "
                     f"{'on' if row['default'] else 'off'} | {first_sentence} |")
    return "\n".join(lines) + "\n"


def _fenced(text: str) -> str:
    """Docstring examples are indented 4 spaces; in Markdown an indented block cannot follow a
    paragraph line ("Use instead:"), so each becomes a fenced block."""
    out: list[str] = []
    block: list[str] = []

    def flush():
        while block and not block[-1].strip():
            block.pop()
        if block:
            out.extend(["```", *(line[4:] for line in block), "```"])
        block.clear()

    for line in text.split("\n"):
        if line.startswith("    ") or (block and not line.strip()):
            block.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return "\n".join(out)


def rule_pages() -> dict[str, str]:
    """docs/rules/<CODE>.md for every rule, and README.md (an index): the text `trainlint rule CODE`
    prints, under a heading and a line of facts from the registry."""
    from . import registry

    pages = {}
    index = ["# trainlint rules", "",
             "Generated from the registry by `trainlint rules --write-pages docs/rules`; a test fails when "
             "these pages drift.", "", "| code | name | severity | fix | default |", "|---|---|---|---|---|"]
    for rule in registry.all_rules():
        fix = rule.fix_applicability.value if rule.fix_applicability else "none"
        facts = (f"Severity: {rule.severity}. Fix: {fix}. "
                 f"{'On' if rule.default_enabled else 'Off'} by default"
                 f"{'; needs a GPU target' if rule.needs_targets else ''}.")
        body = rule.documentation().split("\n", 1)[1].lstrip("\n") if "\n" in rule.documentation() else ""
        pages[f"{rule.code}.md"] = f"# {rule.code} {rule.name}\n\n{facts}\n\n{_fenced(body.rstrip())}\n"
        index.append(f"| [{rule.code}]({rule.code}.md) | {rule.name} | {rule.severity} | {fix} | "
                     f"{'on' if rule.default_enabled else 'off'} |")
    pages["README.md"] = "\n".join(index) + "\n"
    return pages


def run_rules(args) -> int:
    if args.write_pages is not None:
        args.write_pages.mkdir(parents=True, exist_ok=True)
        pages = rule_pages()
        for stale in args.write_pages.glob("*.md"):
            if stale.name not in pages:
                stale.unlink()
        for name, text in pages.items():
            (args.write_pages / name).write_text(text, "utf-8")
        print(f"wrote {len(pages)} pages to {args.write_pages}")
        return EXIT_CLEAN
    rows = _rules_rows()
    if args.format == "json":
        print(json.dumps(rows, indent=2))
        return EXIT_CLEAN
    if args.format == "markdown":
        sys.stdout.write(rules_markdown())
        return EXIT_CLEAN
    for row in rows:
        fixable = row["fixable"] or "-"
        state = "on" if row["default"] else "off"
        print(f"{row['code']:<8} {row['name']:<36} {row['severity']:<8} fix:{fixable:<13} {state}")
    return EXIT_CLEAN

"""Command line (SPEC §3). Exit codes: 0 nothing to report, 1 findings remain (or --diff shows
changes), 2 usage error, unreadable path, or internal error."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(text: str) -> list[str]:
    return [code.strip().upper() for code in text.split(",") if code.strip()]


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trainlint",
        description="Lint and auto-patch LLM fine-tuning configs for the GPUs they will run on.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser("check", help="lint configs (default path: .)")
    check.add_argument("paths", nargs="*", type=Path, metavar="PATH")
    check.add_argument("--fix", action="store_true", help="apply safe fixes and write files")
    check.add_argument("--unsafe-fixes", action="store_true", default=None,
                       help="also apply (with --fix) or show (with --diff) unsafe fixes")
    check.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                       help=argparse.SUPPRESS)
    check.add_argument("--diff", action="store_true", help="print the diff the fixes would make; write nothing")
    check.add_argument("--select", type=_codes, help="rule codes or prefixes to enable (replaces the default set)")
    check.add_argument("--ignore", type=_codes, default=[], help="rule codes or prefixes to disable")
    check.add_argument("--extend-select", type=_codes, default=[], help="rule codes or prefixes to add")
    check.add_argument("--gpu", metavar="TARGETS", help="comma list of GPU names (V100, A100-80GB) or "
                                                        "compute capabilities (7.0, sm_80); overrides detection")
    check.add_argument("--no-detect", action="store_true", help="do not query NVML or torch for GPUs")
    check.add_argument("--world-size", type=_positive, help="number of GPUs in the job")
    check.add_argument("--format", choices=["text", "json", "sarif", "github"], default=None,
                       help="output format (default: github under GitHub Actions, else text)")
    check.add_argument("--statistics", action="store_true", help="print the number of findings per code")
    check.add_argument("--show-fixes", action="store_true", help="list the fixes --fix applied")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    check.add_argument("--config", type=Path, metavar="FILE", help="settings file to use instead of discovery")
    check.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary or notes")
    check.add_argument("--verbose", "-v", action="store_true", help="also report skipped files")

    rule = commands.add_parser("rule", help="show a rule's documentation")
    rule.add_argument("code")

    rules = commands.add_parser("rules", help="list every rule")
    rules.add_argument("--format", choices=["text", "json", "markdown"], default="text")

    hardware = commands.add_parser("hardware", help="show detected GPU targets and their capabilities")
    hardware.add_argument("--gpu", metavar="TARGETS", help="show these targets instead of detecting")
    hardware.add_argument("--format", choices=["text", "json"], default="text")
    estimate = commands.add_parser("estimate", help="per-GPU peak memory of a run, and where it goes")
    estimate.add_argument("config", type=Path, metavar="CONFIG")
    estimate.add_argument("--gpu", metavar="TARGETS", help="compare with these GPUs instead of detected ones")
    estimate.add_argument("--no-detect", action="store_true", help="do not query NVML or torch for GPUs")
    estimate.add_argument("--world-size", type=_positive, help="number of GPUs in the job (ZeRO partitioning)")
    estimate.add_argument("--format", choices=["text", "json"], default="text")
    return parser


def _run_estimate(args) -> int:
    from .engine import Options, Session, UsageError
    from .memory import estimate

    session = Session(Options(gpu=args.gpu, detect=not args.no_detect, world_size=args.world_size))
    if not args.config.is_file():
        raise UsageError(f"{args.config}: no such file")
    loaded = session.load(args.config, explicit=True)
    if loaded.syntax is not None:
        span = loaded.syntax.span
        print(f"{args.config}:{span.line}:{span.column}: SYN001 {loaded.syntax.message}", file=sys.stderr)
        return EXIT_FINDINGS
    if loaded.config is None:
        raise UsageError(f"{args.config}: no adapter recognises this file")
    run = session.build_runs([loaded.config])[0]
    settings = session.settings_for(args.config)
    result = estimate(run, args.world_size or settings.world_size)
    if result is None:
        from .models import why_unknown

        name = run.value("model.name")
        if not isinstance(name, str):  # absent, or null (a PEFT adapter_config.json saved without its base)
            raise UsageError(f"{args.config}: names no model; estimate the training config that uses it "
                             "(a DeepSpeed or accelerate file is estimated through the config that links it)")
        raise UsageError(f"{args.config}: {why_unknown(name)}")
    targets = session.hardware_for(settings).targets
    rows = [{"target": t.name, "memory_gib": t.memory_gib,
             "used_percent": round(100 * result.total_gib / t.memory_gib, 1) if t.memory_gib else None}
            for t in targets]
    if args.format == "json":
        print(json.dumps({"model": result.model, "components": [{"component": n, "gib": round(g, 3)}
                                                                  for n, g in result.components],
                          "total_gib": round(result.total_gib, 3), "model_states_gib": round(result.model_states_gib, 3),
                          "world_size": result.world_size, "assumptions": result.assumptions,
                          "targets": rows}, indent=2))
        return EXIT_CLEAN
    from .memory_bars import memory_bars
    from .report import use_colour

    width = max(len(name) for name, _ in result.components)
    print(f"{result.model}: estimated peak memory per GPU")
    for name, gib in result.components:
        print(f"  {name:<{width}}  {gib:8.2f} GiB")
    print(f"  {'total':<{width}}  {result.total_gib:8.2f} GiB")
    print(f"  {'model states (weights, gradients, optimizer)':<{width}}  {result.model_states_gib:8.2f} GiB")
    for assumption in result.assumptions:
        print(f"  assumed: {assumption}")
    for row in rows:
        print(f"  on {row['target']} ({row['memory_gib']:g} GiB): {row['used_percent']}% of memory")
    for line in memory_bars(result.components, [(t.name, t.memory_gib) for t in targets if t.memory_gib],
                            colour=use_colour(sys.stdout)):
        print(line)
    return EXIT_CLEAN


def _run_check(args) -> int:
    from . import report
    from .engine import Options, Session

    options = Options(
        fix=args.fix, unsafe_fixes=args.unsafe_fixes, diff=args.diff, select=args.select,
        ignore=args.ignore, extend_select=args.extend_select, gpu=args.gpu, detect=not args.no_detect,
        world_size=args.world_size, config_file=args.config, verbose=args.verbose,
    )
    session = Session(options)
    outcome = session.check(args.paths or [Path(".")])
    for note in outcome.notes:
        print(f"trainlint: {note}" if not note.startswith("trainlint:") else note, file=sys.stderr)
    if outcome.no_target_note and not args.quiet:
        print(outcome.no_target_note, file=sys.stderr)
    if args.diff:
        sys.stdout.write("".join(outcome.diffs))
        return EXIT_CLEAN if args.exit_zero or not outcome.diffs else EXIT_FINDINGS
    unsafe = bool(args.unsafe_fixes)
    output_format = args.format or ("github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text")
    if args.statistics:
        report.statistics(outcome.findings, sys.stdout, unsafe)
    elif output_format == "json":
        report.json_report(outcome.findings, outcome.sources, sys.stdout)
    elif output_format == "sarif":
        from . import __version__, registry

        log = report.sarif(outcome.findings, outcome.sources, registry.all_rules(), __version__)
        print(json.dumps(log, indent=2))
    elif output_format == "github":
        report.github(outcome.findings, sys.stdout)
    else:
        report.text(outcome.findings, sys.stdout, outcome.fixed, args.quiet, unsafe)
    if args.show_fixes:
        report.show_fixes(outcome.applied, sys.stdout)
    if outcome.findings and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _run_rule(args) -> int:
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
        lines.append(f"| {row['code']} | {row['name']} | {row['severity']} | {row['fixable'] or '-'} | "
                     f"{'on' if row['default'] else 'off'} | {first_sentence} |")
    return "\n".join(lines) + "\n"


def _run_rules(args) -> int:
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


def _run_hardware(args) -> int:
    from .hardware import resolve

    hardware = resolve(args.gpu, None if args.gpu else os.environ.get("TRAINLINT_GPU"), None, True)
    data = {"origin": hardware.origin, "targets": [target.as_dict() for target in hardware.targets],
            "not_detected": hardware.reasons}
    if args.format == "json":
        print(json.dumps(data, indent=2))
        return EXIT_CLEAN
    if not hardware.targets:
        print("No GPU target: not detected: " + ("; ".join(hardware.reasons) or "no reason given"))
        print("Name one with --gpu (e.g. --gpu A100) or TRAINLINT_GPU.")
        return EXIT_CLEAN
    print(f"Targets from {hardware.origin}:")
    for target in hardware.targets:
        caps = ", ".join(name for name, on in target.as_dict()["capabilities"].items() if on) or "none"
        memory = f"{target.memory_gib:g} GiB" if target.memory_gib else "memory unknown"
        print(f"  {target.name}: compute capability {target.cc}, {memory}; supports: {caps}")
    return EXIT_CLEAN


def main(argv: list[str] | None = None) -> int:
    from .engine import UsageError
    from .hardware import TargetError
    from .settings import SettingsError

    parser = build_parser()
    args = parser.parse_args(argv)
    handlers = {"check": _run_check, "rule": _run_rule, "rules": _run_rules, "hardware": _run_hardware,
                "estimate": _run_estimate}
    try:
        return handlers[args.command](args)
    except (UsageError, TargetError, SettingsError) as error:
        print(f"trainlint: error: {error}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN
    except Exception as error:  # noqa: BLE001 - the promise is: no traceback for users
        if os.environ.get("TRAINLINT_DEBUG") == "1":
            raise
        print(f"trainlint: internal error: {type(error).__name__}: {error} -- this is a bug; "
              "rerun with TRAINLINT_DEBUG=1 for a traceback", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

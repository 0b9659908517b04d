"""Recall on mined incidents: run trainlint on each fixture under tests/fixtures/incidents/ and
rewrite bench/incidents.md with what was caught.

Each incident folder holds the config files that reproduce one real failure, plus:
  expect.txt   `key: value` lines: source (owner/repo#N), also, framework, versions, cause,
               damage, expect (codes or rule names, any one counts), file (the causing file),
               key (text on the reported line, or in the message, that names the cause), needs
  target.txt   the GPU the incident needs (`V100`); A100 when absent
  flags.txt    extra `trainlint check` arguments (`--world-size 2`)
               related (optional): how the incident touches a class named in issue 16 or a seed
               incident of INCIDENTS.md
  requirements.txt  a version pin, read by trainlint like any pin beside a config
               batch (optional, in expect.txt): `blind-<date>` for incidents chosen and written
               before trainlint was run on them

An incident counts as caught when a finding whose code or rule name is in `expect` points at
`file` and its reported line (or message) contains `key`: a finding elsewhere does not count.

    python bench/incidents.py            # run and rewrite bench/incidents.md
    python bench/incidents.py --print    # run and print the table only
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

# expect.txt `batch:` -> (label, caught when mined, whether the current rules are still blind to it).
# "Caught when mined" is trainlint at the commit the batch was mined on, before anyone read its
# results; a batch stays blind until a rule is written after reading its misses.
BATCHES = {
    "": ("first batch (mined 2026-11-23)", "30 / 51 (at the start of 2026-11-24; not recorded at mining)",
         "no: rules were then written for its misses"),
    "blind-2026-11-24": ("blind batch 1 (`blind-2026-11-24`, mined 2026-11-24 at c44dabc..)", "0 / 36",
                         "no: rules encoding each framework's own validation were written after it"),
    "blind-2026-11-24b": ("blind batch 2 (`blind-2026-11-24b`, mined 2026-11-24 at 05c2963)",
                          "2 / 28; still 2 / 28 at 166e6b5 with the eight rules written that session without "
                          "seeing it", "no: rules were then written for its misses (second session of 2026-11-24)"),
    "blind-2026-11-24c": ("blind batch 3 (`blind-2026-11-24c`, mined 2026-11-24 at 12d0f84)",
                          "0 / 3, still 0 / 3 at 8801cfa (a fourth, unsloth-no-mixed-precision-flash-attn, was dropped after: its cause "
                          "rests on a maintainer's unconfirmed diagnosis, not on source)",
                          "no: rules were then written for its misses (branch batch3, third session of 2026-11-24)"),
    "blind-2026-11-24d": ("blind batch 4 (`blind-2026-11-24d`, mined 2026-11-24 at 8801cfa)",
                          "2 / 22 at 5b03df1 (rules as at 8801cfa; 2 / 12 from the DeepSpeed, accelerate, transformers, PEFT and TRL "
                          "trackers, 0 / 10 from Axolotl, LLaMA-Factory and Unsloth; TRN021 already reported the refusal "
                          "of lf-oft-adapter-export-refused, which the miner had labelled as a new rule); still 2 / 22 at "
                          "4b9f597 after merging the rules written that session without seeing it (launch facts, TRN052, "
                          "TRN055, TRN057-TRN059, MOD008, MOD009, PEF008)", "no: rules were then written for its misses"),
    "blind-2026-11-24e": ("blind batch 5 (`blind-2026-11-24e`, mined 2026-11-24 at 7b09bd5)",
                          "1 / 17 at 8d49598 (rules as at 7b09bd5; 0 / 10 from the DeepSpeed, accelerate, transformers, PEFT and TRL "
                          "trackers, 1 / 7 from Axolotl, LLaMA-Factory and Unsloth); 2 / 17 after relabelling "
                          "accel-zero2-param-offload-ignored, whose cause DS004 already reported under a rule name the miner "
                          "had not looked up", "yes"),
    "blind-2026-11-24f": ("blind batch 6 (`blind-2026-11-24f`, mined 2026-11-24 at 320db3c)",
                          "0 / 20 at a5e662c and b7c4042 (rules as at 320db3c; 0 / 10 from the DeepSpeed, accelerate, "
                          "transformers, PEFT, TRL and bitsandbytes trackers, 0 / 10 from Axolotl, LLaMA-Factory, Unsloth "
                          "and XTuner; three fixtures lost a second hazard the miner had invented, which MEM001 and TRN063 "
                          "had reported, not on the cause); still 0 / 20 at c3bbaad after merging the rules written this session without "
                          "seeing it (SCH004, DS025, TRN040/TRN041/VER002 rows, TRN056, TRN060, MOD010, TRN068-TRN070, TRN021 rows, "
                          "the XTuner DeepSpeed-run facts, the fifth held-out set's precision fixes)",
                          "no: rules were then written for its misses (b6-hf, b6-fw)"),
    "blind-2026-11-24g": ("blind batch 7 (`blind-2026-11-24g`, mined 2026-11-24 at c3b3408)",
                          "1 / 20 at b102982 and 476b830 (rules as at 4c8d3e8; 1 / 10 from the DeepSpeed, accelerate, "
                          "transformers, PEFT and TRL trackers, 0 / 10 from Axolotl, LLaMA-Factory, Unsloth and Ludwig); still "
                          "1 / 20 at 679ca94 after merging the work of this session written without seeing it (Axolotl "
                          "per-release key history, unpinned firing where every release fails, Unsloth script facts, "
                          "LLaMA-Factory launcher and parser rows, project loaders, the seventh and eighth held-out sets' "
                          "fixes)", "no: rules were then written for four of its misses (TRN063 layout rows, TRN035/TRN036 "
                          "unpinned; branches b7-accel, b7-ludwig)"),
    "blind-2026-11-24h": ("blind batch 8 (`blind-2026-11-24h`, mined 2026-11-24 at 066effc)",
                          "0 / 12 as the miner labelled them at e060990 (rules as at 1145580; fixtures committed at 2f7bbe6 before any "
                          "trainlint run); 1 / 12 after relabelling accel-inline-ds-micro-batch-ignored, whose key SCH001 already "
                          "reported as unknown to accelerate; 2 / 12 at 141ba40 after merging the work of this session written "
                          "without seeing it (TRN054 on lf-cosine-min-lr-without-kwargs, from the TrainingArguments audit)", "no: rules were "
                          "written for its misses in the seventh session (ds-engine, trl-peft, accel-lf)"),
    "blind-2026-11-24i": ("blind batch 9 (`blind-2026-11-24i`, mined 2026-11-24 at 56fb5e4)",
                          "0 / 13 as the miner labelled them at ded4947 (rules as at 56fb5e4; fixtures committed at 661b37f "
                          "before any trainlint run); 1 / 13 after relabelling unsloth-fastmodel-rslora-dropped, whose cause "
                          "TRN072 already reported at the causing keyword; still 1 / 13 at 3fd58ee after merging the first wave of this "
                          "session's rules (ds-engine, trl-peft, accel-lf, precision-debt), written without seeing it; 10 / 13 at "
                          "de61c02 after rules written for its misses (b9-trl-hf, b9-infra)", "no: rules were then written "
                          "for its misses"),
    "blind-2026-11-24j": ("blind batch 10 (`blind-2026-11-24j`, mined 2026-11-24 at 08f81d5)",
                          "0 / 13 as the miner labelled them at cac6f2b (rules as at 08f81d5; fixtures committed at ce93e23 "
                          "before any trainlint run); 4 / 13 after relabelling four whose refusal TRN021 (3) and DS022 (1) "
                          "already reported at the causing key; still 4 / 13 at de61c02 after merging the second wave (b9-trl-hf, "
                          "b9-infra, script-bindings), written without seeing it",
                          "no: rules were then written for its misses (eighth session: b10-axolotl, b10-ds-xtuner, b10-ludwig, "
                          "b10-lf, b10-unsloth)"),
    "blind-2026-11-24k": ("blind batch 11 (`blind-2026-11-24k`, mined 2026-11-24 at 4521782)",
                          "0 / 5 as the miner labelled them at 032a257 (rules as at 4521782; fixtures committed at 032a257 "
                          "before any trainlint run; no relabelling: the only findings, DS001 and PRE002 on "
                          "lf-dpo-full-zero2-no-optimizer, report the thread's fp16, not the missing optimizer); still 0 / 5 at 2cd9b04 after merging the rest of the "
                          "eighth session's work, written without seeing it (b10-ds-xtuner, b10-ludwig, b10-axolotl, b10-unsloth, "
                          "audit-hf, speed2, heldout, audit-axolotl2, audit-trl2, audit-lf-ludwig2, ds-engine2, trl-grpo3, "
                          "audit-axolotl3, hf-renames); 3 / 5 after rules written for its misses in the ninth session (b11-eval TRN102, "
                          "b11-accel-lf TRN073 row, b11-peft-tied MOD014; the two LLaMA-Factory misses now have TRN021 rows "
                          "that need the pin the thread does not give)", "no"),
    "blind-2026-11-25l": ("blind batch 12 (`blind-2026-11-25l`, mined 2026-11-25 at 247cdbd)",
                          "0 / 8 as the miner labelled them at 9f4050b (rules as at 247cdbd; fixtures committed at 9f4050b before any "
                          "trainlint run; no relabelling: the only findings, PRE002 on axolotl-lora-model-dir-frozen and SCH001 "
                          "(fsdp_backward_prefetch_policy) on accel-fsdp-sharding-strategy-zero, report other keys, and the "
                          "unsloth-llama31-base-chat-template fixture, labelled MOD006 from its docs, drew no MOD006); still "
                          "0 / 8 after trl-reward-max-length-filter and peft-target-modules-partial-typo, first written as plain "
                          "TRL / PEFT Python scripts that no trainlint adapter reads, were rewritten with the same cause as "
                          "reward.yaml and adapter_config.json so that tests/test_incidents.py passes (TRN056 does not fire on "
                          "the reward.yaml: no RewardConfig-only key and no launch command name the trainer); still 0 / 8 after merging "
                          "the ninth session's work written without seeing it (b11-peft-tied, b11-accel-lf, audit-axolotl4, "
                          "ds-xtuner2, b11-eval); 4 / 8 after rules written for its misses (b12-accel TRN110, b12-peft-unsloth PEF017 and "
                          "MOD006 for Unsloth scripts x2; b12-axolotl's two TRN074 rows need the pin the threads do not give)", "no"),
    "blind-2026-11-25m": ("blind batch 13 (`blind-2026-11-25m`, mined 2026-11-25 at 753343d)",
                          "0 / 6 as the miner labelled them at e7dac33 (rules as at 753343d; fixtures committed at e7dac33 "
                          "before any trainlint run; no relabelling: the only finding, TRN001 on "
                          "axolotl-gemma3-eval-unpacked-mask-dropped, reports packed training samples attending to each other "
                          "for want of an attention backend (a second hazard the fixture left in by naming none), not the "
                          "unpacked eval split's dropped attention mask); trl-completion-collator-template-context's collator "
                          "call was then given response_template as a keyword (the same call) so that tests/test_incidents.py "
                          "finds the key in the file; 1 / 6 after TRN103 (dpo-beta-not-positive) was written for "
                          "trl-dpo-beta-zero in the ninth session, after this measurement", "no (TRN103 was written for one of its misses)"),
    "blind-2026-11-25n": ("blind batch 14 (`blind-2026-11-25n`, mined 2026-11-25 at ed9d8f0)",
                          "0 / 8 as the miner labelled them at 4ac3412 (rules as at ed9d8f0; fixtures committed at 4ac3412 "
                          "before any trainlint run; no relabelling: the only findings report other hazards, not the "
                          "mined causes: PRE002, DS001 and DS005 on ds-offload-optimizer-top-level (the thread's fp16 and ZeRO-2 "
                          "overlap_comm on 0.6.1, not the top-level offload_optimizer) and TRN002 on "
                          "hf-resume-from-checkpoint-arg-unused (pad_token = eos_token with DataCollatorForLanguageModeling, a "
                          "second hazard the miner's own script left in, not the unused resume_from_checkpoint); 5 / 8 after rules "
                          "written for its misses in the tenth session (SCH001 for ZeRO keys at the DeepSpeed top level, "
                          "TRN094 turn-terminator-not-trained, TRN090-TRN092 on training scripts); the other three need a "
                          "pin the threads do not give (Unsloth, LLaMA-Factory) or the checkpoint folders on disk", "no"),
}

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "incidents"
TABLE = ROOT / "bench" / "incidents.md"
DEFAULT_TARGET = "A100"
META_KEYS = ("source", "also", "framework", "versions", "cause", "damage", "expect", "file", "key", "needs")
DAMAGE_ORDER = ("silent", "hang", "nan", "oom", "crash-after-hours", "crash-after-preprocessing", "crash-after-load",
                "crash-first-step", "crash-launch")


def read_meta(folder: Path) -> dict[str, str]:
    meta = {}
    for line in (folder / "expect.txt").read_text("utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        key, _, value = line.partition(":")
        meta[key.strip()] = value.strip()
    missing = [key for key in META_KEYS if key not in meta]
    if missing:
        raise ValueError(f"{folder.name}/expect.txt lacks {', '.join(missing)}")
    return meta


def incident_folders() -> list[Path]:
    return sorted(path for path in FIXTURES.iterdir() if (path / "expect.txt").is_file())


def _optional(folder: Path, name: str) -> str:
    path = folder / name
    return path.read_text("utf-8").strip() if path.is_file() else ""


def run_trainlint(paths: list[Path], target: str, flags: list[str]) -> tuple[int, list[dict], str]:
    """(exit code, findings, stderr) of one `trainlint check` over `paths`."""
    command = [sys.executable, "-m", "linter.cli", "check", *map(str, paths), "--gpu", target,
               "--no-detect", "--format", "json", "--verbose", *flags]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    try:
        findings = json.loads(done.stdout) if done.stdout.strip() else []
    except json.JSONDecodeError:
        findings = []
    return done.returncode, findings, done.stderr


def _line_text(path: Path, line: int | None) -> str:
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    return lines[line - 1] if line and 0 < line <= len(lines) else ""


def points_at_cause(finding: dict, meta: dict[str, str]) -> bool:
    wanted = set(meta["expect"].split())
    if finding.get("code") not in wanted and finding.get("name") not in wanted:
        return False
    path = ROOT / finding.get("file", "")
    if path.name != meta["file"]:
        return False
    key = meta["key"]
    return not key or key in _line_text(path, finding.get("line")) or key in finding.get("message", "")


def evaluate(folder: Path) -> dict:
    meta = read_meta(folder)
    target = _optional(folder, "target.txt") or DEFAULT_TARGET
    flags = shlex.split(_optional(folder, "flags.txt"))
    code, findings, stderr = run_trainlint([folder], target, flags)
    caught = sorted({finding["code"] for finding in findings if points_at_cause(finding, meta)})
    fired = sorted({finding["code"] for finding in findings})
    return {"id": folder.name, "meta": meta, "target": target, "flags": flags, "exit": code,
            "caught": caught, "fired": fired, "internal_error": code == 2 or "internal error" in stderr}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _source_cell(meta: dict[str, str]) -> str:
    also = meta["also"]
    return meta["source"] + (f" (also {also})" if also else "")


def render(results: list[dict]) -> str:
    caught = sum(1 for result in results if result["caught"])
    total = len(results)
    lines = [
        "# Mined incidents: recall",
        "",
        f"**Recall: {caught} / {total} caught** ({100 * caught / total:.0f} %), by `python bench/incidents.py`"
        " (rewrites this file; the rows come from `tests/fixtures/incidents/*/expect.txt`).",
        "",
        "| batch | incidents | caught now | caught when mined | blind now? |",
        "|---|---|---|---|---|",
    ]
    unknown = {result["meta"].get("batch", "") for result in results} - set(BATCHES)
    if unknown:
        sys.exit(f"bench/incidents.py: batch {sorted(unknown)} is not in BATCHES")
    for batch, (label, at_mining, still_blind) in BATCHES.items():
        members = [result for result in results if result["meta"].get("batch", "") == batch]
        if members:
            lines.append(f"| {label} | {len(members)} | {sum(1 for r in members if r['caught'])} | {at_mining} | "
                         f"{still_blind} |")
    lines += [
        "",
        "Each row is a failure reported in a framework's tracker whose cause is written in the config (alone,"
        " or with the GPU, the world size or a pinned version) and so was knowable before launch. Each has a"
        " minimal fixture of our own under `tests/fixtures/incidents/<id>/` that reproduces the cause for the"
        " versions named (a `requirements.txt` pin where version-bound, `target.txt` for the GPU, `flags.txt`"
        " for the world size). None of them is one of the 14 classes named in issue 16 or one of the five"
        " seed incidents in INCIDENTS.md; rows near a named class say so in *what would be needed*.",
        "",
        "*Caught* means a finding with an expected code (or rule name, for rules not written yet) points at"
        " the causing file and key; *fired* lists every code reported on the fixture. Damage, worst first:"
        " silent (trains wrong or saves nothing usable) > hang > crash after hours/preprocessing/load >"
        " crash at the first step > crash at launch.",
        "",
        "| id | source thread | config cause | framework, versions | damage | expected | caught by | fired | what would be needed |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    order = {damage: rank for rank, damage in enumerate(DAMAGE_ORDER)}
    for result in sorted(results, key=lambda r: (order.get(r["meta"]["damage"], 99), r["id"])):
        meta = result["meta"]
        target = result["target"] + (" " + " ".join(result["flags"]) if result["flags"] else "")
        needed = "" if result["caught"] else meta["needs"]
        lines.append("| " + " | ".join(_cell(text) for text in (
            result["id"], _source_cell(meta), meta["cause"] + (f" (related: {meta['related']})" if meta.get("related") else ""), f"{meta['framework']}; {meta['versions']}; target {target}",
            meta["damage"], meta["expect"], ", ".join(result["caught"]) or "—", ", ".join(result["fired"]) or "—",
            needed)) + " |")
    lines += ["", "## By expected rule", "",
              "Incidents grouped by the first rule in their `expected` column, most reported first (threads ="
              " the source plus the other threads listed for it).", "",
              "| rule | incidents | threads | caught | ids |", "|---|---|---|---|---|"]
    groups: dict[str, list[dict]] = {}
    for result in results:
        groups.setdefault(result["meta"]["expect"].split()[0], []).append(result)
    ranked = sorted(groups.items(), key=lambda item: (-sum(map(_threads, item[1])), -len(item[1]), item[0]))
    for rule, members in ranked:
        lines.append(f"| {rule} | {len(members)} | {sum(map(_threads, members))} | "
                     f"{sum(1 for member in members if member['caught'])} | "
                     f"{', '.join(sorted(member['id'] for member in members))} |")
    return "\n".join(lines) + "\n"


def _threads(result: dict) -> int:
    """The source thread and the other tracker threads named for the same cause."""
    return 1 + len(re.findall(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#\d+", result["meta"]["also"]))


def table_ids(markdown: str) -> list[str]:
    """The incident ids of the table rows in bench/incidents.md."""
    ids = []
    table = markdown.split("\n## By expected rule")[0].split("\n| id |", 1)[-1]
    for line in table.splitlines()[1:]:
        match = re.match(r"^\| ([a-z0-9][a-z0-9-]*) \|", line)
        if match:
            ids.append(match.group(1))
    return ids


def main(argv: list[str]) -> int:
    results = [evaluate(folder) for folder in incident_folders()]
    errors = [result["id"] for result in results if result["internal_error"]]
    text = render(results)
    if "--print" in argv:
        print(text)
    else:
        TABLE.write_text(text, "utf-8")
        caught = sum(1 for result in results if result["caught"])
        print(f"{caught} / {len(results)} caught; wrote {TABLE.relative_to(ROOT)}")
    if errors:
        print("internal errors: " + ", ".join(errors), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

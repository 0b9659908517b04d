"""When each TRN021 row's keys and its check first appear in LLaMA-Factory's releases.

    python bench/llamafactory_key_history.py [/path/to/hiyouga/LLaMA-Factory.git] > bench/llamafactory_key_history.md

For every row of rules/argument_table.py ROWS: the LLaMA-Factory argument fields the row needs
the file to write (a non-default value; `a|b`: either one triggers the row), the first release tag
whose src/*/hparams/*.py declares each as a dataclass field (`    name: ...`; `name=value`: the
field's declaration names that value), and the first tag whose src/ holds the row's message (or
an older wording of the same refusal, listed below). TrainingArguments fields (transformers) exist
in every release. A release that lacks a field refuses the file outright (HfArgumentParser:
"Some keys are not used"), so where the check's first tag is not after the keys' first tag, every
release that can read the file refuses the combination: the row is `always`. Where the key came
first, older releases met the combination without the check: `always` then needs evidence that
they failed too (the row's comment in argument_table.py says which). The last column flags a
check missing from some tag after its first (it would not be "every release").
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rules.argument_table import ROWS  # noqa: E402

MIRROR = Path("/work/.mirror/hiyouga+LLaMA-Factory/repo")
TF = "transformers"  # a TrainingArguments / Seq2SeqTrainingArguments field: every release has it

# (message, occurrence among rows with that message) -> (written keys, older wordings of the check)
KEYS: dict[tuple[str, int], tuple[tuple[str, ...], tuple[str, ...]]] = {
    # The older check read `stage == "sft" or not predict_with_generate`: the same refusal.
    ("`predict_with_generate` cannot be set as True except SFT.", 0):
        (("stage", TF), ("`predict_with_generate` cannot be set as True at PT, RM and PPO stages.",)),
    ("`neat_packing` cannot be set as True except SFT.", 0): (("stage", "neat_packing"), ()),
    ("`train_on_prompt` or `mask_history` cannot be set as True except SFT.", 0):
        (("stage", "train_on_prompt|mask_history"), ()),
    ("Please enable `predict_with_generate` to save model predictions.", 0): ((TF,), ()),
    ("RM and PPO stages do not support `load_best_model_at_end`.", 0): (("stage", TF), ()),
    ("PPO training does not support evaluation, use the SFT stage to evaluate models.", 0):
        (("stage",), ("PPO training does not support evaluation.", "PPO and DPO stage can only be performed at training.",
                      "PPO and DPO stages can only be performed at training.",
                      "PPO stage cannot be performed at evaluation.")),  # the last: loader.py, before 0.1.6
    ("PPO training is incompatible with S^2-Attn.", 0): (("stage", "shift_attn"), ()),
    ("Unsloth does not support lora reward model.", 0): (("stage", "use_unsloth"), ()),
    ("PPO only accepts wandb, tensorboard, or trackio logger.", 0):
        (("stage", TF), ("PPO only accepts wandb or tensorboard logger.",)),
    ("Please specify `max_steps` in streaming mode.", 0): (("streaming",), ()),
    ("Please specify dataset for training.", 0): ((TF,), ()),
    ("Please make sure eval_dataset be provided or val_size >1e-6", 0): ((TF,), ()),
    ("Please make sure eval_dataset be provided or val_size >1e-6", 1): ((TF,), ()),
    ("Cannot use `predict_with_generate` and `compute_accuracy` together.", 0): (("compute_accuracy", TF), ()),
    ("Cannot use device map for quantized models in training.", 0): (("quantization_device_map",), ()),
    ("Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3.", 0): (("pissa_init", TF), ()),
    ("`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", 0): (("pure_bf16", TF), ()),
    ("`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", 1): (("pure_bf16", TF), ()),
    ("Radio-based BAdam does not yet support distributed training, use layer-wise BAdam.", 0):
        (("use_badam", "badam_mode"), ()),
    # badam_mode defaults to "layer": use_badam alone triggers it. 0.6.3..0.8.2 refused layer-wise
    # BAdam in any distributed run (ZeRO-3 or not), which includes this row's case.
    ("Layer-wise BAdam only supports DeepSpeed ZeRO-3 training.", 0):
        (("use_badam",), ("Layer-wise BAdam does not yet support distributed training",)),
    ("FP8 training is not compatible with quantization. Please disable one of them.", 0):
        (("fp8", "quantization_bit"), ()),
    ("vLLM/SGLang backend is only available for API, CLI and Web.", 0):
        (("infer_backend",), ("vLLM backend is only available for API, CLI and Web.",)),
    ("Adapter is only valid for the LoRA method.", 0): (("adapter_name_or_path", "finetuning_type"), ()),
    ("Please use scripts/pissa_init.py to initialize PiSSA for a quantized model.", 0):
        (("pissa_init", "quantization_bit"), ()),
    ("Cannot resize embedding layers of a quantized model.", 0): (("resize_vocab", "quantization_bit"), ()),
    ("Cannot create new adapter upon a quantized model.", 0):
        (("create_new_adapter", "adapter_name_or_path", "quantization_bit"), ()),
    ("Quantized model only accepts a single adapter. Merge them first.", 0):
        (("adapter_name_or_path", "quantization_bit"), ()),
    # Rows on a pre-quantized model_name_or_path (model/adapter.py, after loading): no extra key.
    ("Quantized model only accepts a single adapter.", 0): (("adapter_name_or_path",), ()),
    ("Cannot initialize PiSSA adapter on quantized models.", 0): (("pissa_init",), ()),
    ("`image_max_pixels` cannot be smaller than `image_min_pixels`.", 0): (("image_max_pixels|image_min_pixels",), ()),
    ("`video_max_pixels` cannot be smaller than `video_min_pixels`.", 0): (("video_max_pixels|video_min_pixels",), ()),
    ("vLLM engine only supports auto-regressive models.", 0): (("infer_backend", "stage"), ()),
    ("vLLM engine does not support bnb quantization (GPTQ and AWQ are supported).", 0):
        (("infer_backend", "quantization_bit"), ("vLLM engine does not support quantization.",)),
    ("vLLM engine does not support RoPE scaling.", 0): (("infer_backend", "rope_scaling"), ()),
    # 0.6.0..0.6.3 refused any adapter under vLLM, which includes several.
    ("vLLM only accepts a single adapter. Merge them first.", 0):
        (("infer_backend", "adapter_name_or_path"), ("vLLM engine does not support LoRA adapters. Merge them first.",)),
    ("Cannot specify `val_size` if `dataset` is None.", 0): (("val_size",), ()),
    ("Cannot specify `val_size` if `eval_dataset` is not None.", 0): (("val_size", "eval_dataset"), ()),
    ("`interleave_probs` is only valid for interleaved mixing.", 0): (("interleave_probs",), ()),
    ("The length of dataset and interleave probs should be identical.", 0): (("interleave_probs", "dataset"), ()),
    ("The length of eval dataset and interleave probs should be identical.", 0):
        (("interleave_probs", "eval_dataset"), ()),
    ("Streaming mode should have an integer val size.", 0): (("streaming", "val_size"), ()),
    ("`max_samples` is incompatible with `streaming`.", 0): (("streaming", "max_samples"), ()),
    ("`mask_history` is incompatible with `train_on_prompt`.", 0): (("mask_history", "train_on_prompt"), ()),
    ("`reward_model` is necessary for PPO training.", 0): (("stage",), ("Reward model is necessary for PPO training.",)),
    ("`reward_model_type` cannot be lora for Freeze/Full PPO training.", 0):
        (("stage", "finetuning_type"), ("Freeze/Full PPO training needs `reward_model_type=full`.",
                                        # before: PPO refused any method but LoRA (RM included)
                                        "RM and PPO training can only be performed with the LoRA method.",
                                        "RM and PPO stages can only be performed with the LoRA method.",
                                        "Lora reward model only supports lora training.")),
    ("`reward_model_type` cannot be oft for Freeze/Full PPO training.", 0):
        (("stage", "reward_model_type"), ()),  # no release lists "oft" in reward_model_type's Literal
    ("`dpo_label_smoothing` is only valid for sigmoid loss function.", 0): (("stage", "dpo_label_smoothing"), ()),
    ("`use_llama_pro` is only valid for Freeze or LoRA training.", 0):
        (("use_llama_pro", "finetuning_type"), ("`use_llama_pro` is only valid for the Freeze or LoRA training.",)),
    ("Cannot use LoRA with GaLore, APOLLO or BAdam together.", 0):
        (("use_galore|use_apollo",), ("Cannot use LoRA with GaLore together.",
                                      "Cannot use LoRA with GaLore or BAdam together.")),
    ("Cannot use LoRA with GaLore, APOLLO or BAdam together.", 1):
        (("use_badam",), ("Cannot use LoRA with GaLore or BAdam together.",)),
    ("Cannot use PiSSA for current training stage.", 0): (("pissa_init", "stage"), ()),
    ("`loraplus_lr_ratio` is only valid for LoRA training.", 0):
        (("loraplus_lr_ratio", "finetuning_type"), ("`loraplus_lr_ratio` is only valid for the LoRA training.",)),
    ("`use_rslora` is only valid for LoRA training.", 0): (("use_rslora", "finetuning_type"), ()),
    ("`use_dora` is only valid for LoRA training.", 0): (("use_dora", "finetuning_type"), ()),
    ("`pissa_init` is only valid for LoRA training.", 0): (("pissa_init", "finetuning_type"), ()),
    ("Quantization dataset is necessary for exporting.", 0): (("export_quantization_bit",), ()),
    ("Please merge adapters before quantizing the model.", 0):
        (("export_quantization_bit", "adapter_name_or_path"), ()),
    ("Cannot merge adapters to a quantized model.", 0):
        (("export_dir", "adapter_name_or_path"), ()),  # quantization_bit, or a pre-quantized model
}
# Why a `later` row is `always` (the older releases' failure) or stays pinned.
NOTES = {
    ("Please make sure eval_dataset be provided or val_size >1e-6", 0):
        "always: older releases die at the first evaluation (transformers Trainer)",
    ("Please use scripts/pissa_init.py to initialize PiSSA in DeepSpeed ZeRO-3.", 0):
        "pinned: 0.8.2 with PEFT >= 0.12 (PEFT #1887 gathers the weight for PiSSA) is not known to fail",
    ("`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", 0): "always: with offload older releases crash (#3476)",
    ("`pure_bf16` is incompatible with DeepSpeed ZeRO-3.", 1): "pinned: plain ZeRO-3 ran before 0.8.3",
    ("Radio-based BAdam does not yet support distributed training, use layer-wise BAdam.", 0):
        "pinned: 0.6.3 to 0.8.2 recommended ratio-wise BAdam for distributed runs",
    ("`interleave_probs` is only valid for interleaved mixing.", 0):
        "always: older releases concatenate and ignore the probabilities",
    ("`max_samples` is incompatible with `streaming`.", 0): "always: 0.1.4 to 0.1.8 warned and dropped max_samples",
    ("Cannot merge adapters to a quantized model.", 0):
        "always: 0.4.0 warned, then exported the unmerged adapter only",
}
# The text to find where the row's message is a prefix of another row's (a closing quote).
MATCH = {("Quantized model only accepts a single adapter.", 0): 'Quantized model only accepts a single adapter."'}


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(MIRROR), *args], capture_output=True, text=True).stdout


def version_key(tag: str) -> tuple[int, ...]:
    if tag == "never":
        return (999,)
    return tuple(int(part) for part in tag.lstrip("v").split("."))


def tags() -> list[str]:
    return sorted((tag for tag in git("tag").split() if re.fullmatch(r"v\d+\.\d+\.\d+", tag)), key=version_key)


def fields(tag: str) -> dict[str, str]:
    """Every dataclass field the tag's hparams declare, with its declaration line and the two after."""
    found: dict[str, str] = {}
    lines = git("grep", "-h", "-A2", "-E", r"^    [a-z_0-9]+: ", tag, "--", "src/*/hparams/*.py").splitlines()
    for index, line in enumerate(lines):
        match = re.match(r"^    ([a-z_0-9]+): ", line)
        if match:
            found.setdefault(match.group(1), " ".join(lines[index:index + 3]))
    return found


def messages(tag: str, wanted: list[str]) -> set[str]:
    """The messages the tag refuses with (`raise` or `assert` on the message's line or the one
    before: a message only logged as a warning does not count)."""
    patterns = [arg for message in wanted for arg in ("-e", message)]
    raised, previous = set(), ""
    for line in git("grep", "-h", "-B1", "-F", *patterns, tag, "--", "src").splitlines():
        if any(word in text for word in ("raise ", "assert ") for text in (line, previous)):
            raised.update(message for message in wanted if message in line)
        previous = line
    return raised


def first(seq_tags: list[str], present: dict[str, bool]) -> str | None:
    return next((tag for tag in seq_tags if present[tag]), None)


def main() -> None:
    global MIRROR
    if len(sys.argv) > 1:
        MIRROR = Path(sys.argv[1])
    order = tags()
    head = git("rev-parse", "--short=9", "HEAD").strip()
    declared = {tag: fields(tag) for tag in order}
    wanted = sorted({text for keys, older in KEYS.values() for text in (*older,)} | {row.message for row in ROWS}
                    | set(MATCH.values()))
    said = {tag: messages(tag, wanted) for tag in order}

    def key_tag(key: str) -> str:
        if key == TF:
            return order[0]
        name, _, value = key.partition("=")
        return first(order, {tag: name in declared[tag] and (not value or f'"{value}"' in declared[tag][name])
                             for tag in order}) or "never"

    def keys_tag(keys: tuple[str, ...]) -> str:
        """The first tag a file writing these keys can be read by: the latest of the keys (an
        alternative `a|b`: the earlier of the two, either one triggers)."""
        latest = order[0]
        for key in keys:
            tag = min((key_tag(option) for option in key.split("|")), key=lambda t: version_key(t) if t != "never"
                      else (999,))
            latest = max(latest, tag, key=lambda t: version_key(t) if t != "never" else (999,))
        return latest

    print(f"# TRN021 rows: first release with the keys vs first release with the check\n")
    print(f"Generated by `python bench/llamafactory_key_history.py` from hiyouga/LLaMA-Factory (HEAD {head}, tags "
          f"{order[0]}..{order[-1]}; `{order[0]}` means \"at or before the first tag\"). `always`: the row fires "
          "with no LLaMA-Factory pin. `same`: the check is not later than the keys (every release that can read the "
          "file refuses); `later`: the keys came first (`always` only with evidence, see the row's comment).\n")
    print("| # | check | keys the file writes | keys' first tag | check's first tag | gap | always | verdict | note |")
    print("|---|---|---|---|---|---|---|---|---|")
    seen: dict[str, int] = {}
    for number, row in enumerate(ROWS):
        occurrence = seen.get(row.message, 0)
        seen[row.message] = occurrence + 1
        keys, older = KEYS[(row.message, occurrence)]
        texts = (MATCH.get((row.message, occurrence), row.message), *older)
        present = {tag: any(text in said[tag] for text in texts) for tag in order}
        check = first(order, present) or "never"
        gaps = [tag for tag in order if check != "never" and version_key(tag) > version_key(check)
                and not present[tag]]
        key_first = keys_tag(keys)
        same = check != "never" and version_key(check) <= version_key(key_first)
        print(f"| {number} | {row.message[:60]} | {', '.join(k.replace('|', ' or ') for k in keys)} | {key_first} "
              f"| {check}{' (older wording)' if check != 'never' and texts[0] not in said[check] else ''} "
              f"| {', '.join(gaps) or '-'} | {'yes' if row.always else 'no'} | {'same' if same else 'later'} "
              f"| {NOTES.get((row.message, occurrence), '')} |")


if __name__ == "__main__":
    main()

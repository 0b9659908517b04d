"""Verdict rules of the second held-out set (judge.py --set second; same form as judge.judge).

Each rule was written after reading the files and the source that reads them (cited in its
reason); the rules were written after the run and change nothing in linter/ or rules/. A finding
no rule covers is unjudged (judge.py exits 1).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # bench/heldout, for judge.py's helpers

from judge import ADAPTER_FORMATS, _key, _line_text  # noqa: E402

LITGPT = ("litgpt's config_hub YAMLs are read by litgpt's own CLI (`litgpt finetune_lora --config <file>`: "
          "jsonargparse into litgpt/finetune/lora.py setup(checkpoint_dir, out_dir, precision, quantize, devices, "
          "lora_r, ..., train: TrainArgs, eval: EvalArgs, optimizer)); no supported framework reads them")


def judge(finding: dict, manifest: dict, tree: Path) -> tuple[str, str] | None:
    repo, path, code, message = finding["repo"], finding["path"], finding["code"], finding["message"]
    row = manifest.get((repo, path), {})
    true_format = row.get("true_format", "")
    adapter = finding["framework"]
    key = _key(message)
    text = _line_text(tree, repo, path, finding["line"])

    # --- a file claimed by the wrong adapter: its schema findings are another format's keys
    misclaimed = bool(adapter and true_format and true_format not in ADAPTER_FORMATS.get(adapter, {adapter}))
    if misclaimed and code.startswith("SCH"):
        why = LITGPT if repo == "Lightning-AI/litgpt" else f"a {row.get('kind')} file of no supported format"
        return "false", f"format misclaim: claimed by the {adapter} adapter as {true_format or '?'}; {why}"

    # --- schema
    if code == "SCH001" and repo == "philschmid/deep-learning-pytorch-huggingface" and key == "use_liger":
        return "true", ("training/scripts/dpo/run_dpo.py reads the recipe with TrlParser((ModelConfig, ScriptArguments, "
                        "DPOConfig)); its ScriptArguments has no use_liger, and in the trl==0.13.0 the DPO notebook "
                        "installs, use_liger is a field of SFTConfig only (trl/trainer/sft_config.py), not of DPOConfig "
                        "or ModelConfig: TrlParser raises 'Some specified config arguments are not used'")
    if code == "SCH001" and repo == "parlance-labs/ftcourse" and key == "eval_table_max_new_tokens":
        return "false", ("eval_table_max_new_tokens is an Axolotl option (WandB prediction table, #521) in v0.4.0 "
                         "(src/axolotl/utils/config.py, callbacks.py), gone by v0.5.0; the course ran hc.yml in May 2024 "
                         "(04_prep_data.ipynb log 2024-05-16) and pins no axolotl")
    if code == "SCH002" and repo == "parlance-labs/ftcourse" and "sharegpt" in message:
        return "false", ("datasets type sharegpt is valid in Axolotl before v0.5.0 (fd3b80716 'remove fastchat and "
                         "sharegpt', 2024-11-08; now schemas/validation.py deprecate_sharegpt_datasets raises); the "
                         "course ran hc.yml in May 2024 (04_prep_data.ipynb log 2024-05-16) and pins no axolotl")
    if code == "SCH002" and repo == "huggingface/smollm" and re.match(r"num_(machines|processes):", message):
        return "false", ("with_launcher/train.slurm runs `accelerate launch --config_file accelerate_config.yaml "
                         "--num_machines $SLURM_NNODES --num_processes $NUM_GPUS`: the command line sets both, and "
                         "accelerate's LaunchConfig dataclass takes the file's null without a type check")

    if code == "SCH001" and repo == "ludwig-ai/experiments" and key and key.startswith("combiner."):
        return "true", (f"`{key.split('.', 1)[1]}` is read by no Ludwig TabNetCombiner: bn_virtual_divider lived in "
                        "Ludwig's tree for four days (72df69261 2021-04-04, gone in 1f32d2829 2021-04-08, before any "
                        "release) and use_keras_batch_norm never in code; the Ludwig of these configs (2021-08/10, "
                        "ludwig/combiners/combiners.py TabNetCombiner(..., **kwargs)) swallows it silently")

    # --- memory
    if code == "MEM001" and repo == "Elijah-Bodden/Mind-upload" and "V100" in message:
        return "true", ("Mistral-7B with LoRA and no quantization (load_in_4bit/8bit false, deepspeed and fsdp empty): "
                        "16-bit weights alone are 13.5 GiB (7.24B parameters), and sequence_len 4096 with "
                        "pad_to_sequence_len adds the activations and 32,000-entry logits: over a V100's 16 GiB; "
                        "My-Simulacrum's run.bash launches it with plain `accelerate launch`, so every GPU holds it all")

    # --- links
    if code == "LNK001" and repo == "OpenBMB/MiniCPM":
        return "false", ("MiniCPM's instructions (finetune/llama_factory_example/README.md; minicpm_sala/finetune/"
                         "README-cn.md) copy these YAMLs into a LLaMA-Factory checkout's examples/ and run "
                         "`llamafactory-cli train examples/...` from its root, where examples/deepspeed/ds_z2_config.json "
                         "and ds_z3_config.json exist; the path is read relative to that working directory")
    if code == "LNK001" and repo == "huggingface/smollm" and "xxxx" in message:
        return "false", ("a template path, but the one script that reads this file, with_launcher/train.slurm, passes "
                         "`--deepspeed_config_file $DEEPSPEED_CONFIG_FILE` to accelerate launch, which overrides it")

    # --- accelerate + DeepSpeed config file
    if code == "DS006":
        return "true", ("accelerate launch lists the config file's deepspeed_config keys (and mixed_precision taken "
                        "from the file) in ACCELERATE_CONFIG_DS_FIELDS (commands/launch.py), and "
                        "DeepSpeedPlugin._deepspeed_config_checks (utils/dataclasses.py) raises 'When using "
                        "`deepspeed_config_file`, the following accelerate config variables will be ignored' (since "
                        "accelerate 0.16.0, e60f3cab); the vloom slurm scripts pass no --mixed_precision")

    # --- hardware and numerics (same rules as the first set)
    if code == "PRE001" and re.search(r"bf16|bfloat16|\"enabled\": true", text):
        return "true", ("the file enables bf16 on a V100 (compute capability 7.0: no bf16 arithmetic; "
                        "torch.cuda.is_bf16_supported() says True only through emulation)")
    if code == "PRE007" and re.search(r"flash_attention|flash_attn", text):
        return "true", ("FlashAttention-2 supports Ampere and newer only (flash-attn README: 'FlashAttention-2 "
                        "currently supports Ampere, Ada, or Hopper GPUs'); the file asks for it on a V100")
    if code == "PRE004" and re.search(r"tf32: true", text):
        via = ("axolotl v0.4.0 passes cfg.tf32 on as TrainingArguments(tf32=True) (core/trainer_builder.py), and "
               if repo == "Elijah-Bodden/Mind-upload" else "")
        return "true", (via + "TrainingArguments.__post_init__ (transformers training_args.py) raises '--tf32 requires Ampere "
                        "or a newer GPU arch' when is_torch_tf32_available() is False, which it is below compute "
                        "capability 8.0 (a V100 is 7.0)")
    if code == "PRE002":
        return "true", "the file trains in fp16 (mixed_precision: fp16 / fp16 enabled) on an A100 that has bf16"
    if code == "QNT001":
        return "true", "bnb_4bit_compute_dtype=torch.float16 is written in the file; the A100 target has bf16"
    if code == "DS001":
        return "true", "ZeRO-2 with fp16 is set in the file; INCIDENTS.md records NaN losses for this combination"
    if code == "DS004":
        return "true", ("offload_param is a ZeRO-3 feature (deepspeed/runtime/zero/config.py: offload_param "
                        "'Valid only for stage 3'); in a stage-2 config it is ignored")
    return None

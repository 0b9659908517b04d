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
sys.path.insert(0, str(HERE.parents[1]))  # bench/heldout, for judging.py

from judging import OFFLOAD_PARAM_STAGE3, ZERO2_FP16, Finding, hardware_verdict  # noqa: E402

LITGPT = ("litgpt's config_hub YAMLs are read by litgpt's own CLI (`litgpt finetune_lora --config <file>`: "
          "jsonargparse into litgpt/finetune/lora.py setup(checkpoint_dir, out_dir, precision, quantize, devices, "
          "lora_r, ..., train: TrainArgs, eval: EvalArgs, optimizer)); no supported framework reads them")


def judge(finding: dict, manifest: dict, tree: Path) -> tuple[str, str] | None:
    seen = Finding.of(finding, manifest, tree)
    repo, path, code, message = seen.repo, seen.path, seen.code, seen.message
    row, true_format, adapter, key = seen.row, seen.true_format, seen.adapter, seen.key

    # --- a file claimed by the wrong adapter: its schema findings are another format's keys
    if seen.misclaimed and code.startswith("SCH"):
        why = LITGPT if repo == "Lightning-AI/litgpt" else f"a {row.get('kind')} file of no supported format"
        return "false", f"format misclaim: claimed by the {adapter} adapter as {true_format or '?'}; {why}"

    # --- schema
    if code == "SCH001" and repo == "philschmid/deep-learning-pytorch-huggingface" and key == "use_liger":
        return "true", ("training/scripts/dpo/run_dpo.py reads the recipe with TrlParser((ModelConfig, ScriptArguments, "
                        "DPOConfig)); its ScriptArguments has no use_liger, and in the trl==0.13.0 the DPO notebook "
                        "installs, use_liger is a field of SFTConfig only (trl/trainer/sft_config.py), not of DPOConfig "
                        "or ModelConfig: TrlParser raises 'Some specified config arguments are not used'")
    # Axolotl renamed eval_table_max_new_tokens to eval_max_new_tokens on main on 2024-02-13 (5a5d47458, #1274,
    # the examples too) and validates with pydantic since 2024-02-26 (cc3cebfa7, #1239: validate_config returns
    # AxolotlInputConfig(**cfg).model_dump(), which drops keys the model lacks; it has no debug or data_seed).
    # Mind-upload (2024-03-24) runs axolotl cloned from main (My-Simulacrum run.bash); ftcourse's run logs
    # transformers 4.39.0.dev0 and peft 0.9.1.dev0 (04_prep_data.ipynb), i.e. an axolotl whose requirements pin
    # transformers@ae49b218 (from 2024-02-21, #1313) installed after peft 0.9.0 (2024-02-28).
    AXOLOTL_2024 = "in the axolotl of this run (main after 2024-02-21) "
    if code == "SCH001" and repo in ("parlance-labs/ftcourse", "Elijah-Bodden/Mind-upload") \
            and key == "eval_table_max_new_tokens":
        return "true", ("renamed eval_max_new_tokens on axolotl main on 2024-02-13 (5a5d47458, #1274): " + AXOLOTL_2024
                        + "nothing reads it and pydantic validation (#1239) drops it; the written 128 is also the default")
    if code == "SCH001" and repo in ("parlance-labs/ftcourse", "Elijah-Bodden/Mind-upload") \
            and key in ("debug", "data_seed"):
        return "true", (f"`{key}` is no field of AxolotlInputConfig {AXOLOTL_2024}(pydantic validation since 2024-02-26, "
                        "cc3cebfa7 #1239, drops it in validate_config's model_dump)"
                        + ("; axolotl never read a data_seed (only seed)" if key == "data_seed"
                           else "; the value is empty, so nothing is lost"))
    if code == "SCH001" and repo == "OpenBMB/MiniCPM" and key == "kto_ftx":
        return "true", ("LLaMA-Factory's FinetuningArguments had kto_ftx only from 2024-05-17 (66b5634eb) to 2024-05-26 "
                        "(b0d996666: pref_ftx), in no release; MiniCPM added this file on 2024-06-27 and its README clones "
                        "LLaMA-Factory's main, whose parser (hparams/parser.py _parse_args: parse_yaml_file, "
                        "allow_extra_keys False) raises 'Some keys are not used by the HfArgumentParser'")
    if code == "SCH001" and repo == "OpenBMB/MiniCPM" and key == "evaluation_strategy":
        return "false", ("the file (2024-06-27) is run in a LLaMA-Factory checkout cloned from main (README); LLaMA-Factory "
                         "then required transformers>=4.41.2, which accepts evaluation_strategy (deprecated in 4.41, PR "
                         "#30190, removed in 4.46); the repository pins nothing, so it is judged at its date, as hc.yml is")
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
    via = ("axolotl v0.4.0 passes cfg.tf32 on as TrainingArguments(tf32=True) (core/trainer_builder.py), and "
           if repo == "Elijah-Bodden/Mind-upload" else "")
    if verdict := hardware_verdict(seen, tf32_via=via):
        return verdict
    if code == "PRE002" and repo == "kongfoo-ai/internTA" and message.startswith("model dtype float16"):
        return "true", ("a config as `xtuner train` dumped it: llm torch_dtype='torch.float16', which XTuner turns into "
                        "torch.float16 (xtuner/model/utils.py set_obj_dtype, traverse_dict) before from_pretrained, on an "
                        "A100 that has bf16; its DeepSpeed strategy (bf16 enabled) then casts the 16-bit parameters to "
                        "bf16 (deepspeed/runtime/engine.py _configure_distributed_model), so the bf16 checkpoint is "
                        "rounded through float16 for nothing")
    if code == "VER004" and repo == "princeton-nlp/SimPO":
        return "false", ("the SFT recipe (dataset_mixer, dataset_splits) is read by alignment-handbook's scripts/run_sft.py, "
                         "which passes SFTTrainer(..., packing=True) from 2023-11-08 (967eab4) to 2025-07-24 (19f0345): "
                         "packed samples of equal length, so the per-micro-batch mean is the global one")
    if code == "PRE002":
        return "true", "the file trains in fp16 (mixed_precision: fp16 / fp16 enabled) on an A100 that has bf16"
    if code == "QNT001":
        return "true", "bnb_4bit_compute_dtype=torch.float16 is written in the file; the A100 target has bf16"
    if code == "DS001":
        return "true", ZERO2_FP16
    if code == "DS004":
        return "true", OFFLOAD_PARAM_STAGE3
    if code == "TRN102" and repo == "OpenBMB/MiniCPM":
        return "true", ("LLaMA-Factory configs with val_size 0.1 and eval_steps 500 but no eval_strategy: LLaMA-Factory's "
                        "parser never sets the strategy (hparams/parser.py, every tag), so Seq2SeqTrainingArguments' default "
                        "'no' holds and DefaultFlowCallback (transformers trainer_callback.py) never evaluates; "
                        "split_dataset still holds 10 % of the data out of training, and do_eval is unset, so it is "
                        "never evaluated at all")
    return None

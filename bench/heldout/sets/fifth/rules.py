"""Verdict rules of the fifth held-out set (judge.py --set fifth; same form as judge.judge).

Written after the one blind run at main 165ca0d (2026-11-24; the checkout judged was 7f67e33, which
differs from 165ca0d only in bench/heldout/), from the files and the source that reads them (cited
in each reason); nothing in linter/ or rules/ was changed. A finding no rule covers is unjudged
(judge.py exits 1).

Unpinned frameworks are judged as the earlier sets judged them: a key or value that the framework
of the file's date read (or accepted) is not "unknown" or "invalid" because a later release dropped
it; a key no release of the run reads is "unknown" whether the parser drops it silently or refuses.
Memory (MEM001) is judged against the launch the repository records (the fourth set's way).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # bench/heldout, for judging.py

from judging import OFFLOAD_PARAM_STAGE3, Finding, hardware_verdict  # noqa: E402

# --- TRL argument files -------------------------------------------------------------------------
TRLPARSER_UNKNOWN = (
    "TRL's TrlParser.parse_args_and_config hands every config key no dataclass field takes to "
    "set_defaults_with_config's remaining strings: TRL before 0.19 drops them silently (v0.16.0 trl/scripts/"
    "utils.py returns only the parsed dataclasses), TRL 0.19+ raises 'Unknown arguments from config file' "
    "(b773a4c19, #3543) unless the script passes fail_with_unknown_args=False")
SMALL_DOGE_UNREAD = {
    # key -> why none of the parser call's classes (trl ScriptArguments / ModelConfig, small_doge.utils
    # PTConfig(TrainingArguments) / SFTConfig(trl.SFTConfig) / DPOConfig(trl.DPOConfig)) reads it
    "private": "no field of TrainingArguments (hub_private_repo is), TRL's configs or small_doge/utils/"
               "training_args_configs.py, and no code of the repository reads it",
    "token": "no field of TrainingArguments (hub_token is), TRL's configs or small_doge's classes",
    "preprocessing_num_workers": "alignment-handbook's DataArguments field, not TRL's (dataset_num_proc) nor "
                                 "small_doge's",
    "dataset_format": "no field of TRL's ScriptArguments/SFTConfig/ModelConfig and not read by litecot/sft.py",
}
SMALL_DOGE_ENTRY = {
    "sft": "src/small_doge/trainer/sft.py: TrlParser((ScriptArguments, SFTConfig, ModelConfig)).parse_args_and_config()",
    "dpo": "src/small_doge/trainer/dpo.py: TrlParser((ScriptArguments, DPOConfig, ModelConfig)).parse_args_and_config()",
    "pt": "src/small_doge/trainer/pt.py: TrlParser((ScriptArguments, PTConfig, ModelConfig))."
          "parse_args_and_config(fail_with_unknown_args=False), so the key is dropped silently",
    "litecot": "projects/litecot/sft.py: TrlParser((ScriptArguments, SFTConfig, ModelConfig)) with trl 0.16.0 "
               "(projects/litecot/requirements.txt `trl=0.16.0=pypi_0`), which drops it silently",
}

# --- accelerate ----------------------------------------------------------------------------------
ACCELERATE_DS_UNREAD = (
    "accelerate launch copies every deepspeed_config entry onto its args (_validate_launch_command: `for key, "
    "value in attr.items(): setattr(args, key, value)`, v1.5.2 commands/launch.py) but the DeepSpeed launcher "
    "and DeepSpeedPlugin read only their own names (zero_stage, offload_*_device, zero3_init_flag, "
    "gradient_accumulation_steps, ...; utils/launch.py prepare_deepspeed_cmd_env); `{key}` is none of them and "
    "no deepspeed_config_file is given, so it is silently ignored")

# --- XMainframe's recorded launch ------------------------------------------------------------------
XMAINFRAME_FT = (
    "scripts/ft.sh launches this recipe as `accelerate launch --config_file recipes/accelerate_configs/"
    "fsdp_qlora.yaml train_raw.py recipes/deepseek/lora_sft.yaml --torch_dtype=bfloat16 "
    "--bnb_4bit_quant_storage=bfloat16 ...`; train_raw.py's H4ArgumentParser.parse_yaml_and_args (the vendored "
    "src/alignment/configs.py) overwrites the YAML's values with these command-line ones, so ModelArguments."
    "torch_dtype and bnb_4bit_quant_storage are bfloat16, and get_quantization_config (src/alignment/"
    "model_utils.py) takes bnb_4bit_compute_dtype from torch_dtype: the run loads, computes and stores in bf16")

# --- Axolotl (Emm9625/sum, files of 2024-02; no axolotl pinned) ------------------------------------
AXOLOTL_2024_02 = "5a5d47458 (2024-02-13, the axolotl main of the files' date)"
AXOLOTL_UNREAD = {
    # key -> the history that shows no axolotl of the files' date reads it
    "base_model_ignore_patterns": "last read by src/ in 2023-05 (2bc1a5bde); no match under src/ at "
                                  + AXOLOTL_2024_02,
    "gptq_groupsize": "removed from src/ by 3355706e2 (#468, 2023-09-05, native transformers GPTQ)",
    "gptq_model_v1": "removed from src/ by 3355706e2 (#468, 2023-09-05, native transformers GPTQ)",
    "log_sweep_min_lr": "removed from src/ by 868530c39 (2023-08-26)",
    "log_sweep_max_lr": "removed from src/ by 868530c39 (2023-08-26)",
    "datasets[0].train_on_split": "read from 409ca0f21 (#654) until cda52dc32 (#786, 2024-01-22, replaced by "
                                  "`split`); not read at " + AXOLOTL_2024_02,
    "datasets[1].type.field": "`field` is a dataset-level key of the completion strategy (prompt_strategies/"
                              "completion.py load: `if ds_cfg and \"field\" in ds_cfg`); written inside a `type:` "
                              "mapping (the user-defined prompt format) nobody reads it",
}


def judge(finding: dict, manifest: dict, tree: Path) -> tuple[str, str] | None:
    if finding.get("code") == "TRN025" and finding.get("repo", "") == "Emm9625/sum" and "eval_table_size" in finding.get("message", ""):
        return "true", ("judged at the b9-infra merge (seventh session): the file sets sample_packing: true and "
                        "eval_table_size without eval_sample_packing: false; axolotl refuses it in every release that "
                        "reads eval_table_size (v0.4.0 utils/config.py validate_config, 'eval_table_size and "
                        "eval_sample_packing are not supported together with sample_packing'; v0.18.0 "
                        "utils/schemas/validation.py check_eval_packing, same condition)")
    if (finding.get("code") == "TRN099" and finding.get("repo", "") == "zichenzhang04/r1-dynamic-penalty"
            and "num_generations 8" in finding.get("message", "")):
        return "true", ("judged at the b10-unsloth merge (eighth session): environment.yml pins unsloth==2025.2.15, "
                        "unsloth-zoo 2025.2.7 and trl==0.15.2 (requirements.txt: trl==0.15.2 too; its unsloth line is a "
                        "git URL, not an exact pin); train.py calls PatchFastRL(\"GRPO\", FastLanguageModel) before "
                        "GRPOConfig(per_device_train_batch_size = 1, num_generations = 8). unsloth rl_replacements.py "
                        "grpo_trainer_fix_batch_size (c66350a48a, #1716, first in 2025.2.10) rewrites TRL 0.15's "
                        "'divisible by the number of generations' check into 'We will change the batch size of 1 to the "
                        "`num_generations` of 8' and sets per_device_train_batch_size = num_generations: the run "
                        "trains 8 completions per GPU per step where the file asks for 1")
    seen = Finding.of(finding, manifest, tree)
    repo, path, code, message, key = seen.repo, seen.path, seen.code, seen.message, seen.key

    # --- schema: TRL argument files --------------------------------------------------------------
    if code == "SCH001" and repo == "SmallDoges/small-doge" and key == "use_liger":
        return "false", ("projects/litecot/requirements.txt pins trl 0.16.0 (`trl=0.16.0=pypi_0`, a conda export); "
                         "TRL's SFTConfig has a use_liger field from 4dd0dc298 (#1992, 2024-08-29) until a8cfca6d0 "
                         "(#3364, 'Remove deprecated', first in v0.18.0): on the pinned 0.16.0 it is read")
    if code == "SCH001" and repo == "SmallDoges/small-doge" and key == "model_config":
        return "true", ("the documented launch (docs/training.md: accelerate launch ... src/small_doge/trainer/pt.py "
                        "--config recipes/doge/<model>/config_full.yaml) parses with TrlParser((ScriptArguments, "
                        "PTConfig, ModelConfig)).parse_args_and_config(fail_with_unknown_args=False) and builds the "
                        "model from model_init_kwargs (pt.py line 114): the model_config mapping is dropped silently. "
                        "(The unified src/small_doge/trainer/train.py entry reads yaml['model_config'] itself; the docs "
                        "do not use it)")
    if code == "SCH001" and repo == "SmallDoges/small-doge" and key in SMALL_DOGE_UNREAD:
        entry = ("litecot" if path.startswith("projects/litecot/") else "sft" if "/sft/" in path
                 else "dpo" if "/dpo/" in path else "pt")
        return "true", (f"`{key}` is {SMALL_DOGE_UNREAD[key]}. The file is read by {SMALL_DOGE_ENTRY[entry]}"
                        + ("" if entry in ("pt", "litecot") else "; " + TRLPARSER_UNKNOWN))
    if code == "SCH001" and repo == "MAOJIASONG/TinyZero-TRL" and key in ("defaults", "exp_name"):
        what = ("Hydra's defaults list (consumed by Hydra's composition before the script sees the config)"
                if key == "defaults" else
                "the variable recipes/hydra_default.yaml interpolates into hydra.run.dir / hydra.sweep.dir "
                "(`./outputs/${exp_name}/...`): Hydra reads it")
        return "false", (f"the recipe is a Hydra config (`# @package _global_`; src/tinyzero_trl/grpo.py and "
                         f"sft_vlm.py: @hydra.main(config_path='../../recipes', config_name='hydra_default')); `{key}` "
                         f"is {what}; the composed dict then goes to HfArgumentParser.parse_dict(cfg, "
                         f"allow_extra_keys=True), which ignores keys it has no field for")
    if code == "SCH001" and repo == "MAOJIASONG/TinyZero-TRL" and key == "vllm_device":
        return "true", ("the repository pins trl at git commit e751a16df (requirement.txt; 2025-03-31, before v0.17.0): "
                        "GRPOConfig still has vllm_device but __post_init__ warns '`vllm_device` is deprecated and will "
                        "be removed in version 0.18.0. To use vLLM, start a vLLM server with the `trl vllm-serve` "
                        "command', and GRPOTrainer at that commit never reads args.vllm_device (it connects VLLMClient("
                        "args.vllm_server_host, args.vllm_server_port)): the setting has no effect")
    if code == "SCH001" and repo == "MAOJIASONG/TinyZero-TRL" and key == "skip_prepare_dataset":
        return "true", ("no field of the parser call's classes (sft_vlm.py: HfArgumentParser((ScriptArguments, SFTConfig, "
                        "ALLModelConfig)).parse_dict(cfg, allow_extra_keys=True)): TRL's SFTConfig at the pinned "
                        "e751a16df reads skip_prepare_dataset only inside dataset_kwargs, so the top-level key is "
                        "dropped (sft_vlm.py sets dataset_kwargs={'skip_prepare_dataset': True} itself, so nothing is "
                        "lost)")
    if code == "SCH002" and repo == "MAOJIASONG/TinyZero-TRL" and message.startswith("vllm_server_host"):
        return "true", ("HfArgumentParser.parse_dict checks no types, so `vllm_server_host:` (null) reaches GRPOConfig as "
                        "None; with use_vllm: true the pinned TRL (e751a16df grpo_trainer.py) builds VLLMClient("
                        "args.vllm_server_host, args.vllm_server_port) and connects to http://None:8080: the run cannot "
                        "reach a server unless the command line overrides it")
    if code == "SCH002" and repo == "MAOJIASONG/TinyZero-TRL" and message.startswith("dataset_name"):
        return "false", ("sft_vlm.py parses the composed Hydra config with HfArgumentParser((ScriptArguments, SFTConfig, "
                         "ALLModelConfig)).parse_dict(cfg, allow_extra_keys=True); the ScriptArguments is the repository's "
                         "own (src/tinyzero_trl/utils/script_utils.py: dataset_mixer, dataset_splits, ...; no "
                         "dataset_name), and neither TRL's SFTConfig (e751a16df) nor ModelConfig has dataset_name: the "
                         "key is dropped, no type is checked, so the mapping is never read as TRL's string")

    # --- schema: accelerate ----------------------------------------------------------------------
    if code == "SCH001" and key and key.startswith("deepspeed_config.") and "for accelerate" in message:
        return "true", ACCELERATE_DS_UNREAD.replace("{key}", key.split(".", 1)[1])
    if code == "SCH003" and repo == "SmallDoges/small-doge" and message.startswith("distributed_type"):
        return "false", ("PyYAML reads `NO` as False and ClusterConfig.__post_init__ converts only strings (config_args.py "
                         "`if isinstance(self.distributed_type, str)`), but accelerate launch only compares "
                         "distributed_type with the multi-process types (_validate_launch_command: use_deepspeed = "
                         "... == DEEPSPEED, multi_gpu = ... in (MULTI_GPU, ...), use_fsdp, tpu, ...): False matches none "
                         "of them, which is what NO means, and the single-process launcher runs. The misread changes "
                         "nothing")

    # --- schema: Axolotl -------------------------------------------------------------------------
    if code == "SCH001" and adapter_is(seen, "axolotl") and key in AXOLOTL_UNREAD:
        return "true", (f"`{key}` is read by no axolotl of the files' date (2024-02, no version pinned): "
                        f"{AXOLOTL_UNREAD[key]}; the setting is silently ignored")
    if code == "SCH001" and repo == "chats-bug/jsr-config" and key == "deepspeed_config":
        return "true", ("`deepspeed_config` is no Axolotl key (no match under src/ at de87ea68f, 2023-10-06, the file's "
                        "date; the key is `deepspeed: <path>`): ignored; the value is empty, so nothing is lost")
    if code == "SCH002" and repo == "Emm9625/sum" and message.startswith("flash_attn_rms_norm"):
        return "false", (f"the axolotl of the file's date ({AXOLOTL_2024_02}) reads flash_attn_rms_norm: true "
                         "(utils/models.py: replace_llama_attn_with_flash_attn(..., rms_norm=cfg.flash_attn_rms_norm)); "
                         "only later releases refuse it, and the repository pins no axolotl")
    if code == "SCH002" and repo == "Emm9625/sum" and "loftq_bits" in message:
        return "false", (f"the axolotl of the file's date ({AXOLOTL_2024_02}) reads `loftq_bits = cfg.peft and "
                         "cfg.peft.loftq_config and cfg.peft.loftq_config.loftq_bits` (utils/models.py, config.py): an "
                         "empty value is simply no LoftQ; pydantic validation, which refuses null here, came later "
                         "(cc3cebfa7, 2024-02-26) and no axolotl is pinned")
    if code == "SCH001" and true_format_is(seen, "deepspeed") and key == "min_lr":
        return "true", ("DeepSpeed's config reader (deepspeed/runtime/config.py) reads no top-level `min_lr` (the "
                        "scheduler's params hold warmup_min_lr): the setting is silently ignored")

    # --- other schema ----------------------------------------------------------------------------
    if code == "SYN001" and repo == "Sayyam-Karnavat/algorand_assistant_vscode":
        return "true", ("line 18 is a stray fragment of a notebook comment (`dels at https://huggingface.co/unsloth`): "
                        "Python refuses the file with a SyntaxError before anything runs")

    # --- precision -------------------------------------------------------------------------------
    if code in ("PRE002", "QNT001", "QNT003", "QNT004") and repo == "FSoft-AI4Code/XMainframe" \
            and path == "recipes/deepseek/lora_sft.yaml":
        return "false", XMAINFRAME_FT
    if code == "PRE002" and repo == "FSoft-AI4Code/XMainframe":
        return "true", ("torch_dtype: float16 loads the model in float16 (the handbook-style get_kbit_device_map / "
                        "from_pretrained(torch_dtype=...)) on an A100 that has bf16; scripts/instruct.sh passes no "
                        "dtype override (its --torch_dtype lines are commented out)")
    if code == "QNT001" and repo == "FSoft-AI4Code/XMainframe":
        return "true", ("get_quantization_config (src/alignment/model_utils.py) sets bnb_4bit_compute_dtype = "
                        "getattr(torch, torch_dtype) = float16; scripts/instruct.sh overrides nothing; the A100 has bf16")
    if code == "QNT003" and repo == "FSoft-AI4Code/XMainframe":
        return "true", ("get_quantization_config takes the 4-bit compute dtype from torch_dtype: float16 while the recipe "
                        "trains with bf16: true: the LoRA matmuls run in float16 inside a bf16 run (the third set's SPPO "
                        "QNT003 again)")
    if code == "PRE003" and repo == "Emm9625/sum":
        return "true", (f"bf16: true and fp16: true are both written; Axolotl ({AXOLOTL_2024_02}) normalize_config sets "
                        "`if cfg.bf16: cfg.fp16 = False` and the trainer builder passes fp16 = cfg.fp16 and not cfg.bf16: "
                        "the fp16 line is silently dropped, the case the rule describes ('where a framework silently "
                        "picks one, the file says something else than what runs')")
    if code == "QNT006":
        return "true", ("LLM.int8() training (load_in_8bit: true) on a V100 (compute capability 7.0): bitsandbytes' "
                        "installation table lists 'LLM.int8(): NVIDIA Turing (RTX 20 series, T4) or newer GPUs'; loss "
                        "0.0 / divergence reported on older GPUs (bitsandbytes#343, peft#236)")
    if code == "PRE004" and adapter_is(seen, "axolotl"):
        return hardware_verdict(seen, tf32_via="axolotl passes cfg.tf32 on as TrainingArguments(tf32=True) "
                                               "(core/trainer_builder.py), and ")
    if verdict := hardware_verdict(seen):
        return verdict

    # --- DeepSpeed -------------------------------------------------------------------------------
    if code == "DS004":
        return "true", OFFLOAD_PARAM_STAGE3

    # --- memory ----------------------------------------------------------------------------------
    if code == "MEM001" and repo == "dissman2020/PsychFT":
        return "true", ("scripts/run_sft.sh: accelerate launch --config_file recipes/accelerate_configs/zero3.yaml "
                        "(ZeRO-3, num_processes 2): the estimate already shards over 2 GPUs. Both recipes fully "
                        "fine-tune a 7-8B model (model_name_or_path DeepSeek-R1-Distill-Qwen-7B / -Llama-8B, no "
                        "use_peft): bf16 weights and fp32 Adam master + moments are ~14 bytes/parameter, 7.6B x 14 B / 2 "
                        "= 49.6 GiB per GPU before gradients and activations: over either GPU")
    if code == "MEM001" and repo == "Emm9625/sum":
        return "true", ("Mistral-7B QLoRA with micro_batch_size 8 x sequence_len 4096 packed (pad_to_sequence_len): "
                        "32,768 tokens a micro-batch. Checkpointed layer inputs alone are 32,768 x 4,096 x 2 B x 32 "
                        "layers = 8 GiB, one recomputed layer with LoRA dropout on every linear input and the 14,336-wide "
                        "MLP several GiB more, and the logits of 32,768 x 32,000 (bf16 logits, fp32 upcast, log-softmax "
                        "and gradient) ~10-12 GiB: over 40 GiB with the 4-bit weights and CUDA context; no "
                        "deepspeed/fsdp")
    if code == "MEM001" and repo == "MetinovAdik/mistral-config":
        return "true", ("Mistral-7B QLoRA with micro_batch_size 16 x sequence_len 1024 packed: 16,384 tokens a "
                        "micro-batch; checkpointed inputs 4 GiB, one layer's activations and ~5-6 GiB of 32,000-vocabulary "
                        "logits on top of ~5 GiB of 4-bit weights and fp32 embeddings: over a V100's 16 GiB")
    return None


def adapter_is(seen: Finding, name: str) -> bool:
    return seen.adapter == name


def true_format_is(seen: Finding, name: str) -> bool:
    return seen.true_format == name


"""Verdict rules of the fourth held-out set (judge.py --set fourth; same form as judge.judge).

Written after the one blind run at main 155a362 (2026-11-24), from the files and the source that
reads them (cited in each reason); nothing in linter/ or rules/ was changed. A finding no rule
covers is unjudged (judge.py exits 1).

Memory (MEM001) is judged against the launch the repository records, as in the third set: where
its README shards the model states (ZeRO-3) over N GPUs, the per-GPU states are those / N and the
unsharded parts (logits of the packed tokens, activations) come on top.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # bench/heldout, for judging.py

from judging import BF16_ON_V100, FLASH_ON_V100, FLASH_TEXT, OVERLAP_COMM_FIXES, Finding  # noqa: E402

AXOLOTL_UNREAD = {
    # key -> why no Axolotl of the run reads it (utils/schemas/*.py at v0.9.0 and at 067b021c8; unknown keys are
    # dropped: validate_config returns the pydantic model's dump)
    "hub_private_repo": "no field of AxolotlInputConfig; core/builders/base.py sets TrainingArguments' hub_private_repo "
                        "itself (True whenever hub_model_id is set)",
    "report_to": "no field of AxolotlInputConfig; core/builders/base.py builds report_to from use_wandb / use_mlflow / "
                 "use_tensorboard ...",
    "bnb_4bit_quant_type": "no top-level Axolotl key; 4-bit options go in bnb_config_kwargs (loaders/model.py sets "
                           "nf4 and double quant itself)",
    "bnb_4bit_use_double_quant": "no top-level Axolotl key; 4-bit options go in bnb_config_kwargs (loaders/model.py "
                                 "sets nf4 and double quant itself)",
    "save_embedding_layers": "no Axolotl key at all (a PeftModel.save_pretrained argument Axolotl does not expose)",
    "sample_packing_size": "no Axolotl key (sample_packing_bin_size / sample_packing_group_size exist)",
    "datasets[0].prompt_style": "no field of SFTDataset at v0.9.0 (the repository's pin, requirements.txt "
                                "axolotl==0.9.0); the chat style is chosen by `type: alpaca_chat` / `alpaca:chat`",
    "datasets[0].field_instruction": "field_instruction/field_input/field_output belong to UserDefinedPrompterType, "
                                     "i.e. under `type:` as a mapping (utils/schemas/datasets.py); beside `type: "
                                     "alpaca` they are dropped (alpaca reads instruction/input/output anyway)",
}
AXOLOTL_UNREAD["datasets[0].field_input"] = AXOLOTL_UNREAD["datasets[0].field_instruction"]
AXOLOTL_UNREAD["datasets[0].field_output"] = AXOLOTL_UNREAD["datasets[0].field_instruction"]

LLAMA3_FULL = ("SmartFlowAI/Llama3-Tutorial", "configs/llama3-alpaca/")

# XTuner configs whose recorded launch passes --deepspeed (one of xtuner's configs/deepspeed/*.json)
XTUNER_DEEPSPEED_LAUNCH = {
    ("SmartFlowAI/Llama3-Tutorial", "configs/llama3-alpaca/" + name): "configs/llama3-alpaca/README.md: xtuner train "
    + name + " --deepspeed deepspeed_zero" + stage
    for name, stage in (("llama3_8b_512_qlora_alpaca_e3.py", "1"), ("llama3_8b_8k_qlora_alpaca_e3.py", "1"),
                        ("llama3_8b_8k_full_alpaca_e3_sp2.py", "3"), ("llama3_8b_8k_full_alpaca_e3.py", "3"),
                        ("llama3_8b_128k_full_alpaca_e3.py", "3"))
}
XTUNER_DEEPSPEED_LAUNCH[("SmartFlowAI/Llama3-Tutorial", "configs/llama3-agentflan/llama3_8b_instruct_qlora_agentflan_3e.py")] = (
    "docs/agent.md: xtuner train ... --deepspeed deepspeed_zero2")
XTUNER_DEEPSPEED_LAUNCH[("SmartFlowAI/Llama3-Tutorial", "configs/llama3-llava/"
                         "llava_llama3_8b_instruct_qlora_clip_vit_large_p14_336_lora_e1_finetune.py")] = (
    "docs/llava.md: xtuner train ... --deepspeed deepspeed_zero2")
XTUNER_DEEPSPEED_LAUNCH[("PeterH0323/Streamer-Sales",
                         "finetune_configs/internlm2_chat_7b/internlm2_chat_7b_qlora_custom_data.py")] = (
    "README.md: xtuner train ... --deepspeed deepspeed_zero2")


def judge(finding: dict, manifest: dict, tree: Path) -> tuple[str, str] | None:
    seen = Finding.of(finding, manifest, tree)
    repo, path, code, message = seen.repo, seen.path, seen.code, seen.message
    true_format, adapter, key, text = seen.true_format, seen.adapter, seen.key, seen.text

    if seen.misclaimed and code.startswith("SCH") and path.endswith("trainer_state.json"):
        return "false", ("format misclaim: transformers' TrainerState JSON (trainer_callback.py TrainerState."
                         "save_to_json, written into every checkpoint-N/ by Trainer._save_checkpoint) claimed by the "
                         "deepspeed adapter, probably for its train_batch_size field; no DeepSpeed run reads it")
    if seen.misclaimed and code.startswith("SCH"):
        return "false", f"format misclaim: a {true_format or '?'} file claimed by the {adapter} adapter"

    # --- schema -------------------------------------------------------------------------------
    if code == "SCH001" and adapter == "axolotl" and key in AXOLOTL_UNREAD:
        return "true", f"`{key}` is read by no Axolotl of the run: {AXOLOTL_UNREAD[key]}; the setting is silently ignored"

    # --- links --------------------------------------------------------------------------------
    if code == "LNK001" and repo == "yxzwayne/Medilora":
        return "false", ("the configs (committed 2023-12-17) are run from an axolotl checkout, as axolotl's README "
                         "then said (`accelerate launch -m axolotl.cli.train <config> --deepspeed deepspeed/zero3.json`); "
                         "TrainingArguments opens the path relative to that working directory, where axolotl kept "
                         "deepspeed/zero3.json until 54d2ac155 (2024-01-24, renamed deepspeed_configs/): the file "
                         "existed where the config was read")

    # --- quantization / sharding --------------------------------------------------------------
    if code == "QNT007" and repo == "wauwau0977/FineTuningTrial":
        return "false", ("the file writes `fsdp: []`, an empty list: Axolotl passes fsdp on only `if self.cfg.fsdp:` "
                         "(core/trainer_builder.py at v0.8.0; schemas/config.py fsdp: list[str] | None), so no FSDP "
                         "runs and the 8-bit weights are never flattened")
    if code == "QNT006":
        return "true", ("LLM.int8() training on a V100 (compute capability 7.0): bitsandbytes' own installation table "
                        "(docs/source/installation.mdx at 0.45.4) lists 'LLM.int8(): NVIDIA Turing (RTX 20 series, T4) "
                        "or newer GPUs'; loss 0.0 / divergence reported on older GPUs (bitsandbytes#343, peft#236)")

    # --- memory -------------------------------------------------------------------------------
    if code == "MEM001" and repo == LLAMA3_FULL[0] and "_full_" in path:
        gpu = "V100" if "V100" in message else "A100"
        if "128k" in path:
            return "true", ("the README runs it with NPROC_PER_NODE=8 --deepspeed deepspeed_zero3, so the model "
                            "states are sharded (the message's 'alone need 64.1 GiB per GPU' is not what runs), but the "
                            "file sets max_length 128k with sequence_parallel_size 1: the logits of 131,072 tokens x "
                            "128,256 vocabulary (16-bit logits, fp32 log-softmax and gradient, ~156 GiB) sit on one GPU; "
                            "it does not fit either GPU")
        if "sp2" in path:
            return "true", ("README: NPROC_PER_NODE=2 xtuner train ... --deepspeed deepspeed_zero3; DeepSpeed's fp16 "
                            "ZeRO-3 holds 16 bytes per parameter (fp16 weights and gradients, fp32 master weights and "
                            "Adam moments): 8.03B x 16 B / 2 GPUs = 59.8 GiB per GPU before activations, over "
                            f"{gpu}'s memory (the README's '2*A100' are 80 GB cards)")
        if gpu == "V100":
            return "true", ("README: NPROC_PER_NODE=8 --deepspeed deepspeed_zero3: 8.03B x 16 B / 8 = 15.0 GiB of "
                            "sharded states per GPU, plus the unsharded logits of 8,192 packed tokens x 128,256 "
                            "vocabulary (~9.8 GiB): over a V100's 16 GiB")
        return "false", ("README: NPROC_PER_NODE=8 xtuner train llama3_8b_8k_full_alpaca_e3.py --deepspeed "
                         "deepspeed_zero3 (xtuner's ZeRO-3 config, no offload): 8.03B x 16 B / 8 = 15.0 GiB of states "
                         "per GPU, plus ~9.8 GiB of logits and checkpointed activations, fits an A100-40GB; the "
                         "config file cannot say the world size")
    if code == "MEM001" and repo == LLAMA3_FULL[0] and "8k_qlora" in path:
        return "true", ("configs/llama3-alpaca/README.md itself calls this the '24GB' variant (QLoRA, 8,192 tokens "
                        "packed): over a V100's 16 GiB")
    if code == "MEM001" and repo == LLAMA3_FULL[0] and "agentflan" in path:
        return "true", ("a warning (above 90%): QLoRA Llama-3-8B at 4,096 packed tokens; the tutorial's README "
                        "measures the same recipe at 10 GB for 512 tokens and 24 GB for 8,192, and the logits of "
                        "4,096 tokens x 128,256 vocabulary alone are ~4.9 GiB: about the V100's 16 GiB")
    if code == "MEM001" and repo == "PeterH0323/Streamer-Sales":
        return "true", ("the file's own comment on batch_size = 16 says '8-> 40G, 16 -> 80G' (max_length 2048 packed, "
                        "InternLM2 92,544-token vocabulary); the README runs it with --deepspeed deepspeed_zero2, which "
                        "does not shard activations or logits: over both GPUs")
    if code == "MEM001" and repo == "TanametTpk/util-llm-script":
        return "true", ("sample_packing with micro_batch_size x sequence_len packed tokens per step (32 x 4096 or "
                        "8 x 4096) on Llama-3.2-1B's 128,256-token vocabulary: the logits alone (16-bit logits, fp32 "
                        "log-softmax and gradient) exceed the GPU; no deepspeed/fsdp, no fused-loss plugin")
    if code == "MEM001" and repo == "omkar-334/DEITA":
        return "true", ("Mistral-7B QLoRA at 2 x 8192 packed tokens: checkpointed layer inputs (16,384 x 4,096 x 2 B x "
                        "32 layers = 4 GiB) plus one layer's activations and ~6 GiB of logits: over a V100's 16 GiB "
                        "(flash attention, which the file asks for, does not even run there)")

    # --- training -----------------------------------------------------------------------------
    if code == "TRN057" and adapter == "axolotl":
        return "false", ("Axolotl reads num_epochs beside max_steps: utils/data/sft.py (since 641e6f7e5, 2023-11-07; at "
                         "v0.8.0 and today) sets total_num_steps = min(calculate_total_num_steps(cfg, train_dataset), "
                         "cfg.max_steps), the epoch-based count coming from cfg.num_epochs, and core/trainer_builder.py "
                         "passes that as TrainingArguments.max_steps. The run stops at whichever comes first; 'the "
                         "epoch count is never read' is the plain Trainer's behaviour, not Axolotl's, and which bound "
                         "wins needs the dataset size")
    if code == "TRN057":
        return "true", ("transformers' TrainingArguments.max_steps 'overrides num_train_epochs' when positive "
                        "(Trainer._inner_training_loop sets num_train_epochs from max_steps)")
    if code == "TRN102" and repo == "YuvaneshSankar/reinforcement-tuninig-llms":
        return "true", ("SFTConfig(eval_steps=500,  # run evaluation every 500 steps) with no eval_strategy: TRL's "
                        "SFTConfig and Unsloth's generated UnslothSFTConfig keep TrainingArguments' default 'no', so "
                        "DefaultFlowCallback (transformers trainer_callback.py) never evaluates; the comment's evaluation "
                        "never runs (the SFTTrainer gets no eval_dataset either)")
    if code == "TRN001" and repo == "yongjik-kim/mistral-finetune-stuff":
        return "true", ("Mistral with sample_packing, flash_attention false, xformers empty, on the Axolotl of the "
                        "files' date (2023-12): utils/models.py patches Mistral for packing only `if "
                        "cfg.is_mistral_derived_model and cfg.flash_attention and cfg.sample_packing`, so the default "
                        "attention reads the multipack mask (1, 2, 3 ... per sample) as 'attend' and packed samples see "
                        "each other; Axolotl itself raised on this from bf4cd6725 (2024-04-05) and warns since "
                        "bda48f015 'sample_packing without flash_attention or sdp_attention does not handle "
                        "cross-attention'")
    if code == "TRN001":
        return "true", ("sample_packing with flash_attention false and no sdp/flex/xformers (the repository runs "
                        "`axolotl train`, 2025): Axolotl's own schemas/validation.py check_sample_packing_without_"
                        "attention warns '`sample_packing` without an attention backend does not handle cross-sample "
                        "decontamination' (earlier wording since bda48f015 / 8bbad21bf). The base model is "
                        "Mamba-Codestral (mamba2, no attention), so the message's mechanism is not literal, but its "
                        "effect holds: nothing resets the recurrent state at pack boundaries")
    if code == "DS005":
        return "true", ("ZeRO-2 with overlap_comm true on the pinned DeepSpeed (pyproject.toml deepspeed==0.14.0, in "
                        "both the dependencies and the train extra), older than " + OVERLAP_COMM_FIXES)

    # --- model / adapter ----------------------------------------------------------------------
    if code == "MOD004":
        return "true", ("Llama-3.2-1B has tie_word_embeddings true; with embed_tokens and lm_head both in "
                        "modules_to_save PEFT wraps each in its own ModulesToSaveWrapper copy, and PEFT itself warns "
                        "'Model has `tie_word_embeddings=True` and a tied layer is part of the adapter, but no "
                        "implementation exists to tie the adapters' (tuners/tuners_utils.py, huggingface/peft#2777)")
    if code == "NUM004":
        return "true", ("lora_modules_to_save with the embeddings while Axolotl loads the model in 16-bit: PEFT's "
                        "ModulesToSaveWrapper copies them in the model dtype (peft/utils/other.py), no fp32 upcast")

    # --- hardware and numerics (the earlier sets' rules) --------------------------------------
    if code == "PRE001" and re.search(r"bf16|bfloat16|mixed_precision", text):
        return "true", BF16_ON_V100
    if code == "PRE007" and re.search(FLASH_TEXT, text):
        return "true", FLASH_ON_V100
    if code == "PRE004" and re.search(r"tf32: true", text):
        return "true", ("axolotl passes cfg.tf32 on as TrainingArguments(tf32=True), and TrainingArguments."
                        "__post_init__ raises '--tf32 requires Ampere or a newer GPU arch' below compute capability 8.0")
    if code == "NUM003":
        via = (" Launched with --deepspeed, xtuner's auto_dtype_of_deepspeed_config picks bf16 only where "
               "torch.cuda.is_bf16_supported(); the pinned torch 2.1.2 (docs / environment.yml) answers False on a V100 "
               "(the tensor-creation fallback, pytorch#115924, came in 2.3; pytorch#124996 shows 2.2.2 saying False), "
               "so fp16 stays." if (repo, path) in XTUNER_DEEPSPEED_LAUNCH else "")
        return "true", ("fp16 training (AmpOptimWrapper dtype='float16', torch_dtype float16) of a checkpoint trained "
                        "in bfloat16 on a V100 (no bf16 there): activations outside fp16's range give NaN or zero loss "
                        "(QwenLM/Qwen3#670, hiyouga/LLaMA-Factory#4901)." + via)
    if code in ("PRE002", "QNT001") and repo == "lyyilin/poem-soul":
        return "false", ("the file is a dump of a DeepSpeed run (mmengine writes the config it ran): optim_wrapper "
                         "type='DeepSpeedOptimWrapper' and strategy=dict(type='DeepSpeedStrategy', config=dict("
                         "bf16=dict(enabled=True), fp16=dict(enabled=False, ...))) (lines 79-115): the run was bf16, "
                         "DeepSpeed cast the float16-loaded parameters to bf16 (runtime/engine.py "
                         "_configure_distributed_model) and Linear4bit.set_compute_type computes in the bf16 input's "
                         "dtype; the AmpOptimWrapper reading of the first judging was wrong (there is none)")
    if code == "PRE002" and (repo, path) in XTUNER_DEEPSPEED_LAUNCH:
        return "false", (f"the recorded launch ({XTUNER_DEEPSPEED_LAUNCH[(repo, path)]}) passes --deepspeed with one of "
                         "xtuner's own DeepSpeed configs (fp16 enabled 'auto', bf16 enabled 'auto'); xtuner/tools/"
                         "train.py then replaces the AmpOptimWrapper by DeepSpeedOptimWrapper and auto_dtype_of_"
                         "deepspeed_config (tools/utils.py, since 54467bea2, 2023-11) enables bf16 and disables fp16 "
                         "where torch.cuda.is_bf16_supported(): on an A100 the run is bf16, and DeepSpeed's engine casts "
                         "the parameters to bf16 (_configure_distributed_model), so the float16 model dtype does not "
                         "stay either")
    if code == "PRE002":
        return "true", ("the file trains in fp16 (AmpOptimWrapper dtype='float16' / torch_dtype=torch.float16) and no "
                        "recorded launch passes --deepspeed (whose 'auto' would pick bf16): fp16 on an A100 that has "
                        "bf16")
    if code == "QNT001" and (repo, path) in XTUNER_DEEPSPEED_LAUNCH:
        return "false", (f"the recorded launch ({XTUNER_DEEPSPEED_LAUNCH[(repo, path)]}) makes the run bf16 on an A100 "
                         "(xtuner tools/utils.py auto_dtype_of_deepspeed_config, see PRE002), and bitsandbytes' "
                         "Linear4bit.set_compute_type switches compute_dtype to the input's dtype when that is bfloat16 "
                         "or float32 ('the input is in a dtype that is safe to compute in, we switch to this type', "
                         "nn/modules.py, 0.43.1): the written float16 compute dtype is replaced by bf16 at the first "
                         "forward")
    if code == "QNT001":
        return "true", ("bnb_4bit_compute_dtype=torch.float16 is written in the file and the run is fp16 "
                        "(AmpOptimWrapper, torch_dtype float16, no --deepspeed recorded), so Linear4bit keeps float16 "
                        "(set_compute_type switches only for bf16/fp32 inputs); the A100 target has bf16")
    return None

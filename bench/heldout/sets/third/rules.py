"""Verdict rules of the third held-out set (judge.py --set third; same form as judge.judge).

Written after the one blind run at main 7797a00 (2026-11-24), from the files and the source that
reads them (cited in each reason); nothing in linter/ or rules/ was changed. A finding no rule
covers is unjudged (judge.py exits 1).

Memory (MEM001) is judged against the launch the repository records: where its script or README
shards the model states (FSDP FULL_SHARD, ZeRO-3) over N GPUs, the finding's "model states alone
need X GiB per GPU" is checked as X / N against the GPU; where the recorded launch is plain DDP
(every GPU holds everything), the estimate stands.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # bench/heldout, for judging.py

from judging import (OFFLOAD_PARAM_STAGE3, OVERLAP_COMM_FIXES, ZERO2_FP16, Finding,  # noqa: E402
                     hardware_verdict, memory_need, sharded_need)

# STaR-Judge: scripts/train_sft.sh runs `accelerate launch --config_file accelerate/fsdp_config.yaml` (FSDP
# FULL_SHARD, num_processes 4, `#SBATCH --gres=gpu:4`); scripts/train_dpo.sh the same on `--gres=gpu:2`
STAR_SHARDS = {"sft": 4, "dpo": 2}


def judge(finding: dict, manifest: dict, tree: Path) -> tuple[str, str] | None:
    seen = Finding.of(finding, manifest, tree)
    repo, path, code, message = seen.repo, seen.path, seen.code, seen.message
    true_format, adapter, key = seen.true_format, seen.adapter, seen.key

    if seen.misclaimed and code.startswith("SCH"):
        return "false", f"format misclaim: claimed by the {adapter} adapter as {true_format or '?'}"

    # --- schema -----------------------------------------------------------------------------
    if code == "SCH001" and repo == "ContextualAI/HALOs" and key == "fsdp_config.fsdp_backward_prefetch_policy":
        return "false", ("HALOs' install.sh pins accelerate==0.33.0; accelerate read fsdp_backward_prefetch_policy until "
                         "1.0.0: 848ed800 (#2288, v0.26.0) renamed it fsdp_backward_prefetch but kept the old key "
                         "(commands/launch.py: 'fsdp_backward_prefetch_policy is deprecated ...', args.fsdp_backward_prefetch "
                         "= args.fsdp_backward_prefetch_policy -> FSDP_BACKWARD_PREFETCH), removed only in 79a84264 (#3098, "
                         "v1.0.0): on the pinned accelerate the setting is honored")
    if code == "SCH001" and repo == "argilla-io/notus" and key and key.startswith("deepspeed_config."):
        return "true", (f"`{key.split('.', 1)[1]}` was never an accelerate DeepSpeed config key (no commit of "
                        "huggingface/accelerate mentions it); commands/launch.py copies deepspeed_config entries onto "
                        "args and reads only the known ones (zero_stage, offload_*_device, ...): it is silently ignored "
                        "(the bf16 comes from mixed_precision, the param offload is not pinned)")
    if code == "SCH001" and repo == "argilla-io/notus" and "for trl" in message:
        return "false", (f"v1/fine-tune/run_dpo.py reads the file with alignment-handbook's H4ArgumentParser((ModelArguments, "
                         f"DataArguments, DPOConfig)) (`from alignment import ...`; the README installs alignment-handbook "
                         f"from git): `{key}` is a field of its ModelArguments/DataArguments (src/alignment/configs.py at "
                         "3f368a0, 2023-12-04, the handbook of the notus configs' date; use_flash_attention_2 until "
                         "95dc472, 2024-07-30), classes in an installed package, not in this repository")
    if code == "SCH001" and key == "datasets[0].train_on_split":
        return "true", ("no Axolotl of these runs (cloned from main, 2024-05 to 2024-11) reads train_on_split: the loader "
                        "read it from 409ca0f21 (#654, 2023-09-28) until cda52dc32 (#786, 2024-01-22, replaced by `split`); "
                        "the v0_4_1 pydantic SFTDataset kept the field, so it was accepted and ignored, and today's "
                        "schemas/validation.py warns 'this field is not recognized and will be silently ignored. Use split'. "
                        "Nothing is lost here: the files also set split: train")
    if code == "SCH001" and repo == "open-thoughts/open-thoughts":
        return "true", (f"`{key}` is no LLaMA-Factory argument (hparams/*.py; messages/formatting/role_tag/... are "
                        "dataset_info.json attributes, global_batch_size none at all); the README names "
                        "hiyouga/LLaMA-Factory as the training code, whose hparams/parser.py _parse_args calls "
                        "parse_dict(args, allow_extra_keys=False): HfArgumentParser raises 'Some keys are not used'. "
                        "(Open Thoughts may have run a fork; the repository records none)")

    # --- links --------------------------------------------------------------------------------
    if code == "LNK001" and repo == "open-thoughts/open-thoughts":
        return "true", ("`deepspeed: train/zero3_offload.json` names a file the repository does not have (train/ holds only "
                        "the two YAMLs); LLaMA-Factory hands the path to TrainingArguments, and the DeepSpeed init fails")

    # --- memory -------------------------------------------------------------------------------
    if code == "MEM001" and repo == "Joe-Hall-Lee/STaR-Judge" and "FSDP full_shard" in message:
        need, gpu, size = sharded_need(message)
        verdict = "true" if float(need) > 0.9 * float(size) else "false"
        return verdict, (f"the estimate already shards by the launch (scripts/train_*.sh: accelerate launch --config_file "
                         f"accelerate/fsdp_config.yaml, FSDP FULL_SHARD): {need} GiB per GPU before activations is "
                         f"{'above' if verdict == 'true' else 'within'} 90% of {gpu}'s {size} GiB")
    if code == "MEM001" and repo == "Joe-Hall-Lee/STaR-Judge":
        stage = "dpo" if "_dpo" in path else "sft"
        shards = STAR_SHARDS[stage]
        need, gpu, size = memory_need(message)
        per_gpu = float(need) / shards
        verdict = "true" if per_gpu > float(size) else "false"
        return verdict, (f"scripts/train_{stage}.sh launches with accelerate/fsdp_config.yaml (FSDP FULL_SHARD) on "
                         f"{shards} GPUs: parameters, gradients and optimizer states are sharded, {need} / {shards} = "
                         f"{per_gpu:.1f} GiB per GPU, which {'still exceeds' if verdict == 'true' else 'fits'} {gpu}'s "
                         f"{size} GiB (the YAML cannot say the sharding)")
    if code == "MEM001" and repo == "uclaml/SPPO":
        need, gpu, size = memory_need(message)
        return "false", (f"launched with `accelerate launch --config_file recipes/accelerate_configs/deepspeed_zero3.yaml` "
                         f"(scripts/pipeline.sh; recipes/zephyr-7b-beta/README.md): ZeRO-3 over num_processes 8 shards the "
                         f"model states, {need} / 8 = {float(need) / 8:.1f} GiB per GPU, which fits {gpu}")
    if code == "MEM001" and repo in ("RLHFlow/RLHF-Reward-Modeling", "RLHFlow/Online-RLHF"):
        if "math-rm/" in path:
            return "true", ("full fine-tuning of Llama-3.1-8B at sequence_len 8192 (packed); the README runs it with "
                            "--deepspeed deepspeed_3.json on 8 GPUs: ZeRO-3 leaves ~7.5 GiB of the 59.8 GiB of model "
                            "states per GPU, but the unsharded logits of 8192 tokens x 128,256 vocabulary (16-bit logits, "
                            "fp32 log-softmax and gradient, ~10 GiB) come on top: over a V100's 16 GiB")
        return "true", ("full fine-tuning (adapter empty, no deepspeed/fsdp in the file) launched by the README with plain "
                        "`torchrun --nproc_per_node N -m axolotl.cli.train` (DDP: every GPU holds weights, gradients and "
                        "activations); pair-pm/README.md itself adds 'If you encounter out-of-memory issue' run ZeRO-3")

    # --- DeepSpeed ----------------------------------------------------------------------------
    if code == "DS020" and repo == "LLaVA-VL/LLaVA-NeXT":
        return "false", ("the README installs with `pip install -e \".[train]\"`, whose pyproject.toml train extra pins "
                         "deepspeed==0.14.4 (since fbd6a07, 2024-09-26); the hpZ fix (75ed63c94, #4906) is in 0.13.2. "
                         "requirements.txt's deepspeed==0.12.2 (2024-04-30) is the stale list the finding read")
    if code == "DS005":
        via = (" (LLaVA-NeXT's README installs pyproject.toml's deepspeed==0.14.4, not requirements.txt's 0.12.2; "
               "still older)" if repo == "LLaVA-VL/LLaVA-NeXT" else "")
        return "true", "ZeRO-2 with overlap_comm true on a pinned DeepSpeed older than " + OVERLAP_COMM_FIXES + via
    if code == "DS004":
        return "true", OFFLOAD_PARAM_STAGE3
    if code == "DS001":
        return "true", ZERO2_FP16

    # --- versions -----------------------------------------------------------------------------
    if code == "VER004" and repo == "uclaml/SPPO":
        return "false", ("the SFT recipe is run by sppo/run_sft.py (copied from alignment-handbook), which passes "
                         "SFTTrainer(..., packing=True) (line 147): packed samples of equal length, so the "
                         "per-micro-batch mean is the global one")

    # --- training -----------------------------------------------------------------------------
    if code == "TRN002":
        return "true", ("the script sets tokenizer.pad_token = tokenizer.eos_token and trains with "
                        "DataCollatorForLanguageModeling(mlm=False), whose torch_call sets labels[labels == "
                        "pad_token_id] = -100 (transformers data/data_collator.py): every EOS is masked from the loss")

    # --- hardware and numerics (the first and second sets' rules) -----------------------------
    if code == "NUM001":
        return "true", ("Mistral-7B-v0.1 in 4-bit with compute dtype float16 (the recipe's torch_dtype: float16 becomes "
                        "bnb_4bit_compute_dtype in sppo/alignment/model_utils.py get_quantization_config) and "
                        "per_device_train_batch_size 4 on a V100: the overflow of ludwig-ai/ludwig#3950")
    if code == "QNT003":
        return "true", ("get_quantization_config (sppo/alignment/model_utils.py) sets bnb_4bit_compute_dtype from "
                        "torch_dtype: float16, while the recipe trains with bf16: true: the LoRA matmuls run in float16 "
                        "inside a bf16 run")
    via = ("axolotl passes cfg.tf32 on as TrainingArguments(tf32=True) (core/trainer_builder.py), and "
           if adapter == "axolotl" else "")
    if verdict := hardware_verdict(seen, tf32_via=via):
        return verdict
    if code == "PRE002":
        return "true", ("the file trains in fp16 (mixed_precision: fp16 / fp16 enabled / model dtype float16) on an "
                        "A100 that has bf16")
    if code == "QNT001":
        return "true", "the 4-bit compute dtype is float16 in the file; the A100 target has bf16"
    return None

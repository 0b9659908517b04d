"""The sixth held-out set's SELECTION (read by build_manifest.py --set sixth).

Same form as build_manifest.SELECTION: (repo, [(path regex, kind, true_format)], sample limits).
Chosen on 2026-11-24, blind (before any trainlint run on these files), from public repositories
in none of the first five sets' MANIFEST.tsv, not in /work/shared/corpus/SOURCES.md, named nowhere
in the checkout (git grep), and not among the /work/.mirror folders earlier sets or other sessions
had fetched. Aimed at the frameworks and rules changed most recently (main e31db3f): Unsloth scripts
(FastLanguageModel.get_peft_model + SFTTrainer/GRPOTrainer), LLaMA-Factory YAMLs (train, DPO, predict
and export configs, one that does not parse, one indented as a whole), Axolotl YAMLs (an rl: dpo
config under FSDP, Liger plugin, full fine-tunes), XTuner configs (one as `xtuner copy-cfg`/dump
writes them, type names as strings), DeepSpeed JSONs, accelerate YAMLs (DeepSpeed, FSDP, plain),
TRL argument YAMLs (GRPO, read by TrlParser and parse_yaml_file), PEFT adapter_config.json, plus
JSON/YAML that must stay quiet: an MLX-LM adapter_config.json, a project's own YAMLs full of
TrainingArguments-like keys read by yaml.safe_load, model/tokenizer/trainer-state JSONs, npm/VS Code
JSON, LLaMA-Factory dataset registries, result JSONs. The true format of each file is decided from
the repository's own code or instructions that read it (cited per rule).

LAUNCH = True: shell scripts, Makefiles and READMEs that run a launcher are added as kind
"launch" (build_manifest.LAUNCHERS); support files, nothing is expected on them.
"""

SEED = 19
LAUNCH = True

# paths left out of the automatic pins, argument classes and launch scripts
EXCLUDE = {
    # vendored copies of llama.cpp and of LLaMA-Factory's src/ (other projects' code)
    "prepref/ai-advert": r"^(finetuning/gguf/|finetuning/llama-factory-src/|ai-advert/)",
    # a datasets cache folder
    "DeL-TaiseiOzaki/multi-gpu-sft": r"^cache/",
}

SELECTION = [
    # ---- Unsloth scripts -------------------------------------------------------------------------
    ("DeL-TaiseiOzaki/multi-gpu-sft", [
        # mdx/run_unsloth.sh: accelerate launch --config_file configs/accelerate_config_notzero.yaml
        # train_unsloth.py ...; mdx/run*.sh use the other accelerate configs with train_*.py
        # (HfArgumentParser of their own dataclasses); default_config.yaml names ds_config.json
        (r"^configs/.*\.yaml$", "config", "accelerate"),
        # FastLanguageModel.from_pretrained(dtype=torch.bfloat16) + get_peft_model + SFTTrainer(packing=False)
        (r"^train_unsloth\.py$", "config", "unsloth"),
        (r"^\.pre-commit-config\.yaml$", "other", "none"),
        (r"^gen_dataset/(progress|question_sample)\.json$", "other", "none"),  # data-generation state / data
    ], {}),
    ("dw-innovation/unsloth-training", [
        # FastLanguageModel.from_pretrained(load_in_4bit) + get_peft_model(lora_dropout=0) + SFTTrainer;
        # scripts/train_unsloth.sh runs it
        (r"^train_unsloth\.py$", "config", "unsloth"),
    ], {}),
    ("Strong-Gavin/llm-train", [
        # unsloth/*.py: FastLanguageModel (load_in_4bit) + get_peft_model + SFTTrainer
        (r"^unsloth/.*\.py$", "config", "unsloth"),
        # a ZeRO JSON beside transformer/transformer_train_xhs_multi_gpu.py (Trainer deepspeed=, commented)
        (r"^transformer/ds_config\.json$", "config", "deepspeed"),
    ], {}),
    ("sdiehl/tiny-r1", [
        # accelerate.sh: accelerate launch --num_processes 3 --config_file deepspeed_zero3.yml train_trl.py
        # --config zero3.yaml; train_trl.py: TrlParser((GRPOConfig, ModelConfig)).parse_args_and_config();
        # setup.sh pins trl at git e95f9fb7, deepspeed==0.15.4, accelerate==1.3.0, vllm==0.7.0
        (r"^deepspeed_zero3\.yml$", "config", "accelerate"),
        (r"^zero3\.yaml$", "config", "hf"),
        # FastLanguageModel.from_pretrained(fast_inference=True) + get_peft_model + GRPOTrainer
        (r"^train_unsloth\.py$", "config", "unsloth"),
    ], {}),
    # ---- TRL argument YAMLs + accelerate -------------------------------------------------------
    ("yflyzhang/simpleR1", [
        # scripts/train_grpo_*.sh: accelerate launch --config_file configs/accelerate_configs/<x>.yaml
        # src/run_grpo.py --config configs/grpo_config.yaml ...; run_grpo.py: TrlParser((GRPOScriptArguments,
        # GRPOTrainingArguments, ModelArguments)) (src/arguments.py)
        (r"^configs/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        (r"^configs/grpo_config\.yaml$", "config", "hf"),
    ], {}),
    ("xinyue097/medical-reasoning", [
        # recipes/*/train.sh: accelerate launch --config_file ../accelerate_configs/zero2.yaml
        # ../../src/medreason/grpo.py configs.yaml; grpo.py: TrlParser((GRPOScriptArguments, GRPOConfig,
        # ModelConfig)).parse_yaml_file(sys.argv[1]) (medreason/configs.py); setup.py pins trl==0.18.0,
        # transformers==4.52.3, accelerate==1.4.0, deepspeed==0.16.8
        (r"^recipes/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        (r"^configs/zero2\.yaml$", "config", "accelerate"),
        (r"^recipes/.*/configs\.yaml$", "config", "hf"),
        (r"^configs/test_config_.*\.yaml$", "config", "hf"),  # the same keys, for a local run of grpo.py
        (r"^configs/deepspeed_stage.*\.json$", "config", "deepspeed"),
    ], {}),
    ("heyalexchoi/qwen3-1.7B-MATH-RLVR", [
        # scripts/sft_train.py / grpo_train.py: yaml.safe_load(--config) and config.get("...") copied into
        # SFTConfig(...) / the script's own GRPO loop: the project's own config, not an argument file
        (r"^configs/.*\.yaml$", "other", "none"),
        (r"^eval_results/.*\.json$", "other", "none"),  # results
    ], {r"^eval_results/.*\.json$": 5}),
    # ---- DeepSpeed ---------------------------------------------------------------------------------
    ("vimalKeshu/qwen2-7b-reason-lora", [
        # run_train.sh: deepspeed --num_gpus=2 train.py --deepspeed /workspace/ds_config_zero2.json;
        # train.py: TrainingArguments(deepspeed=args.deepspeed)
        (r"^ds_config_zero2\.json$", "config", "deepspeed"),
    ], {}),
    ("nappeheimer/codeforces-sft", [
        # train.sh: accelerate launch --config_file accelerate_zero3.yaml run_sft.py
        (r"^accelerate_zero3\.yaml$", "config", "accelerate"),
        # train.py / train_finch.py: TrainingArguments(deepspeed=args.deepspeed)
        (r"^ds_config_zero2(_finch)?\.json$", "config", "deepspeed"),
        # sft/config.py: yaml.safe_load into the project's own TrainConfig dataclass
        (r"^sft_config\.yaml$", "other", "none"),
        (r"^eval_results(\.loss|\.rank\d\.loss)\.json$", "other", "none"),  # results
    ], {r"^eval_results(\.loss|\.rank\d\.loss)\.json$": 3}),
    ("prepref/ai-advert", [
        # finetuning/train.sh: torchrun llama-factory-src/train.py --deepspeed ./config_deepspeed.json ...
        # (the vendored LLaMA-Factory's hparams parser, TrainingArguments.deepspeed)
        (r"^finetuning/config_deepspeed\.json$", "config", "deepspeed"),
        (r"^finetuning/data/dataset_info\.json$", "other", "none"),  # LLaMA-Factory dataset registry
        (r"^ai-advert/(package|public/manifest)\.json$", "other", "none"),  # npm / web app manifest
    ], {}),
    # ---- LLaMA-Factory -----------------------------------------------------------------------------
    ("Zero010731/Ran-Score", [
        # README: install LLaMA-Factory, `llamafactory-cli train configs/llamafactory/<x>.yaml`; sft.yaml and
        # alspc_dpo.yaml (stage dpo, do_train) train, alspc_dpo_predict_test.yaml predicts (do_predict)
        (r"^configs/llamafactory/.*\.yaml$", "config", "llamafactory"),
    ], {}),
    ("minghub7/qwen2_5vl_qlora", [
        # LLaMA-Factory: qlora_sft.yaml for `llamafactory-cli train`, merge_lora.yaml (export_dir; the file's
        # own header names examples/merge_lora/) for `llamafactory-cli export`
        (r"^(qlora_sft|merge_lora)\.yaml$", "config", "llamafactory"),
    ], {}),
    ("pang-jh/Qwen_Law_-Fine-Tuning", [
        # a copy of LLaMA-Factory's examples/train_lora/llama3_lora_sft.yaml (llamafactory-cli train)
        (r"^llama3_lora_sft\.yaml$", "config", "llamafactory"),
    ], {}),
    ("ardafincan/m3a-finetune", [
        # train.py: subprocess ['llamafactory-cli', 'train', config_path]
        (r"^llama3_lora_sft\.yaml$", "config", "llamafactory"),
    ], {}),
    # ---- Axolotl -----------------------------------------------------------------------------------
    ("D-Katt/llm_tuning", [
        # README: python3 -m axolotl.cli.train src/lora_config.yaml | src/full_config.yaml;
        # accelerate launch --config_file src/config.yaml src/train.py (SFTConfig in code)
        (r"^src/(lora|full)_config\.yaml$", "config", "axolotl"),
        (r"^src/config\.yaml$", "config", "accelerate"),
    ], {}),
    ("thepowerfuldeez/qwen2_1_5b_summarize", [
        (r"^axolotl_config\.yaml$", "config", "axolotl"),  # rl: dpo, adapter: qlora, fsdp (README: "in axolotl")
    ], {}),
    ("johnlund/epistemic-stance", [
        # run_training_axolotl.sh: pip install axolotl[deepspeed]; accelerate launch --num_processes 4
        # --mixed_precision bf16 -m axolotl.cli.train axolotl_config.yaml
        (r"^axolotl_config\.yaml$", "config", "axolotl"),
        (r"^output/.*\.json$", "other", "none"),  # results
    ], {}),
    ("long-olivia/subliminal_reimplementation", [
        # Axolotl's format by its keys (base_model, datasets type chat_template, micro_batch_size, lora_r);
        # no launch command is recorded in the repository
        (r"^axolotl_config\.yaml$", "config", "axolotl"),
        # the project's own generation config (dataset_generator.py: yaml_path = Path("config.yaml"))
        (r"^config\.yaml$", "other", "none"),
        (r"^[a-z_]+_evals/.*\.json$", "other", "none"),  # results
    ], {r"^[a-z_]+_evals/.*\.json$": 3}),
    # ---- XTuner ------------------------------------------------------------------------------------
    ("SocialAI-tianji/Tianji", [
        # XTuner configs (docs/finetune/tianji-wishes-chinese.md: xtuner train ./internlm2_chat_7b_qlora_oasst1_e3_copy.py
        # --deepspeed deepspeed_zero2; full fine-tune with deepspeed_zero3); qwen1_5_7b_chat_qlora_alpaca_e3.py is in the
        # form `xtuner copy-cfg`/the work_dirs dump writes (type names as strings)
        (r"^tianji/finetune/xtuner/.*\.py$", "config", "xtuner"),
        (r"^tianji/prompt/.*\.json$", "other", "none"),  # prompt collections
        (r"^tianji/agents/metagpt_agents/utils/scene_attribute\.json$", "other", "none"),
        (r"^\.pre-commit-config\.yaml$", "other", "none"),
    ], {}),
    # ---- PEFT adapters -----------------------------------------------------------------------------
    ("Dheena731/tinyLlama-finetune", [
        (r"^adapter_config\.json$", "config", "peft"),  # written by PEFT (LoraConfig.save_pretrained)
        # tokenizer files and the Trainer's checkpoint state
        (r"^(special_tokens_map|tokenizer_config|trainer_state)\.json$", "other", "none"),
    ], {}),
    ("GowthamNats/MicrosoftPhi1_5_finetuned-", [
        (r"^adapter_config\.json$", "config", "peft"),
        (r"^(config|generation_config)\.json$", "other", "none"),  # the model's config / generation config
    ], {}),
    # ---- must stay quiet -----------------------------------------------------------------------------
    ("kaustubh03/code-scout", [
        # adapters/adapter_config.json is MLX-LM's LoRA run record (mlx_lm.lora writes its args: adapter_path,
        # lora_layers, lora_parameters, iters), not PEFT's; the rest is a VS Code extension's JSON
        (r"^adapters/adapter_config\.json$", "other", "none"),
        (r"^(\.eslintrc|jsconfig|package)\.json$", "other", "none"),
        (r"^\.vscode/.*\.json$", "other", "none"),
    ], {}),
]

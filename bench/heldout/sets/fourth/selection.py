"""The fourth held-out set's SELECTION (read by build_manifest.py --set fourth).

Same form as build_manifest.SELECTION: (repo, [(path regex, kind, true_format)], sample limits).
Chosen on 2026-11-24, blind (before any trainlint run on these files), from public repositories
in none of the first set (bench/heldout/MANIFEST.tsv), the second (sets/second/MANIFEST.tsv), the
third (sets/third/MANIFEST.tsv) and the shared corpus (/work/shared/corpus/SOURCES.md), and named
nowhere in the checkout. Aimed at the frameworks the third set was thin on: Axolotl (seven
repositories), XTuner (three), Unsloth (four), PEFT adapter_config.json (three), plus accelerate
and DeepSpeed. No public Ludwig LLM config outside ludwig-ai's own repositories was found in the
time (as for the third set). The true format of each file is decided from the repository's own
code or instructions that read it (cited per rule).

LAUNCH = True: shell scripts, Makefiles and READMEs that run a launcher are added as kind
"launch" (build_manifest.LAUNCHERS); support files, nothing is expected on them.
"""

SEED = 16
LAUNCH = True

# paths left out of the automatic pins, argument classes and launch scripts
EXCLUDE = {
    # GradCache is a vendored library (its own setup.py)
    "ContextualAI/gritlm": r"^gritlm/training/GradCache/",
    # saved checkpoints: trainer state, optimizer, tokenizer files
    "YuvaneshSankar/reinforcement-tuninig-llms": r"^src/models/",
}

SELECTION = [
    # ---- Axolotl ------------------------------------------------------------------------------
    ("Warrongo/warrungu-trainer", [
        # run.sh: python3 -m axolotl.cli.preprocess / axolotl.cli.train on a patched copy of
        # /app/axolotl_config.yml (Dockerfile COPY . /app); run_training.py: `axolotl train axolotl_config.yml`
        (r"^axolotl_config\.yml$", "config", "axolotl"),
        # peft_config.yml: read by no code of the repository (run.sh, run_training.py read only the
        # axolotl config); its keys (alpha, dropout) are no PEFT LoraConfig fields
        (r"^peft_config\.yml$", "other", "none"),
        (r"^k8s-job\.yaml$", "other", "none"),  # Kubernetes Job
        (r"^warrungu_chat_dataset\.json$", "other", "none"),  # training data
    ], {}),
    ("yxzwayne/Medilora", [
        # Axolotl configs (base_model / datasets type sharegpt / adapter qlora); README: trained with axolotl
        (r"^train/.*\.yml$", "config", "axolotl"),
        (r"^eval/PubMedQA/test500\.json$", "other", "none"),
    ], {}),
    ("omkar-334/DEITA", [
        (r"^qlora\.yml$", "config", "axolotl"),  # axolotl QLoRA config (base_model, adapter: qlora, sample_packing)
    ], {}),
    ("TanametTpk/util-llm-script", [
        # Axolotl configs (SFT, LoRA, QLoRA, `rl: dpo`); merge_model.py / upload_model.py are helpers
        (r"^[^/]*\.ya?ml$", "config", "axolotl"),
    ], {}),
    ("yongjik-kim/mistral-finetune-stuff", [
        # Axolotl QLoRA configs for Mistral-7B (the notebook/script is a separate PEFT run)
        (r"^qlora[^/]*\.yml$", "config", "axolotl"),
    ], {}),
    ("bwl11/LLM_fine_tune", [
        # README: python -m axolotl.cli.merge_lora ../configs/qlora.yml (axolotl checked out beside it)
        (r"^configs/.*\.yml$", "config", "axolotl"),
    ], {}),
    ("wauwau0977/FineTuningTrial", [
        # axolotl/README.md: `axolotl train .../axolotl/config1b.yml`, `axolotl inference .../config3_lora.yml`
        (r"^axolotl/config[^/]*\.yml$", "config", "axolotl"),
    ], {}),
    # ---- XTuner -------------------------------------------------------------------------------
    ("SmartFlowAI/Llama3-Tutorial", [
        # docs/*.md: xtuner train configs/assistant/llama3_8b_instruct_qlora_assistant.py (--deepspeed deepspeed_zero2)
        (r"^configs/.*\.py$", "config", "xtuner"),
        (r"^data/self_cognition\.json$", "other", "none"),
    ], {}),
    ("PeterH0323/Streamer-Sales", [
        # README: xtuner train finetune_configs/internlm2_chat_7b/internlm2_chat_7b_qlora_custom_data.py
        (r"^finetune_configs/.*\.py$", "config", "xtuner"),
        # the application's own configs (LLM server, RAG, conversation), docker compose
        (r"^configs/.*\.yaml$", "other", "none"),
        (r"^compose\.yaml$", "other", "none"),
        (r"^server/base/modules/rag/test_queries\.json$", "other", "none"),
    ], {}),
    ("lyyilin/poem-soul", [
        # an XTuner config dumped by `xtuner copy-cfg` / the training run (flat dict form: model = dict(llm=...))
        (r"^internlm_chat_7b_qlora_oasst1_e3_copy\.py$", "config", "xtuner"),
    ], {}),
    # ---- Unsloth ------------------------------------------------------------------------------
    ("hewenyu/unsloth-fine", [
        # FastLanguageModel.from_pretrained / get_peft_model + TrainingArguments / SFTTrainer scripts
        (r"^train/train_model\.py$", "config", "unsloth"),
        (r"^data_create_duilian/train_couplets\.py$", "config", "unsloth"),
        (r"^qwen_distillation/train_distillation\.py$", "config", "unsloth"),
    ], {}),
    ("Sriramdayal/Unsloth-LLM-finetuningv1", [
        # src/core/factory.py: FastLanguageModel.from_pretrained(...) / get_peft_model; src/train.py: SFTTrainer
        # + TrainingArguments (scripts/run_training.py drives both)
        (r"^src/(core/factory|train)\.py$", "config", "unsloth"),
        (r"^docker-compose\.yml$", "other", "none"),
        (r"^\.github/workflows/.*\.yml$", "other", "none"),
    ], {}),
    ("ayato-labs/unsloth_finetraining", [
        # python -m src.training: model.py loads with FastLanguageModel, trainer.py builds SFTConfig/SFTTrainer
        (r"^src/training/(model|trainer)\.py$", "config", "unsloth"),
    ], {}),
    ("YuvaneshSankar/reinforcement-tuninig-llms", [
        (r"^src/(train_sft_unsloth|ppo)\.py$", "config", "unsloth"),
        # adapter_config.json written by PEFT (Unsloth's get_peft_model) into each saved checkpoint
        (r"^src/models/.*/adapter_config\.json$", "config", "peft"),
        (r"^src/models/.*/trainer_state\.json$", "other", "none"),  # Trainer's saved state
        (r"^src/models/.*/tokenizer_config\.json$", "other", "none"),
    ], {r"^src/models/.*/adapter_config\.json$": 5, r"^src/models/.*/trainer_state\.json$": 3,
        r"^src/models/.*/tokenizer_config\.json$": 2}),
    # ---- PEFT adapters ------------------------------------------------------------------------
    ("EllaHxyz/LLama2_Finetuning", [
        (r"^adapter_config\.json$", "config", "peft"),  # a saved LoRA adapter of the notebook's run
    ], {}),
    ("Iamjuhwan/HY-MT1.5-yoruba-pidgin-lora", [
        (r"^adapter_config\.json$", "config", "peft"),  # a published LoRA adapter
        (r"^(tokenizer_config|special_tokens_map)\.json$", "other", "none"),
    ], {}),
    # ---- accelerate / DeepSpeed ---------------------------------------------------------------
    ("ContextualAI/gritlm", [
        # scripts/training/train_gritlm_*.sh: accelerate launch --config_file .../scripts/configs/config_8gpusfsdp_m7.yml
        # -m training.run (gritlm/training/arguments.py: HfArgumentParser from the command line)
        (r"^scripts/configs/.*\.yml$", "config", "accelerate"),
        # dataset-preparation configs (scripts/prepare_datasets) and prompt examples: data, not configs
        (r"^scripts/prepare_datasets/configs/.*\.json$", "other", "none"),
        (r"^scripts/prompt_examples/.*\.json$", "other", "none"),
    ], {r"^scripts/prepare_datasets/configs/.*\.json$": 6, r"^scripts/prompt_examples/.*\.json$": 4}),
    ("TinyLLaVA/TinyLLaVA_Factory", [
        # scripts/train/*.sh: deepspeed tinyllava/train/train.py --deepspeed ./scripts/zero3.json
        (r"^scripts/zero\d\.json$", "config", "deepspeed"),
    ], {}),
    # ---- non-config YAML with training-looking keys (must stay quiet) -------------------------
    ("e-p-armstrong/augmentoolkit", [
        # Augmentoolkit's own pipeline configs (read by its run_augmentoolkit / pipeline code; the
        # GRPO ones hold gradient_accumulation_steps etc. for its own grpo.py), prompt YAMLs
        (r"^external_configs/.*\.yaml$", "other", "none"),
        (r"^generation/core_pipelines/do_grpo_rl_with_a_prompt/[^/]*\.yaml$", "other", "none"),
        (r"^generation/core_pipelines/[^/]+/config\.yaml$", "other", "none"),
    ], {r"^external_configs/.*\.yaml$": 8, r"^generation/core_pipelines/[^/]+/config\.yaml$": 6}),
]

"""The fifth held-out set's SELECTION (read by build_manifest.py --set fifth).

Same form as build_manifest.SELECTION: (repo, [(path regex, kind, true_format)], sample limits).
Chosen on 2026-11-24, blind (before any trainlint run on these files), from public repositories
in none of the first four sets' MANIFEST.tsv, not in /work/shared/corpus/SOURCES.md, named nowhere
in the checkout (git grep), and not among the mirrors other sessions had fetched. Aimed at what the
earlier sets were thin on and at the rules added most recently: TRL/HF argument YAMLs read by
TrlParser / H4ArgumentParser / HfArgumentParser (seven repositories, GRPO, DPO and SFT recipes,
one composed by Hydra), accelerate YAMLs with DeepSpeed and FSDP (QLoRA under FSDP among them),
LLaMA-Factory YAMLs (train, export and chat configs), DeepSpeed JSONs, Axolotl YAMLs, Unsloth
scripts (GRPO with fast_inference among them) and PEFT adapter_config.json written by PEFT
0.18, plus JSON/YAML that must stay quiet. No public Ludwig LLM config outside ludwig-ai's own
repositories was found (as for the third and fourth sets). The true format of each file is
decided from the repository's own code or instructions that read it (cited per rule).

LAUNCH = True: shell scripts, Makefiles and READMEs that run a launcher are added as kind
"launch" (build_manifest.LAUNCHERS); support files, nothing is expected on them.
"""

SEED = 17
LAUNCH = True

# paths left out of the automatic pins, argument classes and launch scripts
EXCLUDE = {
    # Pre-DPO is a fork of LLaMA-Factory: src/ is LLaMA-Factory's own code (hparams parsers, ...)
    "DtYXs/Pre-DPO": r"^src/",
    # the web UI's backend/frontend are no training code
    "SmallDoges/small-doge": r"^src/small_doge/webui/",
}

SELECTION = [
    # ---- TRL / HF argument YAMLs + accelerate ---------------------------------------------------
    ("SmallDoges/small-doge", [
        # docs/training.md: accelerate launch --config_file recipes/accelerate_configs/single_gpu.yaml
        # ./src/small_doge/trainer/{pt,sft,dpo}.py --config recipes/doge/<model>/{sft,dpo}/config_full.yaml;
        # the trainers read it with TrlParser((ScriptArguments, PTConfig|SFTConfig|DPOConfig, ModelConfig))
        # (small_doge/utils/training_args_configs.py defines PTConfig/SFTConfig)
        (r"^recipes/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        (r"^recipes/doge/.*\.yaml$", "config", "hf"),
        # projects/litecot/scripts/run_*.sh: accelerate launch --config_file .../zero3.yaml sft.py --config
        # .../config*.yaml; litecot/sft.py: TrlParser((ScriptArguments, SFTConfig, ModelConfig))
        (r"^projects/litecot/zero3(_offload)?\.yaml$", "config", "accelerate"),
        (r"^projects/litecot/config/.*\.yaml$", "config", "hf"),
        (r"^src/small_doge/webui/frontend/assets/manifest\.json$", "other", "none"),  # web app manifest
    ], {r"^recipes/doge/.*\.yaml$": 12}),
    ("FSoft-AI4Code/XMainframe", [
        # scripts/ft.sh: accelerate launch --config_file recipes/accelerate_configs/fsdp_qlora.yaml train_raw.py
        # recipes/deepseek/lora_sft.yaml; train_raw.py / train_instruct.py: H4ArgumentParser((ModelArguments,
        # DataArguments, SFTConfig)) from the vendored src/alignment/configs.py
        (r"^recipes/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        (r"^recipes/deepseek/.*\.yaml$", "config", "hf"),
    ], {}),
    ("taishan1994/DPO-Finetuning", [
        # train.sh: accelerate launch --config_file accelerate_config/default_config.yaml finetune_dpo.py
        # train_config/qwen2_dpo_config.yaml; finetune_dpo.py: H4ArgumentParser((ModelArguments, DataArguments,
        # DPOConfig)) (arguments.py, adapted from alignment-handbook)
        (r"^accelerate_config/default_config\.yaml$", "config", "accelerate"),
        (r"^train_config/.*\.yaml$", "config", "hf"),
    ], {}),
    ("Ice-Moon-28/Mini-R1", [
        # start.sh: accelerate launch --num_processes 3 --config_file deepspeed_zero3.yaml main.py --config
        # grpo-qwen-2.5-3b-deepseek-r1-countdown.yaml; train/pipeline.py: TrlParser((ModelConfig,
        # ScriptArguments, GRPOConfig)); pyproject.toml pins trl 0.15.0, deepspeed 0.15.4, accelerate 1.3.0
        (r"^deepspeed_zero3\.yaml$", "config", "accelerate"),
        (r"^grpo-qwen-2\.5-3b-deepseek-r1-countdown\.yaml$", "config", "hf"),
        (r"^dataset/test\.json$", "other", "none"),  # data
    ], {}),
    ("yyDing1/ScaleQuest", [
        # scripts/run_qwen2_qft.sh: accelerate launch --config_file ./zero3.yaml train.py --model_path ...
        # (the training arguments come from the command line)
        (r"^src/train_question_generator/scripts/zero3\.yaml$", "config", "accelerate"),
    ], {}),
    ("MAOJIASONG/TinyZero-TRL", [
        # scripts/*.sh: accelerate launch --config_file recipes/accelerate_configs/zero{1,2}.yaml
        # src/tinyzero_trl/grpo.py +countdown=<recipe>
        (r"^recipes/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        # grpo.py: @hydra.main(config_path="../../recipes", config_name="hydra_default"), then
        # HfArgumentParser((ScriptArguments, GRPOTrainingArguments, ALLModelConfig)).parse_dict(cfg,
        # allow_extra_keys=True): the recipes are argument files (composed by Hydra, `# @package _global_`)
        (r"^recipes/(countdown|math|vlm)/.*\.yaml$", "config", "hf"),
        (r"^recipes/hydra_default\.yaml$", "other", "none"),  # Hydra's defaults list
        (r"^\.vscode/launch\.json$", "other", "none"),
        # an Unsloth GRPO script (FastLanguageModel.from_pretrained, PatchFastRL)
        (r"^examples/unsloth_3B_thinking_trainer\.py$", "config", "unsloth"),
    ], {}),
    ("dissman2020/PsychFT", [
        # scripts/run_sft.sh: accelerate launch --config_file recipes/accelerate_configs/zero3.yaml src/sft.py
        # --config recipes/Qwen2.5-1.5B-Instruct/sft/config_demo.yaml; src/sft.py: TrlParser((ScriptArguments,
        # SFTConfig, ModelConfig))
        (r"^recipes/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        (r"^recipes/.*/sft/.*\.yaml$", "config", "hf"),
        # src/test.py: json.load of its own test parameters (model_name_or_path, max_seq_length, ...)
        (r"^params/test_params\.json$", "other", "none"),
    ], {}),
    # ---- LLaMA-Factory ---------------------------------------------------------------------------
    ("AnHuanAo/qwythos-9b-math-sft", [
        # the file's own header: llamafactory-cli train /root/autodl-tmp/data/llamafactory_train.yaml
        (r"^autodl/llamafactory_train\.yaml$", "config", "llamafactory"),
        (r"^autodl/dataset_info(_alpaca)?\.json$", "other", "none"),  # LLaMA-Factory dataset registry
        (r"^v1_sft_stats\.json$", "other", "none"),
        # written by PEFT 0.18.1 (peft_version field) for the trained adapter
        (r"^adapter_config\.json$", "config", "peft"),
        # FastLanguageModel.from_pretrained(load_in_4bit=True) + SFTTrainer
        (r"^autodl/train_unsloth\.py$", "config", "unsloth"),
    ], {}),
    ("BeautyyuYanli/DeepSink", [
        # LLaMA-Factory configs (the repository pins LLaMA-Factory as a git submodule, pyproject dev dependency
        # -e LLaMA-Factory): lora_sft.yaml for `llamafactory-cli train`, lora_merge.yaml (export_dir) for
        # `llamafactory-cli export`, lora_infer.yaml (adapter_name_or_path, infer_backend) for `chat`
        (r"^lora_(sft|merge|infer)\.yaml$", "config", "llamafactory"),
    ], {}),
    ("DtYXs/Pre-DPO", [
        # scripts/train_*.sh: llamafactory-cli train --deepspeed scripts/deepspeed_config/ds_z2_config.json ...
        (r"^scripts/deepspeed_config/.*\.json$", "config", "deepspeed"),
        (r"^data/dataset_info\.json$", "other", "none"),
    ], {}),
    # ---- DeepSpeed -------------------------------------------------------------------------------
    ("HuangXinzhe/llm_fine_tuning", [
        # deepspeed/train_on_one_gpu.sh: deepspeed ... --deepspeed config/ds_config_zero{2,3}.json;
        # fine_tune/Atom/atom_fine_tune/finetune.sh: deepspeed finetune_clm.py --deepspeed ds_config_zero2.json
        # (HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments)))
        (r"^deepspeed/config/.*\.json$", "config", "deepspeed"),
        (r"^fine_tune/Atom/atom_fine_tune/ds_config_zero2\.json$", "config", "deepspeed"),
    ], {}),
    # ---- Axolotl ---------------------------------------------------------------------------------
    ("Emm9625/sum", [
        # Axolotl configs (base_model / datasets / adapter; axolotl.yaml is Axolotl's own annotated
        # full reference config as its README shipped it)
        (r"^(0223|OH-2\.5-Mistral-7B|TL|mistral-7b)/.*\.ya?ml$", "config", "axolotl"),
        (r"^axolotl\.yaml$", "config", "axolotl"),
    ], {}),
    ("MetinovAdik/mistral-config", [(r"^qlora\.yml$", "config", "axolotl")], {}),  # Axolotl QLoRA config
    ("chats-bug/jsr-config", [
        (r"^qlora\.yml$", "config", "axolotl"),
        # a DeepSpeed ZeRO-2 config with HF-integration "auto" values (Trainer / axolotl --deepspeed)
        (r"^deep_config\.json$", "config", "deepspeed"),
    ], {}),
    ("bobyres/Config_qlora", [(r"^qlora\.yml$", "config", "axolotl")], {}),  # Axolotl QLoRA config
    # ---- Unsloth scripts -------------------------------------------------------------------------
    ("levavakian/conf-rl", [
        # main.py: FastLanguageModel.from_pretrained(load_in_4bit, fast_inference False, max_lora_rank) +
        # GRPOConfig/GRPOTrainer; uv.lock pins the versions
        (r"^main\.py$", "config", "unsloth"),
    ], {}),
    ("cpecf/finetune-reasoning", [
        (r"^train\.py$", "config", "unsloth"),  # PatchFastRL("GRPO") + fast_inference=True + GRPOConfig(use_vllm)
    ], {}),
    ("zichenzhang04/r1-dynamic-penalty", [
        (r"^train\.py$", "config", "unsloth"),  # PatchFastRL + GRPOTrainer
    ], {}),
    ("Sayyam-Karnavat/algorand_assistant_vscode", [
        # Fine_tune/*.py importing unsloth (FastLanguageModel.from_pretrained + SFTTrainer)
        (r"^Fine_tune/(ollama_finetuning|qwen13b_mode_training)\.py$", "config", "unsloth"),
        (r"^Fine_tune/dataset/qa_pairs\.json$", "other", "none"),
        (r"^algorand-assistant/(package|jsconfig)\.json$", "other", "none"),
        (r"^algorand-assistant/\.vscode/launch\.json$", "other", "none"),
    ], {}),
    # ---- PEFT adapters ---------------------------------------------------------------------------
    ("AshChadha-iitg/OpenMath", [
        (r"^adapter_config\.json$", "config", "peft"),  # a published LoRA adapter (inference.py loads it)
    ], {}),
    # ---- non-config JSON that must stay quiet ----------------------------------------------------
    ("liv-daliberti/maxent-grpo", [
        (r"^paper/results/.*\.json$", "other", "none"),  # regression results written by ops/ scripts
    ], {r"^paper/results/.*\.json$": 6}),
]

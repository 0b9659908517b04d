"""The third held-out set's SELECTION (read by build_manifest.py --set third).

Same form as build_manifest.SELECTION: (repo, [(path regex, kind, true_format)], sample limits).
Chosen on 2026-11-24, blind (before any trainlint run on these files), from public repositories
in none of the first set (bench/heldout/MANIFEST.tsv), the second set (sets/second/MANIFEST.tsv)
and the shared corpus (/work/shared/corpus/SOURCES.md). The true format of each file is decided
from the repository's own code or instructions that read it (cited per rule). Vendored copies of
a framework (LLaMA-Factory in STaR-Judge and SkyThought, verl in SkyThought, EasyR1 in
LLaVA-NeXT, lm-evaluation-harness in s1) are left out but for the repository's own files.

LAUNCH = True: the shell/Slurm scripts, Makefiles and READMEs that run a launcher are added as
kind "launch" (build_manifest.LAUNCHERS), for the coming check that reads launch commands; they
are support files, and nothing is expected on them today.
"""

SEED = 15
LAUNCH = True

# paths left out of the automatic pins, argument classes and launch scripts (vendored code)
EXCLUDE = {
    "simplescaling/s1": r"^eval/lm-evaluation-harness/",
    "Joe-Hall-Lee/STaR-Judge": r"^train/LLaMA-Factory/",
    "NovaSky-AI/SkyThought": r"^skythought/(train/LLaMA-Factory|skythought-rl|evals)/",
    "LLaVA-VL/LLaVA-NeXT": r"^llava-critic-r1/EasyR1/",
    "nomic-ai/gpt4all": r"^gpt4all-(chat|backend|bindings)/",
    "dstackai/dstack": r"^(src|runner|frontend|docs|scripts|gateway)/",
}

SELECTION = [
    # ---- Axolotl ------------------------------------------------------------------------
    ("RLHFlow/RLHF-Reward-Modeling", [
        # math-rm/README.md, pair-pm/README.md: git clone axolotl; torchrun --nproc_per_node 8 -m axolotl.cli.train
        # llama-3.1-prm.yaml --deepspeed ../deepspeed_configs/deepspeed_3.json
        (r"^(math-rm|pair-pm)/[^/]*\.yaml$", "config", "axolotl"),
        # bradley-terry-rm/*.py: TrainingArguments(deepspeed=script_args.deepspeed); READMEs pass these
        (r"^deepspeed_configs/.*\.json$", "config", "deepspeed"),
    ], {}),
    ("RLHFlow/Online-RLHF", [
        # README: torchrun --nproc_per_node 8 -m axolotl.cli.train llama3-8b-it.yaml [--deepspeed ../configs/deepspeed_stage3.json]
        (r"^sft/llama3-8b-it\.yaml$", "config", "axolotl"),
        (r"^configs/deepspeed_stage\d\.json$", "config", "deepspeed"),
        # README: accelerate launch --config_file ./configs/zero2.yaml dpo_iteration/run_dpo.py ./configs/training.yaml
        (r"^configs/zero\d\.yaml$", "config", "accelerate"),
        # dpo_iteration/run_dpo.py: H4ArgumentParser((ScriptArguments, DPOConfig, ModelConfig)).parse()
        (r"^configs/training\.yaml$", "config", "hf"),
    ], {}),
    # ---- TRL / alignment-handbook recipes + accelerate ----------------------------------------
    ("uclaml/SPPO", [
        # scripts/pipeline.sh: accelerate launch --config_file recipes/accelerate_configs/deepspeed_zero3.yaml
        # sppo/run_sppo.py <config_full.yaml>; run_sppo.py: H4ArgumentParser((ModelArguments, DataArguments, SPPOConfig))
        (r"^recipes/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        (r"^recipes/uclaml-sppo/config_full\.yaml$", "config", "hf"),
        # the alignment-handbook recipes the repository keeps (sppo/run_sft.py reads the sft ones)
        (r"^recipes/.*/(sft|dpo)/.*\.yaml$", "config", "hf"),
        # AlpacaEval model config (alpaca_eval's models_configs format)
        (r"^models_configs/.*\.yaml$", "other", "none"),
        (r"^\.pre-commit-config\.yaml$", "other", "none"),
    ], {}),
    ("argilla-io/notus", [
        # v1/fine-tune/README.md: accelerate launch --config_file configs/accelerate/a100_40gb/deepspeed_zero3.yaml
        # run_dpo.py configs/dpo/full/a100_40gb.yaml (run_dpo.py adapted from alignment-handbook: H4ArgumentParser)
        (r"^v1/fine-tune/configs/accelerate/.*\.yaml$", "config", "accelerate"),
        (r"^v1/fine-tune/configs/(dpo|sft)/.*\.yaml$", "config", "hf"),
        (r"^v1/eval/.*\.json$", "other", "none"),  # evaluation results
        (r"^v1/alt/habana/devcontainer\.json$", "other", "none"),
    ], {}),
    ("simplescaling/s1", [
        # train/sft.sh: torchrun train/sft.py --fsdp "full_shard auto_wrap" --fsdp_config train/fsdp_config_qwen.json;
        # sft.py: HfArgumentParser((TrainingConfig, trl.SFTConfig)) from the command line. The JSON is
        # TrainingArguments' fsdp_config (json.load in training_args.py __post_init__), not a config trainlint reads
        (r"^train/fsdp_config_qwen.*\.json$", "other", "none"),
        # lm-evaluation-harness task YAMLs (vendored under eval/): must stay quiet
        (r"^eval/lm-evaluation-harness/lm_eval/tasks/.*\.yaml$", "other", "none"),
    ], {r"^eval/lm-evaluation-harness/lm_eval/tasks/.*\.yaml$": 12}),
    ("CarperAI/trlx", [
        # scripts/accelerate_train_example.sh, slurm_train.sh: accelerate launch --config_file <configs/accelerate/...>
        (r"^configs/accelerate/.*\.yaml$", "config", "accelerate"),
        (r"^examples/summarize_rlhf/configs/default_accelerate_config\.yaml$", "config", "accelerate"),
        # examples/summarize_rlhf: deepspeed train_gptj_summarize.py (TrainingArguments(deepspeed=...)),
        # and the accelerate config above names configs/ds_config_trlx_gptj_summarize.json
        (r"^examples/summarize_rlhf/.*ds_config.*\.json$", "config", "deepspeed"),
        # trlx's own TRLConfig YAMLs (trlx/data/configs.py TRLConfig.load_yaml), NeMo Megatron configs, ray sweeps
        (r"^configs/(test_config|sweeps/.*|nemo_configs/.*)\.ya?ml$", "other", "none"),
        (r"^examples/.*/(trlx_ppo_config\.yml|megatron_llama_cfg\.yaml)$", "other", "none"),
        (r"^(\.pre-commit-config\.yaml|\.readthedocs\.yml|\.devcontainer/devcontainer\.json)$", "other", "none"),
    ], {}),
    ("ContextualAI/HALOs", [
        # scripts/launch_*.sh: accelerate launch --config_file accelerate_config/fsdp_4gpu.yaml launch.py loss=...
        (r"^accelerate_config/.*\.yaml$", "config", "accelerate"),
        # launch.py: @hydra.main(config_path="config", config_name="config"): the project's own Hydra configs
        (r"^config/.*\.yaml$", "other", "none"),
        (r"^alpaca_eval_.*\.yaml$", "other", "none"),
    ], {}),
    ("jzhang38/EasyContext", [
        # train_scripts/*.sh: accelerate launch --config_file accelerate_configs/single_node.yaml train.py ...
        (r"^accelerate_configs/.*\.yaml$", "config", "accelerate"),
        # named by the accelerate configs' deepspeed_config_file
        (r"^accelerate_configs/.*\.json$", "config", "deepspeed"),
    ], {}),
    ("OpenLMLab/MOSS", [
        # README.md: accelerate launch --config_file ./configs/sft.yaml finetune_moss.py ...
        (r"^configs/sft\.yaml$", "config", "accelerate"),
        (r"^SFT_data/conversations/.*\.json$", "other", "none"),  # training conversations
    ], {r"^SFT_data/conversations/.*\.json$": 6}),
    # ---- DeepSpeed ----------------------------------------------------------------------------
    ("2U1/Qwen2-VL-Finetune", [
        # scripts/finetune*.sh: deepspeed src/train/train_sft.py --deepspeed scripts/zero3_offload.json
        # (src/params.py TrainingArguments subclass read by HfArgumentParser from the command line)
        (r"^scripts/zero.*\.json$", "config", "deepspeed"),
    ], {}),
    ("nlpxucan/WizardLM", [
        # WizardLM/README.md, WizardCoder/README.md: deepspeed train_*.py ... --deepspeed configs/deepspeed_config.json
        (r"^(WizardMath/config|training/src/configs)/deepspeed_config\.json$", "config", "deepspeed"),
        (r"^WizardCoder/data/mbppplus\.json$", "other", "none"),
    ], {}),
    ("LLaVA-VL/LLaVA-NeXT", [
        # scripts/train/*.sh: deepspeed llava/train/train_mem.py --deepspeed scripts/zero3.json
        (r"^scripts/zero.*\.json$", "config", "deepspeed"),
        # data mixture YAMLs read by llava/train/train.py (data_path *.yaml), Replicate cog, EVA-CLIP model configs,
        # EasyR1 (vendored verl-style) experiment config
        (r"^scripts/(train|video/train)/.*\.yaml$", "other", "none"),
        (r"^cog\.yaml$", "other", "none"),
        (r"^llava/model/multimodal_encoder/eva_clip/model_configs/.*\.json$", "other", "none"),
        (r"^llava-critic-r1/EasyR1/examples/.*\.yaml$", "other", "none"),
    ], {r"^llava/model/multimodal_encoder/eva_clip/model_configs/.*\.json$": 5}),
    ("nomic-ai/gpt4all", [
        # gpt4all-training/README.md: accelerate launch ... --use_deepspeed --deepspeed_config_file=configs/deepspeed/
        # ds_config_gptj.json train.py --config configs/train/finetune_gptj.yaml
        (r"^gpt4all-training/configs/deepspeed/.*\.json$", "config", "deepspeed"),
        # train.py / generate.py / inference.py: read_config(yaml) into the project's own dict
        (r"^gpt4all-training/configs/(train|eval|generate|inference)/.*\.yaml$", "other", "none"),
        (r"^gpt4all-training/env\.yaml$", "other", "none"),  # conda environment
        (r"^\.circleci/config\.yml$", "other", "none"),
    ], {}),
    # ---- LLaMA-Factory ------------------------------------------------------------------------
    ("Joe-Hall-Lee/STaR-Judge", [
        # scripts/train_sft.sh, train_dpo.sh: accelerate launch --config_file <fsdp_config.yaml>
        # train/LLaMA-Factory/src/train.py configs/<x>_full_{sft,dpo}.yaml (a vendored LLaMA-Factory)
        (r"^configs/train/.*\.yaml$", "config", "llamafactory"),
        (r"^accelerate/fsdp_config\.yaml$", "config", "accelerate"),
        (r"^configs/eval/.*\.yaml$", "other", "none"),  # the project's own judge evaluation configs
        (r"^data/dataset_info\.json$", "other", "none"),  # LLaMA-Factory's dataset registry
    ], {}),
    ("open-thoughts/open-thoughts", [
        # README: "training code: hiyouga/LLaMA-Factory"; train/OpenThinker-*.yaml are llamafactory-cli train configs
        (r"^train/.*\.yaml$", "config", "llamafactory"),
        (r"^\.pre-commit-config\.yaml$", "other", "none"),
    ], {}),
    ("NovaSky-AI/SkyThought", [
        # SkyThought's own configs in its vendored LLaMA-Factory (added in 0751518 / 6158bb3), run with
        # llamafactory-cli train from skythought/train/LLaMA-Factory; the DeepSpeed config they link
        (r"^skythought/train/LLaMA-Factory/examples/train_full/qwen2_full_(sft|simpo)\.yaml$", "config", "llamafactory"),
        (r"^skythought/train/LLaMA-Factory/examples/deepspeed/ds_z3_offload_config\.json$", "config", "deepspeed"),
        # verl (the vendored skythought-rl) trainer configs: Hydra, read by verl's main_ppo
        (r"^skythought/skythought-rl/(verl/trainer/config|examples/split_placement/config)/.*\.yaml$", "other", "none"),
        (r"^(\.pre-commit-config\.yaml|\.github/workflows/cpu_ci\.yml)$", "other", "none"),
    ], {}),
    # ---- XTuner -------------------------------------------------------------------------------
    ("AXYZdong/AMchat", [
        # README: xtuner train /root/math/config/internlm2_chat_7b_qlora_oasst1_e3_copy.py
        (r"^config/.*\.py$", "config", "xtuner"),
        (r"^dataset/AMchat_dataset\.json$", "other", "none"),
    ], {}),
    # ---- Unsloth ------------------------------------------------------------------------------
    ("aureliainnovatives/unsloth-qlora-multi-gpu-demo", [
        # FastLanguageModel.from_pretrained(...) scripts, run with python / accelerate launch (complete_training_pipeline.sh)
        (r"^v1/(train_single_gpu|train_multi_gpu_unsloth)\.py$", "config", "unsloth"),
        (r"^v1/failed-attempt/(train|train_simple_unsloth|train_unsloth_native)\.py$", "config", "unsloth"),
        # v1/failed-attempt/setup_accelerate.sh writes it; demo_commands.sh: accelerate launch --config_file accelerate_config.yaml
        (r"^v1/failed-attempt/accelerate_config\.yaml$", "config", "accelerate"),
        (r"^v1/\.claude/settings\.local\.json$", "other", "none"),
    ], {}),
    ("SzJS/unsloth-qwen4b", [
        # scripts/train_sft.py -> src/training/sft.py: FastLanguageModel.from_pretrained, get_peft_model, SFTTrainer
        (r"^src/training/(sft|model)\.py$", "config", "unsloth"),
        (r"^data/tasks/.*\.yaml$", "other", "none"),  # the project's own task definitions
    ], {}),
    ("Alvarez-Jose/unsloth-grpo-project", [
        (r"^src/training/train/train\.py$", "config", "unsloth"),  # import unsloth; GRPOConfig(...)
        (r"^src/training/configs/agent_config\.yaml$", "other", "none"),  # the project's own agent config
    ], {}),
    # ---- non-config JSON/YAML only (must stay quiet) ------------------------------------------
    ("predibase/lora_bakeoff", [
        (r"^tasks/.*/metadata\.yaml$", "other", "none"),  # task metadata for Predibase fine-tuning runs
    ], {r"^tasks/.*/metadata\.yaml$": 10}),
    ("dstackai/dstack", [
        # examples/single-node-training/optimum-tpu/llama31/train.py parse_config: yaml.safe_load, then
        # HfArgumentParser(ScriptArguments).parse_dict (the project's own dataclass): an "hf" argument file.
        # (First classified "other"; corrected from train.py after the first run showed the hf adapter claiming it.)
        (r"^examples/single-node-training/optimum-tpu/llama31/config\.yaml$", "config", "hf"),
        # dstack run configurations (tasks/services/fleets; `commands:` may hold accelerate launch / torchrun)
        (r"^examples/.*\.ya?ml$", "other", "none"),
    ], {}),
]

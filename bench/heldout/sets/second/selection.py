"""The second held-out set's SELECTION (read by build_manifest.py --set second).

Same form as build_manifest.SELECTION: (repo, [(path regex, kind, true_format)], sample limits).
Chosen on 2026-11-24 from public repositories in neither the first set (bench/heldout/MANIFEST.tsv)
nor the shared corpus (/work/shared/corpus/SOURCES.md); the true format of each file is decided
from the repository's own code or instructions that read it (cited per rule). Vendored copies
of a framework's own examples (LIMO's train/ is LLaMA-Factory 0.9.2.dev0) are left out, but for
the repository's own config.
"""

SEED = 15

SELECTION = [
    ("philschmid/deep-learning-pytorch-huggingface", [
        # training/scripts/run_sft.py, dpo/run_dpo.py, run_r1_grpo.py: TrlParser((ModelConfig,
        # ScriptArguments, SFTConfig|DPOConfig|GRPOConfig)).parse_args_and_config() on --config <recipe>
        (r"^training/receipes/.*\.yaml$", "config", "hf"),
        # training/launch.slurm, scripts/example.slurm: accelerate launch --config_file configs/accelerate_configs/...
        (r"^training/configs/accelerate_configs/.*\.yaml$", "config", "accelerate"),
        # the notebooks pass them as TrainingArguments(deepspeed=...) / deepspeed --deepspeed
        (r"^training/configs/ds_.*\.json$", "config", "deepspeed"),
        # run_sft.py setup_model_for_spectrum: read line by line as a list of unfrozen parameter names
        (r"^training/configs/spectrum/.*\.yaml$", "other", "none"),
    ], {}),
    ("OpenBMB/MiniCPM", [
        # finetune/sft_finetune.sh, lora_finetune.sh: deepspeed finetune.py --deepspeed configs/ds_config_*.json
        (r"^finetune/configs/ds_config_.*\.json$", "config", "deepspeed"),
        (r"^minicpm_sala/finetune/trainer/configs/deepspeed/.*\.json$", "config", "deepspeed"),
        # minicpm_sala/finetune/README-cn.md: accelerate launch --config_file configs/accelerate/fsdp_config.yaml
        (r"^minicpm_sala/finetune/trainer/configs/accelerate/.*\.yaml$", "config", "accelerate"),
        # finetune/llama_factory_example/README.md: llamafactory-cli train <these>
        (r"^finetune/llama_factory_example/.*\.yaml$", "config", "llamafactory"),
        (r"^minicpm_sala/finetune/llama_factory/configs/.*\.yaml$", "config", "llamafactory"),
        (r"^(finetune|minicpm_sala/finetune)/llama_factory(_example)?/llama_factory_data/.*\.json$", "other", "none"),
        (r"^demo/minicpm4/MCP/available_tool_example\.json$", "other", "none"),
        (r"^demo/minicpm4/SurveyGeneration/frontend/minicpm4-survey/package\.json$", "other", "none"),
    ], {}),
    ("OpenBMB/MiniCPM-V", [
        # finetune/finetune_ds.sh / finetune_lora.sh: torchrun finetune.py --deepspeed ds_config_zero[23].json
        (r"^finetune/ds_config_zero[23]\.json$", "config", "deepspeed"),
        (r"^web_demos/minicpm-o_2\.6/web_server/.*\.json$", "other", "none"),
        (r"^web_demos/minicpm-o_2\.6/web_server/pnpm-lock\.yaml$", "other", "none"),
    ], {}),
    ("huggingface/smollm", [
        # vision/smolvlm2/scripts/train/*.sh: torchrun smolvlm/train/train.py --deepspeed scripts/zero2.json
        (r"^vision/smolvlm2/scripts/zero.*\.json$", "config", "deepspeed"),
        # vloom accelerate configs name these as deepspeed_config_file
        (r"^vision/experiments/pretraining/vloom/slurm_scripts_templates/(with_launcher/)?ds_config.*\.json$",
         "config", "deepspeed"),
        (r"^vision/experiments/pretraining/vloom/.*accelerate_config.*\.yaml$", "config", "accelerate"),
        # nanotron configs (text/pretraining), m4's own training configs (vloom config.yaml), data mixtures
        (r"^text/pretraining/.*\.yaml$", "other", "none"),
        (r"^vision/experiments/pretraining/vloom/.*config\.yaml$", "other", "none"),
        (r"^vision/smolvlm2/scripts/mixtures/.*\.yaml$", "other", "none"),
        (r"^vision/m4/sourcing/data_collection/configs/.*\.yaml$", "other", "none"),
    ], {}),
    ("ymcui/Chinese-LLaMA-Alpaca", [
        # scripts/training/run_pt.sh, run_sft.sh: torchrun run_clm_*.py --deepspeed ds_zero2_no_offload.json
        (r"^scripts/training/ds_zero2_no_offload\.json$", "config", "deepspeed"),
        (r"^scripts/ceval/subject_mapping\.json$", "other", "none"),
    ], {}),
    ("princeton-nlp/SimPO", [
        # README: accelerate launch --config_file accelerate_configs/deepspeed_zero3.yaml scripts/run_simpo.py
        # training_configs/<x>.yaml; run_simpo.py: H4ArgumentParser((ModelArguments, DataArguments, SimPOConfig))
        (r"^training_configs/.*\.yaml$", "config", "hf"),
        (r"^accelerate_configs/.*\.yaml$", "config", "accelerate"),
        (r"^eval/.*\.yaml$", "other", "none"),  # AlpacaEval / Arena-Hard configs
        (r"^chat_templates\.json$", "other", "none"),
    ], {}),
    ("uclaml/SPIN", [
        # scripts/finetune.sh: accelerate launch --config_file configs/deepspeed_zero3.yaml spin/run_spin.py
        # configs/config.yaml; run_spin.py: H4ArgumentParser((ModelArguments, DataArguments, SPINConfig))
        (r"^configs/(tulu-70B/)?config(_iter\d)?\.yaml$", "config", "hf"),
        (r"^configs/(tulu-70B/)?(deepspeed_zero3|multi_gpu)\.yaml$", "config", "accelerate"),
    ], {}),
    ("parlance-labs/ftcourse", [
        # 04_prep_data.ipynb: python -m axolotl.cli.preprocess hc.yml (then axolotl.cli.train)
        (r"^hc\.yml$", "config", "axolotl"),
        (r"^replicate-examples/.*/cog\.yaml$", "other", "none"),  # Replicate cog
    ], {}),
    ("GAIR-NLP/LIMO", [
        # README: llamafactory-cli train examples/train_limo.yaml, in the vendored LLaMA-Factory 0.9.2.dev0
        (r"^train/examples/train_limo\.yaml$", "config", "llamafactory"),
        # the DeepSpeed configs train_limo.yaml links (deepspeed: examples/deepspeed/ds_z3_config.json, read
        # from train/); taken so the link resolves as it does in the repository
        (r"^train/examples/deepspeed/.*\.json$", "config", "deepspeed"),
        (r"^train/data/dataset_info\.json$", "other", "none"),  # LLaMA-Factory's dataset registry, not a config
        (r"^train/evaluation/.*/mapping\.json$", "other", "none"),
        (r"^train/docker/.*/docker-compose\.yml$", "other", "none"),
    ], {}),
    ("InternLM/Tutorial", [
        # docs/L1/XTuner: xtuner train configs/<x>_copy.py
        (r"^configs/internlm2_.*_copy\.py$", "config", "xtuner"),
        (r"^configs/oc/.*\.py$", "other", "none"),  # an OpenCompass model config
    ], {}),
    ("kongfoo-ai/internTA", [
        # a config as `xtuner copy-cfg` / `xtuner train` dumps it: every type= names an xtuner/mmengine class
        (r"^(config|train)/internlm2_1_8b_qlora_alpaca_e3_copy\.py$", "config", "xtuner"),
        (r"^docs/docs\.json$", "other", "none"),  # Mintlify
        (r"^docs/api-reference/openapi\.yml$", "other", "none"),
        (r"^docker-compose\.web\.yml$", "other", "none"),
    ], {}),
    ("SmartFlowAI/nanoInternLM", [
        # dumped XTuner config (type='xtuner.engine.hooks.DatasetInfoHook', xtuner.model.SupervisedFinetune)
        (r"^config/internlm2_community_train_config\.py$", "config", "xtuner"),
    ], {}),
    ("LTtt456c/InternLM_AdapterModel", [
        (r"^adapter_config\.json$", "config", "peft"),  # a saved PEFT adapter (adapter_model beside it)
        (r"^xtuner_config\.py$", "config", "xtuner"),  # the XTuner config that trained it
    ], {}),
    ("Jason-Youu/unsloth-GRPO", [
        (r"^adapter_config\.json$", "config", "peft"),  # a saved PEFT adapter at the root
    ], {}),
    ("ludwig-ai/experiments", [
        # automl/*/train_*.py: LudwigModel(config='config_<x>.yaml') (Ludwig ECD configs, tabular)
        (r"^automl/.*/config_.*\.yaml$", "config", "ludwig"),
    ], {r"^automl/.*/config_.*\.yaml$": 30}),
    ("Elijah-Bodden/Mind-upload", [
        # Elijah-Bodden/My-Simulacrum run.bash: wget .../Mind-upload/main/config.yml;
        # accelerate launch -m axolotl.cli.train config.yml (axolotl cloned from main)
        (r"^config\.yml$", "config", "axolotl"),
    ], {}),
    ("Gayaz2000/Unsloth-DPOTrainer", [
        (r"^adapter_config\.json$", "config", "peft"),  # saved by the notebook's model.save_pretrained
        (r"^(special_tokens_map|tokenizer_config)\.json$", "other", "none"),
    ], {}),
    ("Ey-luccas/chatbot_unsloth", [
        (r"^.*/adapter_config\.json$", "config", "peft"),
        (r"^.*/(special_tokens_map|tokenizer_config)\.json$", "other", "none"),
    ], {}),
    ("EDLlyc/kangya-glm4-lora", [
        (r"^adapter_config\.json$", "config", "peft"),  # inference.py: PeftModel.from_pretrained(base, ".")
    ], {}),
    ("farhan-syah/unsloth-finetuning", [
        # scripts/train.py: FastLanguageModel.from_pretrained(...), SFTTrainer(args=TrainingArguments(**training_args))
        (r"^scripts/train\.py$", "config", "unsloth"),
        # scripts/config_loader.py load_config: yaml.safe_load into the project's own Config (config_schema.py)
        (r"^(training_params_example|quick_test)\.yaml$", "other", "none"),
    ], {}),
    ("Lightning-AI/litgpt", [
        # litgpt finetune/pretrain --config: jsonargparse into litgpt's own CLI: no supported format
        (r"^config_hub/.*\.yaml$", "other", "none"),
        (r"^\.devcontainer/devcontainer\.json$", "other", "none"),
        (r"^\.lightning/workflows/tests\.yaml$", "other", "none"),
        (r"^tests/data/_fixtures/.*\.json$", "other", "none"),
    ], {}),
    ("mlc-ai/mlc-llm", [
        (r"^(android|ios)/.*mlc-package-config\.json$", "other", "none"),
        (r"^ci/build-environment\.yaml$", "other", "none"),
        (r"^examples/rest/nodejs/.*\.json$", "other", "none"),
        (r"^site/_config\.yml$", "other", "none"),
        (r"^\.yamllint\.yaml$", "other", "none"),
    ], {}),
]

"""Every IR key: its name, value type and meaning (linter/catalogue.py turns these rows into `Key`s and
checks every read and write against them). Grouped by topic; a new fact an adapter records starts here."""

from __future__ import annotations

from .checked_keys import CHECKED_KEYS  # the keys frameworks' own launch checks read
from .script_call_keys import SCRIPT_CALL_KEYS  # what a training script's trainer calls show

IR_KEYS = (
    # The file itself
    ("file.kind", "str", "what kind of file of its framework this is (deepspeed, trainer, trl, accelerate, peft, "
                         "axolotl, llamafactory, ludwig, xtuner, unsloth)"),
    ("trainer.fills_deepspeed_auto", "bool", "the trainer that reads this config fills a linked DeepSpeed "
                                             "config's \"auto\" values and refuses values that disagree with its own"),
    ("trainer.deepspeed_reader", "str", "what reads a linked DeepSpeed config with no HF Trainer to fill it: "
                                        "deepspeed (deepspeed.initialize) or accelerate (DeepSpeedPlugin)"),
    ("trainer.client_optimizer", "bool", "the script passes its own optimizer to deepspeed.initialize"),
    ("trainer.client_scheduler", "bool", "the script passes its own lr_scheduler to deepspeed.initialize"),
    ("file.auto_keys", "list", "the dotted key paths a DeepSpeed config sets to \"auto\", for a launcher to fill"),
    ("launch.repository_sharding", "str", "sharding launcher configs the checkout ships, any of which may launch it"),
    ("launch.commented_config", "str", "a sharding launcher config a comment in the file launches it with"),
    ("launch.entry", "str", "the program the checkout's launch commands run this config with, where they agree "
                            "(trl sft, llamafactory-cli train, axolotl train, or a script path)"),
    ("launch.replaces_model_init_kwargs", "bool", "the entry that the launch commands run builds the model "
                                                  "itself: the config's model_init_kwargs never reach from_pretrained"),
    ("launch.deepspeed_replaces", "list", "the keys of this file whose values a launch that passes a DeepSpeed "
                                          "config on the command line replaces with that config's"),
    ("launch.auto_precision_by_device", "bool", "a launch that passes a DeepSpeed config resolves its \"auto\" "
                                                "fp16/bf16 from the GPU: fp16 where CUDA is available, bf16 where "
                                                "torch.cuda.is_bf16_supported(), bf16 where both"),
    ("launch.undecided", "str", "what this file leaves to a launch command that no command of the checkout "
                                "names (its precision and sharding): unknown"),
    ("launch.passes_deepspeed", "bool", "the checkout's launch commands that name this file agree on passing a "
                                        "DeepSpeed config (--deepspeed) or on passing none"),
    ("launch.overridden", "list", "the IR keys whose value the launch commands that name this file give on their "
                                  "command line, in place of the file's (the field holds the launch's value, at the "
                                  "file's key)"),
    ("launch.override_source", "str", "where the launch command that gives `launch.overridden` values is written"),
    ("launch.vllm_server", "bool", "some launch command of the checkout starts TRL's vLLM server (trl vllm-serve); "
                                   "recorded only for a config that launch commands name"),
    ("arguments.project_keys", "list", "keys of this file that the repository's own argument dataclasses define"),
    ("arguments.framework_copy", "str", "the folder of the framework's own package that the repository carries (a "
                                        "vendored, possibly modified copy, installed with `pip install -e .`): its "
                                        "parser, not a release's, reads the file"),
    ("arguments.training_keys", "list", "keys of this file that only the framework's training command parses (its "
                                        "TrainingArguments), which its other commands' parsers refuse"),
    ("launch.distributed_when", "str", "when the CLI the launch commands run starts its own distributed launcher, "
                                       "where they agree: always (told to), or several_devices (only when more than "
                                       "one device is visible; one plain process otherwise)"),
    ("launch.visible_devices", "int", "the devices the launch commands make visible (CUDA_VISIBLE_DEVICES), where "
                                      "they agree"),
    ("launch.readers", "list", "every entry of the checkout's launch commands that name this file, training or not "
                               "(llamafactory-cli train, chat, webchat, api, export, eval)"),
    ("arguments.unseen_keys", "list", "a script's argument keywords (every spelling, and their IR keys) it computes, sets "
                                      "later or hands the trainer; [\"*\"] for **kwargs: a key left out is no default there"),
    ("arguments.project_parser", "bool", "the repository's own argument classes (no framework base) read this file"),
    ("arguments.model_load_in_code", "str", "the project's own script that reads this file loads the model itself, "
     "in a way its code fixes (a dtype constant, no quantization or adapter): where"),
    ("arguments.imported_classes", "str", "argument classes a parser call of the repository imports from another "
                                          "installed package (not transformers/trl): `module (scripts)`"),
    ("arguments.extra_keys_allowed", "str", "the repository's own argument classes that read this file are parsed "
                                            "with allow_extra_keys=True (keys no field takes are ignored): `classes`"),
    ("device.kind", "str", "the accelerator the job runs on: cuda, or cpu/npu/xpu/... where a launcher config says"),
    # Model
    ("model.name", "str", "the base model: a hub id or a local path"),
    ("training.gkd_lmbda", "num", "TRL GKD lmbda: the share of steps trained on the student's own generations "
                                  "(on-policy), as written"),
    ("model.teacher", "str", "the distillation teacher model: a hub id or a local path (TRL GKD "
                             "teacher_model_name_or_path), as written"),
    ("model.load_dtype", "dtype", "the dtype the model weights are loaded in (torch_dtype)"),
    ("model.default_dtype", "dtype", "the dtype the framework loads weights in when the config names none"),
    ("model.bf16_falls_back", "bool", "the loader replaces a bfloat16 dtype (weights and 4-bit compute) with float16 "
                                      "on a GPU without bf16, instead of failing"),
    ("model.device_map", "str", "the device_map from_pretrained receives, as written (a device, auto / balanced / "
                                "balanced_low_0 / sequential, or `map` for an explicit module-to-device mapping)"),
    ("model.unsloth", "bool", "Unsloth's patched model and kernels load and train the model (LLaMA-Factory use_unsloth)"),
    # Mixed precision
    ("precision.fp16", "bool|auto", "fp16 mixed precision (AMP) on"),
    ("precision.bf16", "bool|auto", "bf16 mixed precision on"),
    ("precision.tf32", "bool|auto", "TF32 matmuls allowed"),
    ("precision.fp8", "bool", "fp8 training on"),
    ("precision.amp", "bool", "NVIDIA apex AMP (DeepSpeed `amp.enabled`) on"),
    # Quantized loading (bitsandbytes)
    ("quantization.bits", "int", "weights loaded in 4 or 8 bits"),
    ("quantization.quant_type", "str", "4-bit data type: nf4 or fp4"),
    ("quantization.compute_dtype", "dtype", "dtype 4-bit layers compute in"),
    ("quantization.double_quant", "bool", "nested quantization of the 4-bit scales"),
    ("quantization.method", "str", "LLaMA-Factory quantization_method (bnb, gptq, awq, ...)"),
    ("quantization.quant_storage", "dtype", "dtype the packed 4-bit weights are stored in (sharding needs it); a str "
                                            "starting 'unknown' where the framework's unknown version decides"),
    # Parameter-efficient adapters
    ("adapter.kind", "str", "lora, qlora, prefix_tuning, ... (PEFT peft_type, lower-cased); None: every parameter trains"),
    ("adapter.r", "int", "LoRA rank"),
    ("adapter.alpha", "num", "LoRA alpha"),
    ("adapter.target_modules", "list|str", "modules the adapter wraps (a list, or a shorthand such as all-linear)"),
    ("adapter.modules_to_save", "list", "modules trained in full beside the adapter"),
    ("adapter.trainable_layers", "int", "freeze tuning: only the last N layers train"),
    ("adapter.ensure_weight_tying", "bool", "PEFT ensure_weight_tying: tied embed_tokens / lm_head share one "
                                            "modules_to_save copy (peft >= 0.18)"),
    ("adapter.dora", "bool", "DoRA: the LoRA update is split into magnitude and direction (use_dora)"),
    ("adapter.target_linear", "bool", "the adapter wraps every linear layer (Axolotl lora_target_linear)"),
    ("adapter.target_shorthand", "str", "a target_modules string PEFT's LoraConfig receives as written and "
                                        "expands itself (\"all-linear\"), where the framework passes it unchanged"),
    ("adapter.exclude_modules", "list|str", "modules PEFT leaves out even where target_modules names them "
                                            "(LoraConfig exclude_modules, PEFT >= 0.14), as written"),
    ("adapter.bias", "str", "which biases the adapter trains: none, all or lora_only (PEFT LoraConfig bias)"),
    ("adapter.init_weights", "bool|str", "PEFT init_lora_weights as written: True, False or a method name "
                                         "(gaussian, loftq, pissa, eva, ...)"),
    ("adapter.loftq_config", "bool", "a non-empty PEFT loftq_config is given (Ludwig: a loftq_config block, whose "
                                     "fields have defaults)"),
    ("adapter.eva_config", "bool", "a Ludwig eva_config block is given (EVA initialisation's settings)"),
    ("adapter.lora_bias", "bool", "PEFT lora_bias: the LoRA B matrix has a bias (peft >= 0.14)"),
    ("adapter.megatron_config", "bool", "a PEFT megatron_config is given (LoRA over Megatron-core layers)"),
    ("adapter.layers_to_transform", "int|numbers", "PEFT layers_to_transform: only these layer indices are adapted"),
    ("adapter.rank_pattern_keys", "list", "PEFT LoraConfig rank_pattern keys (module-name regexes), in written order"),
    ("adapter.rank_pattern_values", "numbers", "the ranks of adapter.rank_pattern_keys, in the same order"),
    ("adapter.alpha_pattern_keys", "list", "PEFT LoraConfig alpha_pattern keys (module-name regexes), in written order"),
    ("adapter.alpha_pattern_values", "numbers", "the alphas of adapter.alpha_pattern_keys, in the same order"),
    ("adapter.task_type", "str", "PEFT task_type as written, upper-cased (CAUSAL_LM, SEQ_CLS, ...)"),
    ("adapter.layer_replication", "list", "LoRA layer_replication as written: [start, end] layer ranges whose "
                                          "adapter weights are shared"),
    ("adapter.layers_pattern", "str|list", "PEFT layers_pattern: the module list name the layer indices refer to"),
    ("adapter.task_model", "bool", "PEFT wraps a model with a task head (a *ForCausalLM, *ForSequenceClassification "
                                   "class: task_type set), whose input embedding sits under a prefix "
                                   "(model.embed_tokens, transformer.wte), never at the top level"),
    ("adapter.adalora_tinit", "int", "AdaLoRA tinit: initial fine-tuning steps before rank budgeting"),
    ("adapter.adalora_tfinal", "int", "AdaLoRA tfinal: final fine-tuning steps after rank budgeting"),
    ("adapter.allocates_ranks", "bool", "the framework's own training loop calls AdaLoRA's update_and_allocate "
                                        "after each optimizer step (False: it never does)"),
    ("adapter.adalora_total_step", "int", "AdaLoRA total_step: the training steps the rank schedule is planned for"),
    ("adapter.target_string", "str", "target_modules written as one string, which PEFT's LoraConfig keeps a str "
                                     "(a regular expression matched against module names, or all-linear)"),
    ("adapter.trainable_token_layers", "list", "the layers PEFT trainable_token_indices names (its dict form): "
                                               "only some token rows of each train"),
    ("adapter.config_keys", "list", "the top-level keys of a PEFT adapter_config.json, as the config class "
                                    "receives them on load"),
    # PEFT config classes other than LoRA / AdaLoRA: the fields their __post_init__ checks read
    # (rules/peft_refusal_table.py), as written.
    ("adapter.inference_mode", "bool", "PEFT inference_mode as written (save_pretrained writes true; false means the "
                                       "file configures training: get_peft_model or is_trainable=True)"),
    ("adapter.prompt_init", "str", "PEFT prompt tuning prompt_tuning_init as written (TEXT, RANDOM, SAMPLE_VOCAB)"),
    ("adapter.prompt_init_text", "str", "PEFT prompt tuning prompt_tuning_init_text: the text the virtual tokens "
                                        "start from"),
    ("adapter.tokenizer_name", "str", "PEFT prompt tuning tokenizer_name_or_path: the tokenizer that turns the init "
                                      "text into token ids"),
    ("adapter.tokenizer_kwargs", "bool", "PEFT prompt tuning tokenizer_kwargs is a non-empty mapping"),
    ("adapter.feedforward_modules", "list", "PEFT IA3 feedforward_modules, recorded only when written as a list"),
    ("adapter.oft_block_size", "int", "PEFT OFT oft_block_size (LLaMA-Factory oft_block_size)"),
    ("adapter.boft_block_size", "int", "PEFT BOFT boft_block_size"),
    ("adapter.boft_block_num", "int", "PEFT BOFT boft_block_num"),
    ("adapter.road_variant", "str", "PEFT RoAd variant (road_1, road_2, road_4)"),
    ("adapter.road_group_size", "int", "PEFT RoAd group_size"),
    ("adapter.target_parameters_string", "str", "PEFT LoraConfig target_parameters written as one string"),
    ("model.full_finetuning", "bool", "the loader is asked for full fine-tuning (Unsloth full_finetuning)"),
    ("generation.colocated_vllm", "bool", "the model loads with its own vLLM engine that generates with the "
                                          "trained LoRA weights (Unsloth fast_inference)"),
    ("generation.vllm_max_lora_rank", "int", "the largest LoRA rank that colocated vLLM engine is sized for "
                                             "(Unsloth max_lora_rank)"),
    ("model.patched_types", "list", "the model_types the script's loader has sent to its own patched model classes "
                                    "in every release that has the loader (Unsloth FastLanguageModel: llama, mistral), "
                                    "recorded where the same class adds the adapter"),
    ("model.fused_lora_types", "list", "the model_types whose LoRA layers the script's adapter call patches with the "
                                       "framework's fused LoRA kernels when lora_dropout is 0 and bias is none, in "
                                       "every release (Unsloth FastLanguageModel loading in 4 or 16 bits, not for full "
                                       "fine-tuning or QAT: llama, mistral)"),
    ("trainer.patched_sft", "bool", "the script's SFTTrainer is the framework's patched copy (imported after the "
                                    "framework that replaces trl.SFTTrainer: Unsloth), whose dataset preparation may "
                                    "be the framework's own"),
    ("trainer.patched_grpo_config", "bool", "the script's GRPOConfig is the framework's generated copy (imported "
                                            "after the framework that replaces trl.GRPOConfig: Unsloth), whose "
                                            "__init__ may rewrite the batch keys; written with every keyword shown"),
    ("model.generic_loader", "bool", "the script's loader always takes the framework's generic model path, never its "
                                     "per-architecture patched classes (Unsloth FastModel / FastVisionModel)"),
    ("adapter.generic_call", "bool", "the script's adapter call is the framework's generic get_peft_model in every "
                                     "release that has its loader (Unsloth FastModel / FastVisionModel loading: "
                                     "vision.py FastBaseModel.get_peft_model)"),
    ("adapter.layer_filters", "bool", "the adapter call writes (or may pass through **kwargs) the framework's "
                                      "layer-family filters (Unsloth finetune_vision_layers, finetune_language_layers, "
                                      "...), recorded for the framework's own adapter calls only"),
    ("model.norms_frozen_types", "list", "the model_types for which the whole loaded model trains (no adapter, no "
                                         "full fine-tuning mode, not quantized) through the framework's patched "
                                         "forward, whose fused RMSNorm kernel gives the norm weights no gradient, in "
                                         "every release (Unsloth FastLanguageModel: llama, mistral)"),
    ("quantization.loader_modes", "numbers", "the bit widths the loader's own keywords ask for together (Unsloth "
                                             "from_pretrained load_in_4bit, True by default, and load_in_8bit), "
                                             "recorded where more than one is on and full fine-tuning is off"),
    ("quantization.loader_built", "bool", "the loader builds the quantization config itself from its own "
                                          "load_in_4bit / load_in_8bit keywords (Unsloth from_pretrained)"),
    ("quantization.none_requested", "bool", "the loader is asked for no quantization and no full fine-tuning "
                                            "(load_in_4bit written False, nothing else chosen: a 16-bit LoRA)"),
    ("generation.vllm_max_model_len", "int", "the longest sequence, prompt included, that colocated vLLM engine "
                                             "accepts (Unsloth load_vllm max_model_len = from_pretrained "
                                             "max_seq_length)"),
    ("training.trainer_candidates", "list", "TRL trainers whose config defines every TRL config key of the file in a "
                                            "release that may read it (linter/data/trl_config_keys.json); [] where "
                                            "none does; one entry: the file's trainer is that one exactly"),
    ("generation.max_new_tokens", "int", "TRL OnlineDPOConfig (and XPO / Nash-MD), Ludwig generation max_new_tokens "
                                         "as written: the most tokens generated per completion"),
    ("generation.stop_token", "str", "TRL PPOConfig stop_token as written (\"eos\" or unset)"),
    ("generation.stop_token_id", "int", "TRL PPOConfig stop_token_id as written"),
    ("generation.max_prompt_length", "int", "TRL max_prompt_length as written: the prompt tokens kept "
                                            "(left-truncated) before generation (GRPO) or in each pair (DPO, KTO)"),
    ("generation.max_completion_length", "int", "TRL max_completion_length as written: the most tokens "
                                                "generated per completion (GRPO, RLOO)"),
    ("generation.mask_truncated", "bool", "TRL GRPOConfig / RLOOConfig mask_truncated_completions as written: "
                                         "completions cut at max_completion_length leave the loss"),
    ("save.merged_16bit", "bool", "a merged-model save call the script runs after training writes 16-bit weights "
                                  "(save_method \"merged_16bit\", written or by default)"),
    ("save.gguf_positional", "int", "positional arguments (the directory first) of the script's first GGUF export call (save_pretrained_gguf / "
                                    "push_to_hub_gguf)"),
    ("save.gguf_keywords", "list", "keyword names of that GGUF export call, as written"),
    ("save.merged_method", "str", "save_method of a merged-model save call the script runs after training "
                                  "(Unsloth save_pretrained_merged / push_to_hub_merged), as written"),
    # Optimizer and schedule
    ("optimizer.name", "str", "optimizer as the framework names it"),
    ("optimizer.class", "str", "the optimizer class a Python config builds, as its imports name it (bitsandbytes.optim.X)"),
    ("optimizer.lr", "num|auto", "learning rate"),
    ("optimizer.weight_decay", "num|auto", "weight decay"),
    ("optimizer.grad_clip", "num|auto", "gradient clipping norm (0: off)"),
    ("optimizer.betas", "numbers|auto", "Adam betas"),
    ("optimizer.eps", "num|auto", "Adam epsilon"),
    ("optimizer.memory_efficient", "str", "GaLore, APOLLO, BAdam, LISA, Adam-mini, Muon: states not modelled"),
    ("optimizer.layerwise", "bool", "the GaLore/APOLLO optimizer steps each layer in its own gradient hook "
                                    "(LLaMA-Factory galore_layerwise / apollo_layerwise)"),
    ("scheduler.warmup_max_lr", "num|auto", "DeepSpeed WarmupLR's peak learning rate"),
    ("scheduler.warmup_steps", "int|auto", "warm-up steps"),
    ("scheduler.total_steps", "int|auto", "DeepSpeed scheduler total_num_steps (WarmupDecayLR, WarmupCosineLR)"),
    # fp16 loss scaling
    ("loss_scale.loss_scale", "num", "static loss scale (0: dynamic)"),
    ("loss_scale.initial_scale_power", "int", "dynamic loss scale starts at 2**N"),
    ("loss_scale.min_loss_scale", "num", "dynamic loss scale floor"),
    ("loss_scale.window", "num", "dynamic loss scale: steps without overflow before it doubles (loss_scale_window)"),
    # Parallelism
    ("parallel.zero_stage", "int", "DeepSpeed ZeRO stage"),
    ("parallel.offload_optimizer", "bool", "optimizer states offloaded to CPU/NVMe"),
    ("parallel.force_ds_cpu_optimizer", "bool", "DeepSpeed zero_force_ds_cpu_optimizer: a client optimizer under "
                                               "optimizer offload is refused (DeepSpeed) or replaced (accelerate)"),
    ("parallel.zero_allow_untested_optimizer", "bool|str|num", "DeepSpeed zero_allow_untested_optimizer as written "
                                                              "(truthy: ZeRO takes an optimizer it has not tested)"),
    ("parallel.zero_legacy_stage1", "bool", "DeepSpeed zero_optimization.legacy_stage1 as written (the "
                                          "deprecated ZeRO-1, refused from v0.5.9)"),
    ("parallel.offload_param", "bool", "parameters offloaded to CPU/NVMe"),
    ("parallel.offload_ratio", "num", "ZeRO-Offload++ share of the optimizer kept on CPU"),
    ("parallel.fsdp", "bool", "PyTorch FSDP on"),
    ("parallel.fsdp_version", "int|str", "FSDP version (1 or 2): as written, or the framework's default for its "
                                         "pinned version; a str (a fsdp_config path, or a default an unknown "
                                         "version decides) where not known here"),
    ("parallel.fsdp_sharding", "str", "FSDP sharding: FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD or NO_SHARD"),
    ("parallel.unmodeled", "str", "a parallelism the memory model does not follow (expert, tensor, Megatron...)"),
    ("parallel.fsdp_wrap_classes", "list", "the layer classes FSDP's transformer auto-wrap policy wraps, where the "
                                           "framework passes the written names to it (transformer_layer_cls_to_wrap)"),
    ("parallel.fsdp_wrap_classes_own", "bool", "a training config with FSDP on names its own wrap classes, which "
                                               "replace (in some releases may replace) those a launcher config names "
                                               "(TrainingArguments: FSDP_TRANSFORMER_CLS_TO_WRAP / "
                                               "transformer_cls_names_to_wrap)"),
    ("parallel.fsdp_use_orig_params", "bool", "FSDP use_orig_params (written value only)"),
    ("parallel.fsdp_state_dict_type", "str", "FSDP state dict type a launcher config writes (FULL_STATE_DICT, "
                                             "SHARDED_STATE_DICT, LOCAL_STATE_DICT), written value only"),
    ("parallel.fsdp_ram_efficient_loading", "bool", "FSDP cpu_ram_efficient_loading: only rank 0 loads the "
                                                    "checkpoint, the other ranks wait for a broadcast (written value only)"),
    ("parallel.fsdp_sync_module_states", "bool", "FSDP sync_module_states: rank 0 broadcasts the weights when the "
                                                 "model is wrapped (written value only)"),
    ("parallel.gather_16bit_on_save", "bool", "ZeRO-3 gathers the partitioned 16-bit weights into the saved model "
                                              "(stage3_gather_16bit_weights_on_model_save)"),
    ("parallel.prefetch_bucket_size", "num|auto", "ZeRO-3 stage3_prefetch_bucket_size (written value only)"),
    ("parallel.hpz_partition_size", "int", "ZeRO++ hierarchical partitioning: GPUs holding a secondary copy of the "
                                           "ZeRO-3 weights (zero_hpz_partition_size; 1: off), written value only"),
    ("precision.grad_accum_dtype", "str", "DeepSpeed data_types.grad_accum_dtype as written (unset: the model's dtype)"),
    ("parallel.communication_data_type", "str", "DeepSpeed communication_data_type as written: the dtype gradients "
                                                "are reduced in across GPUs (unset: DeepSpeed decides)"),
    ("parallel.prescale_gradients", "bool", "DeepSpeed prescale_gradients as written (unset: false): gradients are "
                                            "divided before the reduction instead of after it"),
    ("parallel.gradient_predivide_factor", "num", "DeepSpeed gradient_predivide_factor as written (unset: 1.0)"),
    ("precision.bf16_immediate_grad_update", "bool", "DeepSpeed bf16.immediate_grad_update as written: the bf16 "
                                                     "optimizer adds each gradient to its fp32 buffer in a hook"),
    ("parallel.ddp_find_unused", "bool", "DDP find_unused_parameters (written value only; the trainer decides when unset)"),
    ("parallel.zero_quantized_weights", "bool", "ZeRO++ qwZ: ZeRO-3 weights quantized to int8 for the all-gather "
                                               "(zero_quantized_weights), written value only"),
    ("parallel.autotp_size", "int", "DeepSpeed AutoTP training: the tensor-parallel degree (tensor_parallel.autotp_size; "
                                    "0 or 1: off), written value only"),
    ("precision.fp16_master_weights", "bool", "DeepSpeed fp16.fp16_master_weights_and_grads: fp16 master weights and "
                                              "gradients in the ZeRO optimizer, written value only"),
    ("precision.bf16_master_weights", "bool", "DeepSpeed bf16.bf16_master_weights_and_grads: bf16 master weights and "
                                              "gradients in the ZeRO optimizer (v0.18.3), written value only"),
    ("precision.bf16_optimizer_states", "bool", "DeepSpeed bf16.bf16_optimizer_states: bf16 optimizer states "
                                                "(v0.18.3), written value only"),
    ("training.deepspeed_compile", "bool", "the DeepSpeed config compiles the model itself (compile.enabled, "
                                           "DeepSpeed 0.14.0-0.14.3), written value only"),
    ("optimizer.param_max_grad_norm", "num|auto", "DeepSpeed optimizer.params.max_grad_norm as written (the engine "
                                                   "refuses it: gradient_clipping is the setting)"),
    ("parallel.zero_quantized_nontrainable_weights", "bool", "ZeRO-3 frozen weights stored quantized "
                                                            "(zero_quantized_nontrainable_weights), written value only"),
    ("parallel.offload_param_device", "str", "ZeRO offload_param.device as written (cpu, nvme, none)"),
    ("parallel.offload_optimizer_device", "str", "ZeRO offload_optimizer.device as written (cpu, nvme, none)"),
    ("parallel.offload_param_nvme_path", "str", "ZeRO offload_param.nvme_path as written (the swap folder for nvme)"),
    ("parallel.offload_optimizer_nvme_path", "str", "ZeRO offload_optimizer.nvme_path as written"),
    ("parallel.overlap_comm", "bool", "ZeRO overlap_comm (written value only; DeepSpeed's default depends on the stage)"),
    ("parallel.reduce_scatter", "bool", "ZeRO reduce_scatter as written (unset: true): ZeRO-1/2 average each gradient "
                                        "bucket into its owner's partition only"),
    ("parallel.contiguous_gradients", "bool", "ZeRO contiguous_gradients as written (unset: true): ZeRO-1/2 reduce "
                                              "through the contiguous buckets (reduce_scatter) instead of all-reducing"),
    # Batch
    ("batch.micro", "int|auto", "per-GPU micro batch"),
    ("batch.grad_accum", "int|auto", "gradient accumulation steps"),
    ("batch.global", "int|auto", "global batch (DeepSpeed train_batch_size)"),
    ("batch.effective", "int|auto", "samples per optimizer step that the trainer derives the accumulation from "
                                    "(Ludwig trainer.effective_batch_size), as written"),
    ("batch.eval_micro", "int", "per-GPU evaluation batch (per_device_eval_batch_size)"),
    ("batch.world_size", "int", "GPUs in the job, where a launcher config (accelerate num_processes) or the "
                                "launch command that names the config says"),
    # Sequence, attention, memory savers
    ("sequence.max_length", "int", "longest training sequence in tokens"),
    ("sequence.packing", "bool", "samples packed into full-length sequences"),
    ("sequence.truncation_mode", "str", "which end of an over-long sequence the trainer keeps (TRL truncation_mode), "
                                      "as written"),
    ("sequence.padding_free", "bool", "batches flattened without padding (TRL padding_free)"),
    ("sequence.packing_strategy", "str", "TRL's packing strategy (bfd, ffd, wrapped)"),
    ("attention.implementation", "str", "eager, sdpa, flash_attention_2, ..."),
    ("attention.varlen", "bool", "XTuner use_varlen_attn: varlen FlashAttention over packed samples"),
    ("data.collate_varlen", "bool", "XTuner default_collate_fn(use_varlen_attn=...) as written: the collate's "
                                    "varlen path (no sequence-parallel padding)"),
    ("memory.gradient_checkpointing", "bool", "activations recomputed in the backward pass"),
    ("memory.checkpointing_reentrant", "bool", "gradient_checkpointing_kwargs.use_reentrant as written"),
    ("memory.fsdp_activation_checkpointing", "bool", "FSDP's own activation checkpointing (TrainingArguments "
                                                     "fsdp_config activation_checkpointing), written value only"),
    ("training.liger_loss", "bool", "the RL trainer's own fused liger loss is asked for by its separate switch "
                                    "(use_liger_loss), as written"),
    ("memory.deepspeed_activation_checkpointing", "list", "the memory options a DeepSpeed activation_checkpointing "
                                                          "block turns on (partition_activations, cpu_checkpointing, "
                                                          "contiguous_memory_optimization)"),
    ("memory.fused_cross_entropy", "bool", "liger / cut-cross-entropy: the logits are never materialised"),
    ("memory.chunked_loss", "int", "cross entropy computed in this many chunks"),
    ("memory.loss_in_place", "bool", "the loss kernel takes the log-softmax row by row and writes the gradient into "
                                     "the 16-bit logits in place: no fp32 copy of the whole logits (Unsloth)"),
    ("memory.activation_offload", "bool", "saved activations moved to CPU RAM or disk"),
    ("training.enabled", "bool", "False: the config predicts or evaluates only, or cannot start training at all"),
    ("training.max_steps", "int", "optimizer steps to run; > 0 overrides the epochs (TrainingArguments max_steps)"),
    ("trainer.sft_plain_arguments", "bool", "an SFT trainer gets a plain transformers TrainingArguments "
                                            "(no SFT fields: TRL rebuilds it as its SFTConfig with defaults)"),
    ("trainer.plain_arguments_checkpointing", "bool", "that plain TrainingArguments' gradient_checkpointing "
                                                      "(written, or False by default)"),
    ("memory.peft_checkpointing", "bool|str", "Unsloth get_peft_model use_gradient_checkpointing (\"unsloth\", "
                                              "True or False; \"unsloth\" by default)"),
    ("training.epochs", "num", "passes over the training set asked for (TrainingArguments num_train_epochs)"),
    ("training.max_steps_caps", "bool", "a positive max_steps only caps the epochs' step count (the run stops at "
                                        "whichever comes first); None: the framework version that decides is unknown"),
    ("training.backend", "str", "the framework's execution backend as written: local, ray, ... (Ludwig backend.type)"),
    ("training.remote_backend", "str", "the run trains on a remote service (Axolotl hatchery), not these GPUs"),
    ("training.sync_ref_model", "bool", "the reference model is updated from the policy during training (TRL "
                                         "sync_ref_model, TR-DPO), written value only"),
    ("training.rl_beta", "num", "TRL beta as written (GRPO/RLOO: the KL coefficient; DPO/KTO: the loss temperature)"),
    ("training.precompute_ref", "bool", "reference log-probs computed once before training (TRL precompute_ref_log_probs)"),
    ("training.rpo_alpha", "num", "TRL DPOConfig rpo_alpha as written: the weight of the NLL term of RPO"),
    ("training.loss_type", "str|list", "the trainer's loss variant as written (TRL loss_type; DPOConfig takes a "
                                       "list of them from 0.20)"),
    ("checkpoint.load_best", "bool", "the best checkpoint is loaded at the end (load_best_model_at_end)"),
    ("checkpoint.save_strategy", "str", "when checkpoints are saved (no, steps, epoch, best), as written"),
    ("checkpoint.save_only_model", "bool", "checkpoints hold the model only, no optimizer state (save_only_model)"),
    ("checkpoint.eval_strategy", "str", "when the model is evaluated during training (no, steps, epoch), as written, "
                                        "or the reader's default (TrainingArguments: no)"),
    ("checkpoint.best_metric_name", "str", "the metric the Trainer compares checkpoints by, as written "
                                           "(TrainingArguments metric_for_best_model)"),
    ("scheduler.kwargs", "list", "the keyword arguments the schedule function gets (TrainingArguments "
                                 "lr_scheduler_kwargs, a mapping as written): \"name=value\" for a scalar, else \"name\""),
    ("parallel.trainer_fsdp_ram_efficient", "bool", "TrainingArguments fsdp_config cpu_ram_efficient_loading, as written"),
    ("parallel.trainer_fsdp_sync_states", "bool", "TrainingArguments fsdp_config sync_module_states, as written"),
    ("parallel.trainer_fsdp_min_params", "num", "TrainingArguments fsdp_config min_num_params (or fsdp_min_num_params), "
                                                "as written"),
    ("parallel.trainer_fsdp_wrap_policy", "str", "TrainingArguments fsdp_config auto_wrap_policy, as written"),
    ("parallel.trainer_fsdp_layer_classes", "bool", "TrainingArguments fsdp_config transformer_layer_cls_to_wrap (or "
                                                    "fsdp_transformer_layer_cls_to_wrap) is written"),
    ("batch.accelerator_num_steps", "int", "TrainingArguments accelerator_config.gradient_accumulation_kwargs.num_steps, "
                                           "as written"),
    ("parallel.sharded_ddp", "bool|str|list", "TrainingArguments sharded_ddp (fairscale, transformers < 4.35), as written"),
    ("device.cpu_only", "bool", "TrainingArguments use_cpu (no_cuda before 4.34): the Trainer runs on the CPU"),
    ("checkpoint.greater_is_better", "bool", "a larger metric_for_best_model is better (TrainingArguments "
                                             "greater_is_better), written value only"),
    ("training.label_smoothing", "num", "label smoothing factor of the Trainer's loss (label_smoothing_factor), as written"),
    # Model family, features and prompt, where the framework declares them in the config (Ludwig)
    ("model.kind", "str", "the framework's model family, as written or defaulted: ecd, llm, gbm (Ludwig model_type)"),
    ("model.multimodal", "bool", "the base model is loaded as a vision-language model (Ludwig, Axolotl is_multimodal)"),
    ("data.input_types", "list", "the type of each input feature, in order (text, category, image, ...)"),
    ("data.output_types", "list", "the type of each output feature, in order"),
    ("data.output_column", "str", "the data column of the first output feature (its column, else its name)"),
    ("data.output_max_length", "int", "the first output feature's own preprocessing.max_sequence_length, as written: "
                                      "the longest target, in tokens"),
    ("data.encoder_pretrained", "str", "the pretrained checkpoint the first input feature's encoder loads, as written "
                                       "or its encoder type's default"),
    ("adapter.pretrained_weights", "str", "trained adapter weights loaded instead of a fresh adapter, as written"),
    ("adapter.merge_on_save", "bool", "the adapter is merged into the base model when the model is saved"),
    ("quantization.backend", "str", "the library that quantizes the weights, as written (bitsandbytes, torchao)"),
    ("quantization.mode", "str", "the quantization mode of a library that has several, as written"),
    ("quantization.qat", "bool", "quantization-aware training: fake-quantized weights train, converted at save"),
    ("prompt.template", "str", "the prompt template each sample is formatted with, as written"),
    ("prompt.task", "str", "the task instruction put in the prompt, as written"),
    ("prompt.retrieval", "str", "the retrieval method that adds similar samples to the prompt, as written"),
    ("prompt.retrieval_k", "int", "how many retrieved samples the prompt adds (Ludwig prompt.retrieval.k), as written"),
    ("prompt.retrieval_model", "str", "the embedding model retrieval ranks samples with (Ludwig "
                                      "prompt.retrieval.model_name), as written"),
) + CHECKED_KEYS + SCRIPT_CALL_KEYS

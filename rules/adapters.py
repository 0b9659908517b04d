"""PEFT adapters: settings the PEFT release in use cannot build (issue 16 recall)."""

from __future__ import annotations

from linter.registry import ERROR, WARNING, Rule, register
from .facts import fsdp_version, world_size

# peft/tuners/lora/bnb.py: DoRA arrived in PEFT 0.9.0 for plain Linear layers only; the bitsandbytes Linear8bitLt and
# Linear4bit raise "... does not support DoRA yet, please set it to False" until 0.10.0 (huggingface/peft#1518).
# Before 0.9.0 LoraConfig has no use_dora.
_DORA_FIRST = "0.9.0"
_DORA_QUANTIZED = "0.10.0"


@register
class DoraQuantizedPeftVersion(Rule):
    """PEF001 dora-quantized-peft-version

    ## What it does
    Flags DoRA (`use_dora`, Axolotl `peft_use_dora`) on a base model loaded in 4 or 8 bits
    with bitsandbytes, where the PEFT in use is 0.9.x (a pin near the file or the installed
    package; silent when unknown), and the framework hands `use_dora` to PEFT (not Ludwig
    0.10.2, nor a Ludwig release not known here, nor Ludwig's AdaLoRA: TRN095).

    ## Why is this bad?
    PEFT 0.9.0 implemented DoRA for plain `nn.Linear` layers only. Its bitsandbytes layers
    (`Linear8bitLt`, `Linear4bit`) raise "Linear4bit does not support DoRA yet, please set
    it to False" when `get_peft_model` wraps them, after the quantized model has loaded
    (huggingface/peft#1991). PEFT 0.10.0 added DoRA for bitsandbytes layers (#1518);
    LLaMA-Factory and Axolotl refused the combination in the meantime.

    ## Example
    `train.yaml`:
        model_name_or_path: microsoft/Phi-3-mini-4k-instruct
        dataset_name: trl-lib/Capybara
        use_peft: true
        use_dora: true
        load_in_4bit: true
    `requirements.txt`:
        peft==0.9.0
    Use instead PEFT 0.10.0 or later, in `requirements.txt`:
        peft==0.10.0

    ## Fix safety
    No fix: the pin is the author's; plain LoRA (`use_dora: false`) is the other choice.

    ## References
    - peft/tuners/lora/bnb.py (0.9.0: "does not support DoRA yet"; 0.10.0: DoRA for
      bitsandbytes layers, huggingface/peft#1518)
    - huggingface/peft#1991; axolotl-ai-cloud/axolotl#1485 (validate_quantized_dora removed
      for PEFT 0.10); LLaMA-Factory src/llmtuner/hparams/parser.py (0.6.0: peft>=0.10.0 for
      DoRA with quantization)
    """

    code = "PEF001"
    name = "dora-quantized-peft-version"
    severity = ERROR
    triggers = ("adapter.dora",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("adapter.dora") is not True or config.value("quantization.bits") not in (4, 8):
                continue
            reaches = config.get("adapter.dora_reaches_peft")  # recorded where the framework may drop use_dora
            if config.value("quantization.method") not in (None, "bnb", "bitsandbytes") \
                    or (reaches is not None and reaches.value is not True):
                continue  # GPTQ, AWQ, HQQ, ...: other layer classes; or use_dora never reaches (or may not reach) PEFT
            old = context.version_before("peft", _DORA_QUANTIZED, config, self.code)
            if old is None or context.version_before("peft", _DORA_FIRST, config, self.code) is not None:
                continue
            four_bit = config.value("quantization.bits") == 4
            model, layer = ("a 4-bit", "Linear4bit") if four_bit else ("an 8-bit", "Linear8bitLt")
            yield self.finding(
                config, config.span("adapter.dora"),
                f"DoRA on {model} bitsandbytes model with PEFT {old[0]} ({old[1]}): PEFT's bitsandbytes layers "
                f"support DoRA only from {_DORA_QUANTIZED} (\"{layer} does not support DoRA yet\" after the model "
                "loads); upgrade PEFT or turn DoRA off")


# peft/utils/other.py ModulesToSaveWrapper.update deep-copies the wrapped module; from a1c472f08 (#1450, first in
# v0.9.0; v0.8.2 lacks it) it gathers ZeRO-3 partitioned parameters first.
_MODULES_TO_SAVE_GATHERED = "0.9.0"
# Trainers that parse their TrainingArguments (which set the ZeRO-3 config transformers reads) before the model loads,
# so from_pretrained builds it under deepspeed.zero.Init. Axolotl does so only from v0.5.0 (utils/trainer.py
# setup_deepspeed_env builds HfTrainerDeepSpeedConfig in prepare_optim_env, 94ba93259 #1785 and 2f8037fee #1850);
# before, it loaded the model first.
_ZERO_INIT_BEFORE_LOAD = ("trl", "trainer", "llamafactory")
_AXOLOTL_ZERO_INIT = "0.5.0"


@register
class ModulesToSaveZero3PeftVersion(Rule):
    """PEF007 modules-to-save-zero3-peft-version

    ## What it does
    Flags an adapter's `modules_to_save` (TRL `lora_modules_to_save`, Axolotl
    `lora_modules_to_save`, LLaMA-Factory `additional_target`) in a run whose linked DeepSpeed
    config uses ZeRO stage 3, where the PEFT in use is older than 0.9.0 (a pin near the file or
    the installed package; silent when unknown). Axolotl runs are flagged only from Axolotl
    0.5.0, the first release that loads the model under the ZeRO-3 config.

    ## Why is this bad?
    When the Trainer's ZeRO-3 config is set before the model loads, transformers builds the
    model under `deepspeed.zero.Init`: every parameter is an empty partition. PEFT's
    `ModulesToSaveWrapper` deep-copies the module to train (`embed_tokens`, `lm_head`, a
    classifier), and before 0.9.0 it copies the empty partitions without gathering them; the
    copy is not registered with DeepSpeed, and the first forward fails with
    `AssertionError: param.ds_status == ZeroParamStatus.AVAILABLE` (huggingface/transformers#28468),
    after the model has loaded on every GPU.

    ## Example
    `sft.yaml`:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        use_peft: true
        lora_modules_to_save: [embed_tokens, lm_head]
        deepspeed: ds_z3.json
    `ds_z3.json`:
        {"zero_optimization": {"stage": 3}}
    `requirements.txt`:
        peft==0.7.1
    Use instead PEFT 0.9.0 or later, in `requirements.txt`:
        peft==0.9.0

    ## Fix safety
    No fix: the pin is the author's; ZeRO-2, or no modules_to_save, are the other choices.

    ## References
    - peft src/peft/utils/other.py ModulesToSaveWrapper.update: a1c472f08 (#1450, "Support
      `modules_to_save` config option when using DeepSpeed ZeRO-3 with ZeRO init enabled",
      2024-02-09), first in v0.9.0 (`git tag --contains`: not in v0.8.2)
    - transformers modeling_utils.py from_pretrained (deepspeed.zero.Init when
      is_deepspeed_zero3_enabled); axolotl src/axolotl/utils/trainer.py setup_deepspeed_env
      (v0.5.0: HfTrainerDeepSpeedConfig before the model loads)
    - huggingface/transformers#28468 (pacman100: modules_to_save not compatible with DeepSpeed);
      QwenLM/Qwen-VL#103
    """

    code = "PEF007"
    name = "modules-to-save-zero3-peft-version"
    severity = ERROR
    triggers = ("adapter.modules_to_save",)

    def check(self, run, context):
        saved = [config for config in run.configs
                 if config.value("adapter.kind") is not None and config.value("adapter.modules_to_save")]
        zero3 = next((config for config in run.linked if config.value("file.kind") == "deepspeed"
                      and config.value("parallel.zero_stage") == 3), None)
        if zero3 is None:
            return
        for config in saved:
            kind = config.value("file.kind")
            if kind == "axolotl":
                axolotl = config.version("axolotl")
                if axolotl is None or context.version_before("axolotl", _AXOLOTL_ZERO_INIT, config, self.code):
                    continue  # older Axolotl loads the model before the ZeRO-3 config is set
            elif kind not in _ZERO_INIT_BEFORE_LOAD:
                continue
            if (old := context.version_before("peft", _MODULES_TO_SAVE_GATHERED, config, self.code)) is None:
                continue
            field = config.get("adapter.modules_to_save")
            names = ", ".join(str(name) for name in field.value)
            yield self.finding(
                config, field.span,
                f"{field.origin.written_as or 'modules_to_save'} ({names}) under ZeRO-3 ({zero3.path.name}) with PEFT {old[0]} ({old[1]}): the model "
                "loads under deepspeed.zero.Init and PEFT copies the saved modules' empty ZeRO-3 partitions, so the "
                "first forward fails (\"param.ds_status == ZeroParamStatus.AVAILABLE\"); PEFT gathers them from "
                f"{_MODULES_TO_SAVE_GATHERED} (#1450): upgrade PEFT, or use ZeRO-2")


# peft/tuners/lora/layer.py LoraLayer._apply_dora, 0.9.0 to 0.11.1: `lora_weight = lora_B.weight @ lora_A.weight`
# reads the LoRA weights without calling the modules; a0788a3f9 (#1806, "Refactor to make DoRA and QDoRA work with
# FSDP", first in v0.12.0) moved DoRA into tuners/lora/dora.py, which goes through lora_B(lora_A(x_eye)).
# peft/utils/other.py fsdp_auto_wrap_policy wraps every leaf module whose weight requires grad (lora_A, lora_B) in its
# own FSDP unit; transformers trainer.py _fsdp_qlora_plugin_updates installs it for a PeftModel with a LoraConfig
# (DoRA is one) from 4.39.0 (read in the 4.39.0 to 5.0.0 wheels; 5.5.0 moves it to integrations/fsdp.py).
_DORA_THROUGH_CALL = "0.12.0"
# TRL reads use_dora (ModelConfig) from 0.16.0 (f074dcdc8, huggingface/trl#2974), whose setup.py requires
# transformers>=4.46.0: a TRL file whose DoRA is on always runs under the wrapping Trainer (the transformers pin is
# not needed). Other frameworks' trainers are not read here.


@register
class DoraFsdpPeftVersion(Rule):
    """PEF008 dora-fsdp-peft-version

    ## What it does
    Flags DoRA (`use_dora: true`) in a TRL config trained under FSDP1 (the config's own `fsdp`,
    or an accelerate launcher config with `distributed_type: FSDP` in the same run), where the
    PEFT in use is 0.9.x to 0.11.x (silent when unknown). TRL reads `use_dora` only from 0.16.0,
    which requires transformers 4.46.0, whose Trainer wraps the LoRA layers in their own FSDP
    units (from 4.39.0). Silent on one GPU (FSDP1 then keeps whole weights, NO_SHARD).

    ## Why is this bad?
    Under FSDP the Trainer wraps a LoRA model with PEFT's `fsdp_auto_wrap_policy`: every
    `lora_A` and `lora_B` is its own FSDP unit, whose full weight exists only inside that
    module's call. Before PEFT 0.12.0 DoRA computes its weight norm from `lora_B.weight @
    lora_A.weight`, outside those calls, where each rank holds only its flat shard: the first
    training step fails with shape errors (or, where two shards happen to have the same size,
    computes with shards). PEFT 0.12.0 moved DoRA into its own module and calls the LoRA
    layers "to make DoRA and QDoRA work with FSDP" (huggingface/peft#1806, #1737).

    ## Example
    `trl.yaml`:
        model_name_or_path: meta-llama/Meta-Llama-3-8B
        dataset_name: trl-lib/Capybara
        use_peft: true
        lora_target_modules: all-linear
        use_dora: true
    `accelerate.yaml`:
        distributed_type: FSDP
        num_processes: 2
        fsdp_config:
          fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
          fsdp_use_orig_params: true
    `trainlint.toml`:
        [[runs]]
        files = ["trl.yaml", "accelerate.yaml"]
    `requirements.txt`:
        peft==0.11.1
    Use instead PEFT 0.12.0 or later, in `requirements.txt`:
        peft==0.12.0

    ## Fix safety
    No fix: the pin is the author's; plain LoRA (`use_dora: false`) or one GPU are the other
    choices.

    ## References
    - peft src/peft/tuners/lora/layer.py LoraLayer._apply_dora (`lora_B.weight @ lora_A.weight`,
      v0.9.0 to v0.11.1); a0788a3f9 (#1806), first in v0.12.0 (`git tag --contains`):
      tuners/lora/dora.py DoraLinearLayer, `lora_B(lora_A(x_eye))`
    - peft src/peft/utils/other.py fsdp_auto_wrap_policy (lambda_policy_fn: leaf modules whose
      weight requires grad)
    - transformers src/transformers/trainer.py Trainer._fsdp_qlora_plugin_updates (4.39.0 to 5.0.0;
      integrations/fsdp.py from 5.5.0)
    - trl trl/trainer/model_config.py ModelConfig.use_dora (f074dcdc8, #2974, first in v0.16.0;
      setup.py transformers>=4.46.0)
    - huggingface/peft#1737, #1806; hiyouga/LlamaFactory#3550
    """

    code = "PEF008"
    name = "dora-fsdp-peft-version"
    severity = ERROR
    triggers = ("adapter.dora",)

    def check(self, run, context):
        dora = [config for config in run.configs if config.value("adapter.dora") is True
                and config.value("file.kind") == "trl"]
        if not dora or not any(config.value("parallel.fsdp") is True for config in run.configs):
            return
        if fsdp_version(run) != 1 or world_size(run, context) == 1:
            return  # one process: FSDP1 falls back to NO_SHARD and keeps whole weights
        for config in dora:
            old = context.version_before("peft", _DORA_THROUGH_CALL, config, self.code)
            if old is None or context.version_before("peft", _DORA_FIRST, config, self.code) is not None:
                continue
            yield self.finding(
                config, config.span("adapter.dora"),
                f"DoRA under FSDP with PEFT {old[0]} ({old[1]}): the Trainer wraps each lora_A/lora_B in its own "
                "FSDP unit, and before 0.12.0 DoRA reads lora_B.weight @ lora_A.weight outside them, where each "
                f"rank holds a flat shard: the first step fails; upgrade PEFT to {_DORA_THROUGH_CALL} or turn DoRA off")


@register
class AdaloraWithoutAllocation(Rule):
    """PEF012 adalora-without-update-and-allocate

    ## What it does
    Flags an AdaLoRA adapter (Ludwig `adapter: {type: adalora}`, a script's `AdaLoraConfig`
    under the stock Trainer) whose training loop never calls PEFT's `update_and_allocate`.

    ## Why is this bad?
    AdaLoRA's rank budget (`init_r` down to `target_r` between `tinit` and `total_step -
    tfinal`, every `delta_t` steps) runs only in `AdaLoraModel.update_and_allocate(global_step)`,
    which PEFT documents as a call the training loop makes after each optimizer step; PEFT
    never makes it itself, and neither does Ludwig's trainer (nor transformers' Trainer,
    huggingface/peft#1327). Without it `rank_pattern` stays empty and every layer keeps
    `init_r`: the run trains a plain fixed-rank LoRA while the config promises adaptive ranks
    averaging `target_r`. Nothing fails or warns.

    ## Example
    `ludwig.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        input_features: [{name: instruction, type: text}]
        output_features: [{name: output, type: text}]
        adapter:
          type: adalora
          init_r: 24
          target_r: 4
    Use instead:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        input_features: [{name: instruction, type: text}]
        output_features: [{name: output, type: text}]
        adapter:
          type: lora
          r: 8

    ## Fix safety
    No fix: a LoRA of a chosen rank, or a training loop that calls `update_and_allocate`, is
    the author's choice.

    ## References
    - peft src/peft/tuners/adalora/model.py AdaLoraModel.update_and_allocate (its docstring: call
      it after `optimizer.step()` in the training loop), tuners/adalora/layer.py RankAllocator;
      no caller in src/ (mirror 5d602fdbf)
    - ludwig ludwig/trainers/trainer.py Trainer.train; ludwig/schema/llms/peft.py AdaloraConfig
      (`git log -S update_and_allocate` finds no commit in ludwig-ai/ludwig, mirror 5d19f3e63)
    - huggingface/peft#1327, #432, #1801; transformers trainer.py and trl (no caller in either)
    """

    code = "PEF012"
    name = "adalora-without-update-and-allocate"
    severity = WARNING
    triggers = ("adapter.allocates_ranks",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("adapter.kind") == "adalora" and config.value("adapter.allocates_ranks") is False:
                yield self.finding(
                    config, config.span("adapter.allocates_ranks"),
                    "AdaLoRA adapter, but this framework's training loop never calls update_and_allocate: the rank "
                    "budget (init_r -> target_r) is never applied and every layer trains at init_r, a plain fixed-rank LoRA")


# AdaLoraConfig.__post_init__ (9c25d9411, #2341): total_step None refused (PEF002 for adapter_config.json).
_TOTAL_STEP_REQUIRED = "0.15.0"


@register
class AdaloraTotalStepUnset(Rule):
    """PEF013 adalora-total-step-unset

    ## What it does
    Flags an AdaLoRA adapter that a framework builds with `total_step` None (Ludwig before
    0.11.0 passes its schema default, None, where `adapter.total_step` is not written), where
    the PEFT in use is 0.15.0 or later (a pin near the file or the installed package; silent
    when either version is unknown).

    ## Why is this bad?
    PEFT 0.15.0 made `total_step` required: `AdaLoraConfig.__post_init__` raises ValueError
    "AdaLoRA does not work when `total_step` is None, supply a value > 0." when the adapter is
    built, after the base model has loaded. Ludwig 0.10 requires `peft>=0.10.0`, so a fresh
    install takes a PEFT that refuses every AdaLoRA config without `total_step`; Ludwig 0.11.0
    defaults it to 10000.

    ## Example
    `ludwig.yaml`:
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        input_features: [{name: instruction, type: text}]
        output_features: [{name: output, type: text}]
        adapter:
          type: adalora
    `requirements.txt`:
        ludwig==0.10.4
        peft==0.15.2
    Use instead a written `total_step` (the run's optimizer steps):
        model_type: llm
        base_model: meta-llama/Llama-2-7b-hf
        input_features: [{name: instruction, type: text}]
        output_features: [{name: output, type: text}]
        adapter:
          type: adalora
          total_step: 2000

    ## Fix safety
    No fix: the step count is the run's.

    ## References
    - peft src/peft/tuners/adalora/config.py AdaLoraConfig.__post_init__: 9c25d9411 (#2341, v0.15.0)
    - ludwig ludwig/schema/llms/peft.py AdaloraConfig.total_step (default None until 86a97e521,
      "Modernize Ludwig to v0.11.0", #4059) and to_config; requirements_llm.txt `peft>=0.10.0`
      (v0.10.4)
    - huggingface/peft#2337, #2341
    """

    code = "PEF013"
    name = "adalora-total-step-unset"
    severity = ERROR
    triggers = ("adapter.adalora_total_step",)

    def check(self, run, context):
        for config in run.configs:
            if (config.value("adapter.kind") != "adalora" or config.value("file.kind") == "peft"
                    or config.get("adapter.adalora_total_step") is None
                    or config.value("adapter.adalora_total_step") is not None):
                continue  # saved adapter_config.json files are PEF002's
            version = config.version("peft")
            if version is None:
                context.notes.append(f"{config.path}: {self.code} skipped: the peft version is unknown")
                continue
            if context.version_before("peft", _TOTAL_STEP_REQUIRED, config, self.code) is not None:
                continue
            yield self.finding(
                config, config.span("adapter.adalora_total_step") or config.file_span,
                f"AdaLoRA adapter built with total_step None on PEFT {version[0]} ({version[1]}): AdaLoraConfig "
                "raises \"AdaLoRA does not work when `total_step` is None, supply a value > 0.\" when the adapter "
                f"is built (PEFT {_TOTAL_STEP_REQUIRED} and later)")

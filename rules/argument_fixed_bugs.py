"""LLaMA-Factory (llmtuner) behaviours of old releases that a later release fixed, rows of
rules/argument_table.py's form read by TRN021: each holds only on a pinned release between the
commit that brought it and the release that fixed it (`until`), and is silent where the version is
unknown (later releases are fine). Also the FinetuningArguments check a second audit of v0.9.5's
hparams/*.py raises found missing (the others are rows already, another rule's, or need the model
files, the device, the environment or the output folder). Read in hiyouga/LLaMA-Factory with `git
log -S`, `git show <tag>:<file>` and `git tag --contains`; `llmtuner` pins count as LLaMA-Factory's
(linter/versions.py).
"""

from __future__ import annotations

from .argument_table import TRAIN, Row, _true

_BITS = ("quantization.ref_model_bits", "quantization.reward_model_bits")
_BIT_KEYS = ("ref_model_quantization_bit", "reward_model_quantization_bit")


def _unsloth_drops_additional_target(facts) -> bool:
    """A new LoRA adapter trained through Unsloth with additional_target (modules_to_save) written:
    init_adapter's `is_trainable and adapter_to_resume is None` branch (an adapter_name_or_path is
    resumed instead, unless create_new_adapter)."""
    return (_true(facts, "training.enabled") and facts.get("adapter.kind") == "lora" and _true(facts, "model.unsloth")
            and bool(facts.get("adapter.modules_to_save"))
            and (facts.get("adapter.paths") is None or _true(facts, "adapter.create_new")))


def _dpo_reference_zero12(facts) -> bool:
    """DPO training of the whole model (finetuning_type full or freeze: the policy is no PeftModel, so
    the workflow passes ref_model=deepcopy(model)) with a linked DeepSpeed config at ZeRO stage 1 or 2
    and no optimizer block (DeepSpeed reads `optimizer.type`)."""
    if facts.get("training.stage") != "dpo" or not _true(facts, "training.enabled") or facts.get("adapter.kind"):
        return False
    linked = facts.deepspeed_configs
    return bool(linked) and all(config.value("parallel.zero_stage") in (1, 2) and config.value("optimizer.name") is None
                                for config in linked)


FIXED_ROWS = (
    # always: ref_model_quantization_bit and reward_model_quantization_bit came with the assert (7a3a0144a
    # "support full-parameter PPO", v0.3.0), the same at v0.5.0, v0.7.1, v0.8.3, v0.9.0 and v0.9.5 (HQQ/EETQ
    # widened quantization_bit only, 8aaf1185a). Every command parses FinetuningArguments.
    *(Row("We only accept 4-bit or 8-bit quantization.", "hparams/finetuning_args.py FinetuningArguments.__post_init__",
          "0.3.0", "7a3a0144a", key, lambda f, key=key: f.get(key) not in (None, 4, 8),
          lambda f, key=key, name=name: (f"{name} {f.get(key)}: the model loads in 4 or 8 bits (bitsandbytes) or "
                                         "unquantized (every release with the key has the check)"), always=True)
      for key, name in zip(_BITS, _BIT_KEYS)),
    # model/adapter.py init_adapter: the use_unsloth branch (6faf9c35a "support unsloth", first in v0.5.0) calls
    # Unsloth's get_peft_model with r, target_modules, lora_alpha, lora_dropout (use_rslora from 0.5.3) only,
    # while LoraConfig gets modules_to_save=finetuning_args.additional_target. 95a4589bb / e25ddef08 (#3201,
    # fixes #3200) passed it, but the release commit 7468f2535 ("release v0.6.2") reverted adapter.py, so
    # v0.6.2 still drops it (git show v0.6.2:src/llmtuner/model/adapter.py); efa808069 ("support unsloth
    # 2024.4", first in v0.6.3) puts modules_to_save into the shared peft_kwargs.
    Row("a use_unsloth branch that calls Unsloth's get_peft_model without modules_to_save (additional_target)",
        "src/llmtuner/model/adapter.py init_adapter", "0.5.0", "6faf9c35a; passed to Unsloth from efa808069",
        ("adapter.modules_to_save", "model.unsloth"), _unsloth_drops_additional_target,
        lambda f: (f"additional_target ({', '.join(f.get('adapter.modules_to_save'))}) is never made trainable: only "
                   "the LoRA layers train and the saved adapter holds no copy of those modules, with no error or "
                   "warning (hiyouga/LLaMA-Factory#3200); use LLaMA-Factory 0.6.3 or later, or drop use_unsloth"),
        command=TRAIN, until="0.6.3", ignored=True),
    # tuner/dpo/trainer.py CustomDPOTrainer.__init__ (e5b72c6a7, first in v0.1.8) prepares the reference model with
    # self.accelerator._prepare_deepspeed(self.ref_model): deepspeed.initialize with the training DeepSpeed config
    # and no optimizer, so DeepSpeed's engine (runtime/engine.py _configure_zero_optimizer, the same from
    # v0.5.8 to v0.19.5) wraps None in DummyOptim and asserts for ZeRO stage 1 and 2 unless the config has an
    # optimizer block (stage 3 runs an inference engine). 67a46e553 and 4e40f5b62 (first in v0.2.1) prepare it
    # with a copy of the config set to stage 0 (hiyouga/LLaMA-Factory#1243, #971, #799).
    Row("AssertionError: zero stage <n> requires an optimizer", "src/llmtuner/tuner/dpo/trainer.py "
        "CustomDPOTrainer.__init__ (accelerator._prepare_deepspeed of the reference model)", "0.1.8",
        "e5b72c6a7; fixed by 67a46e553, 4e40f5b62", ("link:deepspeed", "training.stage"), _dpo_reference_zero12,
        lambda f: ("the frozen reference model (a copy of the policy, finetuning_type full or freeze) is passed to "
                   f"deepspeed.initialize with the training ZeRO-{f.deepspeed_configs[0].value('parallel.zero_stage')} "
                   "config and no optimizer, which DeepSpeed refuses when the DPO trainer is built, after the model "
                   "loads; add an \"optimizer\" block to the DeepSpeed config, or use LLaMA-Factory 0.2.1 or later"),
        command=TRAIN, until="0.2.1"),
)

"""Launch-time refusals of Axolotl's config validation, fifth audit (read by rules/refusal_table.py,
which appends them to its REFUSALS; the conditions as there: `Set` is Python truthiness).

Read in axolotl-ai-cloud/axolotl at 067b021c8 (v0.18.0+9; utils/schemas/ unchanged since v0.18.0):
the raises of utils/schemas/*.py and utils/config/__init__.py that the fourth audit left without a
row although the file alone decides them. Each row's first release from `git log -S '<message>'` and
`git tag --contains`, its condition read at that tag and at later ones.

The torch floors (ADOPT, flex attention, QAT, FSDP2) fire where the torch in use is known (a pin
near the config, or the installed package). Still left out: checks on the GPU or its count (check_fp8:
PRE005 under --gpu; sage / fp8 attention compute capability, check_rl_config_gradient_checkpointing's
capabilities.n_gpu, GRPO's world_size test; the table's conditions read the config only), on
installed packages (mistral-common, ring-flash-attn, fp8 libraries, ROCm, Ascend NPU), `merge_lora`
with qlora in 4/8 bit (`axolotl merge-lora` turns both off before validating), and raises the schema
rules already report (SCH002: image_resize_algorithm, torchao dtypes, eval_causal_lm_metrics not a
list, rope_scaling / s2_attention / flash_attn_rms_norm / unsloth_* keys that raise, and an
`adapter` other than lora / qlora / llama-adapter: LoraConfig.validate_adapter, b7ec06b8a, #3647, v0.17.0;
load_adapter's NotImplementedError in every earlier release).
"""

from __future__ import annotations

from .refusal_conditions import AnyOf, Contains, Eq, In, NotIn, PartOf, Refusal, Set, Since, TorchBelow, Unset

_V = "utils/schemas/validation.py"
_C = "utils/schemas/config.py"
_SFT = In("training.trainer", None, "sft")  # no `rl`: every datasets[] entry is built as SFTDataset
_BETTERTRANSFORMER = Eq("attention.bettertransformer", True)  # `cfg.flash_optimum is True` / the bool field
_MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::matmul", "aten::bmm")
_MESSAGE_KEY = "message_property_mappings (b194e17c2, #2260, v0.7.0)"

FIFTH_ROWS = (
    # check_better_transformers: `if cfg.fp16 or cfg.bf16` under `flash_optimum is True` since 1edc30c78 (v0.3.0,
    # with the key; utils/config.py validate_config, an after-validator of the schema from cc3cebfa7, #1239).
    # From v0.5.0 the schema's bf16 defaults to "auto" (cc3cebfa7), truthy when the validator runs (resolve_dtype
    # turns it into a bool only in normalize_config, after the validation): a file without bf16 is refused too.
    Refusal((_BETTERTRANSFORMER, AnyOf(Set("precision.amp_written"), Since("0.5.0", Set("precision.bf16_unwritten")))),
            "AMP is not supported with BetterTransformer", f"{_V} check_better_transformers", "0.3.0", "1edc30c78",
            unpinned="flash_optimum (1edc30c78, v0.3.0)",
            note="fp16 or bf16 on (from 0.5.0 a left-out bf16 too: the schema's default auto counts); write bf16: false"),
    # check_relora from 7b68dfafd (#1680, v0.12.0; the `relora` switch): pinned only, as the other relora rows.
    Refusal((Set("training.relora"), Set("scheduler.jagged_restart_steps"), In("adapter.kind", "lora", "qlora"),
             Unset("parallel.fsdp_options"), Unset("parallel.fsdp_config_given"), Unset("parallel.deepspeed"),
             Eq("scheduler.type", "one_cycle")),
            "ReLoRA is not compatible with the one_cycle scheduler", f"{_V} check_relora", "0.12.0",
            "7b68dfafd (#1680)"),
    # check_selective_checkpointing (f51fa20a9, #3786, v0.18.0, with the key), after its other rows: with any
    # adapter a `save` entry other than attention that is part of a matmul op name (`spec in op`)
    Refusal((Set("memory.selective_checkpointing"), Set("memory.gradient_checkpointing"),
             Unset("memory.checkpointing_reentrant"),
             AnyOf(Unset("memory.activation_offloading_written"),
                   Eq("memory.activation_offloading_written", "hidden_states")),
             Set("adapter.kind"), PartOf("memory.selective_checkpointing_saves", _MATMUL_OPS, skip="attention")),
            "selective_checkpointing.save entries <entries> match matmul ops, which cannot be saved when training "
            "with a LoRA/QLoRA adapter: PEFT mutates the base linear output in-place to add the adapter delta, which "
            "invalidates the cached tensor. Use save: [attention] or train without an adapter.",
            f"{_V} check_selective_checkpointing", "0.18.0", "f51fa20a9 (#3786)",
            unpinned="selective_checkpointing (f51fa20a9)"),
    # SFTDataset.handle_legacy_message_fields -> utils/schemas/utils.py handle_legacy_message_fields_logic
    # (b194e17c2, #2260, v0.7.0, with message_property_mappings): role first, then content
    Refusal((_SFT, Eq("data.message_field_conflict", "role")),
            "Conflicting message role fields: message_field_role='<role>' conflicts with "
            "message_property_mappings.role='<mapped>'", "utils/schemas/datasets.py SFTDataset.handle_legacy_message_fields",
            "0.7.0", "b194e17c2 (#2260)", unpinned=_MESSAGE_KEY),
    Refusal((_SFT, Eq("data.message_field_conflict", "content")),
            "Conflicting message content fields: message_field_content='<content>' conflicts with "
            "message_property_mappings.content='<mapped>'",
            "utils/schemas/datasets.py SFTDataset.handle_legacy_message_fields", "0.7.0", "b194e17c2 (#2260)",
            unpinned=_MESSAGE_KEY),
    # The torch floors of utils/schemas/config.py, read from env_capabilities.torch_version (the installed
    # torch; here a torch pinned near the config or installed), each threshold unchanged since its release.
    Refusal((Contains("optimizer.name", "adopt"), TorchBelow("2.5.1")),
            "ADOPT optimizer is incompatible with torch version < 2.5.1", f"{_C} check_adopt_torch_version", "0.6.0",
            "d5f58b650"),
    # v0.8.1 to v0.16.x test the legacy `flex_attention` flag; from e4032fc90 (#3602, v0.17.0) the normalised
    # attn_implementation (the flag is mapped onto it)
    Refusal((AnyOf(Set("attention.flex_flag"), Since("0.17.0", Eq("attention.implementation_written", "flex_attention"))),
             TorchBelow("2.6.0")),
            "Flex attention is not supported on torch version < 2.6.0", f"{_C} check_flex_torch_version", "0.8.1",
            "a8f38c367 (#2363)"),
    # check_qat_config, after its PEFT / load_in_* rows (0.10.0-0.11.x first refuse FSDP2 + QAT below torch 2.7)
    Refusal((Set("quantization.qat"), Unset("adapter.peft_block"), NotIn("quantization.bits", 4, 8),
             TorchBelow("2.6.0")),
            "QAT is not supported on torch version < 2.6.0", f"{_C} check_qat_config", "0.10.0", "5fca21410 (#2590)"),
    # check_fsdp_torch_version (d6e4a611e, #2760, v0.12.0): fsdp_config given and the top-level fsdp_version 2
    Refusal((Set("parallel.fsdp_config_given"), In("parallel.fsdp_version_written", 2, "2"), TorchBelow("2.7.0")),
            "FSDP2 is not supported on torch version < 2.7.0", f"{_C} check_fsdp_torch_version", "0.12.0",
            "d6e4a611e (#2760)"),
)

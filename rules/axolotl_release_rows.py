"""The Axolotl rows of the release-bug table (rules/release_bugs.py): how its data loaders treat
long samples and user-defined dataset types, each bounded in axolotl-ai-cloud/axolotl's history
(`git tag --contains` of the commit that brought the bug and of the fix)."""

from __future__ import annotations

from .release_table import Range, Row

MAPPING_TYPE = "<mapping>"  # data.dataset_types' entry for a `type:` mapping (linter/checked_keys.py)

# utils/data/rl.py _drop_long_sequences drops the long samples of these kinds (v0.12.2-v0.16.1:
# DPO, IPO, ORPO, SimPO by prompt + chosen / rejected, KTO by prompt + completion; GRPO, GDPO and
# EBFT keep every sample) whenever skip_prepare_dataset is off.
_DROPPED_BY_RL_LOADER = ("dpo", "ipo", "orpo", "simpo", "kto")


def _axolotl(f) -> bool:
    return f("file.kind") == "axolotl"


def _sft_truncate(f) -> bool:
    """An Axolotl SFT run (no rl, no reward model) preparing its `datasets` (not streamed, not a
    pretraining_dataset, skip_prepare_dataset off) with excess_length_strategy truncate."""
    return (_axolotl(f) and f("training.trainer") == "sft" and f("data.excess_length_strategy") == "truncate"
            and f("data.dataset_types") is not None and f("data.skip_prepare") is not True
            and not f("data.pretraining") and not f("data.streaming"))


def _rl_excess(strategy: str):
    def applies(f) -> bool:
        return (_axolotl(f) and f("training.trainer") in _DROPPED_BY_RL_LOADER
                and f("data.excess_length_strategy") == strategy and f("data.skip_prepare") is not True)
    return applies


def _types(f) -> list:
    return [kind for kind in f("data.dataset_types") or () if kind]


def _user_defined_name(kinds: tuple[str, ...]):
    """rl in `kinds` with a datasets[].type string naming the user-defined strategy (user_defined,
    user_defined.default): prompt_strategies/base.py load imports dpo/ or kto/user_defined.py, whose
    default() reads its fields from the type itself and raises unless it is a mapping."""
    def applies(f) -> bool:
        return (_axolotl(f) and f("training.trainer") in kinds
                and any(kind.split(".")[0] == "user_defined" for kind in _types(f)))
    return applies


def _mapping(kind: str):
    """rl `kind` with a user-defined `type:` mapping among the datasets."""
    def applies(f) -> bool:
        return _axolotl(f) and f("training.trainer") == kind and MAPPING_TYPE in _types(f)
    return applies



def _resumes_lora(f) -> bool:
    """adapter lora / qlora with lora_model_dir: utils/models.py load_adapter -> load_lora loads the
    saved adapter with PeftModel.from_pretrained instead of building a fresh one (get_peft_model)."""
    return (_axolotl(f) and f("adapter.kind") in ("lora", "qlora") and isinstance(f("adapter.pretrained_weights"), str)
            and bool(f("adapter.pretrained_weights").strip()))


def _zero(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0


# transformers optimization.py get_scheduler builds these without num_warmup_steps (no warmup at all)
_NO_WARMUP_SCHEDULES = ("constant", "reduce_lr_on_plateau")


def _zero_warmup(f) -> bool:
    """warmup_steps 0 or warmup_ratio 0 written, the other unset or 0: no warmup meant. Not with a
    schedule that never warms up (lr_scheduler constant / reduce_lr_on_plateau)."""
    steps, ratio = f("scheduler.warmup_steps"), f("scheduler.warmup_ratio")
    return (_axolotl(f) and (_zero(steps) or _zero(ratio)) and (steps is None or _zero(steps))
            and (ratio is None or _zero(ratio)) and f("scheduler.type") not in _NO_WARMUP_SCHEDULES)


_RL_LOADER = ("prompt_strategies/base.py load swallows the strategy's error and returns None, so utils/data/rl.py "
              "fails on mapping the dataset with \"TypeError: None is not a callable object\" (from 0.18.0: "
              "\"Failed to load dataset transform function\")")
_NOT_MAPPING = ("the user-defined strategy reads field_prompt, completion_format ... from the `type:` mapping itself "
                "and raises \"User-defined dataset type must be a dictionary\" for a string type; "
                f"{_RL_LOADER}, so the run stops while preparing the data. Write the fields under `type:` as a "
                "mapping (for KTO on Axolotl 0.18.0 or later)")
_NAME_REF = "axolotl-ai-cloud/axolotl#2757; the mapping form is documented from 0.18.0 (docs/rlhf.qmd, #3730)"

AXOLOTL_ROWS = (
    # utils/data/utils.py handle_long_seq_in_dataset runs truncate_long_seq through dataset.filter, which keeps
    # the boolean and discards the truncated columns (0eef385b1, #3068, v0.12.2); 2b6f4a6c9 (#3401, v0.15.0)
    # maps the truncation. With sample_packing the multipack sampler bins an over-long sample alone.
    Row("TRN074", (Range("axolotl", "0.12.2", "0.15.0"),), _sft_truncate, "data.excess_length_strategy",
        "excess_length_strategy truncate",
        "the truncation runs as a dataset filter that keeps each long sample but throws its truncated tokens away, "
        "so every sample longer than sequence_len reaches the trainer at full length (longer batches, memory "
        "spikes, and training on lengths the config rules out), silently",
        "axolotl-ai-cloud/axolotl#3401; fixed in 0.15.0"),
    # utils/data/rl.py _load_split filters every preference dataset with _drop_long_sequences whatever
    # excess_length_strategy says (v0.12.2, where the option came, to v0.16.1; `raise` is accepted from
    # 92ee4256f, #3321, v0.13.1); 63a58cfec (#3578, v0.17.0) honours truncate and raise.
    Row("TRN074", (Range("axolotl", "0.12.2", "0.17.0"),), _rl_excess("truncate"), "data.excess_length_strategy",
        "excess_length_strategy truncate with rl: {training.trainer}",
        "the RL data loader ignores the option and drops every sample whose prompt plus response is longer than "
        "sequence_len, so the long pairs meant to be kept (truncated) vanish from training, silently",
        "axolotl-ai-cloud/axolotl#3547; fixed in 0.17.0 (#3578)"),
    Row("TRN074", (Range("axolotl", "0.13.1", "0.17.0"),), _rl_excess("raise"), "data.excess_length_strategy",
        "excess_length_strategy raise with rl: {training.trainer}",
        "the RL data loader ignores the option and drops every sample whose prompt plus response is longer than "
        "sequence_len instead of stopping, so the long samples vanish from training, silently",
        "axolotl-ai-cloud/axolotl#3547; fixed in 0.17.0 (#3578)"),
    # prompt_strategies/{dpo,kto}/user_defined.py default(): `if not isinstance(ds_cfg, dict): raise` since
    # KTO support (22ae21a6c, #1640, v0.5.0, with map_dataset's inspect.signature); still at v0.18.0.
    # rl: kto and orpo came in v0.5.0 (every release fails); DPO in v0.4.0 mapped a None transform as identity.
    Row("TRN073", (Range("axolotl", "0.5.0", None),), _user_defined_name(("kto", "orpo")),
        "data.dataset_types", "rl: {training.trainer} with a dataset of type user_defined (a string)",
        _NOT_MAPPING, _NAME_REF, unpinned=True),
    Row("TRN073", (Range("axolotl", "0.5.0", None),), _user_defined_name(("dpo", "ipo", "simpo")),
        "data.dataset_types", "rl: {training.trainer} with a dataset of type user_defined (a string)",
        _NOT_MAPPING, _NAME_REF),
    # prompt_strategies/orpo/ holds chat_template.py only (v0.5.0 to v0.18.0): no user_defined strategy.
    Row("TRN073", (Range("axolotl", "0.5.0", None),), _mapping("orpo"), "data.dataset_types",
        "rl: orpo with a user-defined dataset type (a `type:` mapping)",
        "utils/data/rl.py _load_split loads a `type:` mapping as user_defined.default, which Axolotl has no ORPO "
        f"strategy for (prompt_strategies/orpo/ has chat_template only): {_RL_LOADER}, so the run stops while "
        "preparing the data; use type: chat_template.argilla or preformatted prompt/chosen/rejected columns",
        "axolotl src/axolotl/prompt_strategies/orpo/", unpinned=True),
    # prompt_strategies/kto/user_defined.py (22ae21a6c, #1640, v0.5.0): completion_format given -> NameError
    # (chosen_format is set only without it); omitted -> "{completion}".format(chosen=...) KeyError; schemas/
    # datasets.py UserDefinedKTOType field_label typed bool. fa7a66502 (#3730, v0.18.0) fixes all three.
    Row("TRN073", (Range("axolotl", "0.5.0", "0.18.0"),), _mapping("kto"), "data.dataset_types",
        "rl: kto with a user-defined dataset type (a `type:` mapping)",
        "the KTO user-defined transform formats the completion under the wrong name (NameError on chosen_format "
        "when completion_format is given, KeyError 'completion' when it is not) and the schema types field_label "
        "as a bool, so the run stops before training on every documented form (only a completion column named "
        "`chosen` without completion_format gets through)",
        "axolotl-ai-cloud/axolotl#2757; fixed in 0.18.0 (#3730)"),
    # utils/models.py load_lora (v0.1.0, v0.2.0): PeftModel.from_pretrained(model, cfg.lora_model_dir,
    # device_map=...) without is_trainable, whose default False (PEFT from v0.3.0; Axolotl required PEFT's
    # main branch) loads the adapter for inference, frozen. 193c73bce (#159, 2023-06-08, first tagged v0.2.1)
    # passes is_trainable=True (`not inference` from v0.2.1).
    Row("TRN074", (Range("axolotl", None, "0.2.1"),), _resumes_lora, "adapter.pretrained_weights",
        "adapter {adapter.kind} with lora_model_dir (training on from a saved adapter)",
        "the saved adapter is loaded in inference mode with every parameter frozen, so the model has 0 trainable "
        "parameters: the run goes through its epochs with a flat loss and saves the starting adapter unchanged, "
        "silently",
        "axolotl-ai-cloud/axolotl#159; fixed in 0.2.1 (193c73bce)"),
    # core/builders/base.py _configure_warmup_and_logging (trainer_builder.py before the split) tests
    # `if self.cfg.warmup_steps:` / `elif self.cfg.warmup_ratio:` since 677885680 (#2133, 2025-05-30, first
    # tagged v0.10.0; v0.9.2 tested `is not None`), so 0 falls through to the default
    # min(int(0.03 * total_num_steps), 100) steps (warmup_ratio 0.03 where the total is unknown);
    # dd78f2e0c (#3254, 2025-11-10, first tagged v0.13.0) tests `is not None` again.
    Row("TRN074", (Range("axolotl", "0.10.0", "0.13.0"),), _zero_warmup, "scheduler.warmup_steps scheduler.warmup_ratio",
        "warmup_steps / warmup_ratio 0 (no warmup)",
        "Axolotl reads 0 as unset and applies its default warmup of 3% of the training steps (at most 100), so the "
        "learning rate ramps up from 0 although the config turns warmup off, silently",
        "axolotl-ai-cloud/axolotl#3254; fixed in 0.13.0 (dd78f2e0c)"),
)

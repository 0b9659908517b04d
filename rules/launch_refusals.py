"""Config combinations a framework's own validation refuses at launch, read from a table of its
checks (rules/refusal_table.py): the job is queued, starts, and stops before training."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register
from linter.versions import older_than

from .refusal_conditions import RowIndex
from .refusal_table import EARLIER_PLACES, REFUSALS

_INDEX = RowIndex(REFUSALS)  # the rows by the keys their conditions need set


def _where(row, pinned: str) -> str:
    """Where the check lives in the pinned release: the row's place (current layout), or the
    one function the package checked its config in before its schema."""
    if row.outside_validation:
        return row.where
    for bound, place in EARLIER_PLACES.get(row.package, ()):
        if older_than(pinned, bound):
            return place
    return row.where if row.until else f"{row.where} in the current layout"  # a dropped check names its last release


@register
class ConfigRefused(Rule):
    """TRN025 axolotl-config-refused

    ## What it does
    Flags a config that Axolotl's own config validation refuses, with Axolotl's message: one row
    per check in `rules/refusal_table.py` (the settings it tests, the message, the validator, the
    release and commit that added it, and the release that dropped it where one did). Among
    them: `early_stopping_patience` without integer `save_steps` and `eval_steps` (or
    `save_steps` not a multiple of `eval_steps`), `warmup_steps` with `warmup_ratio`, `eval_steps` with `evals_per_epoch` or a non-`steps`
    `eval_strategy`, `save_steps` with `saves_per_epoch`, `adapter: qlora` without
    `load_in_4bit`, `sample_packing` with `rl`, `kto` without `remove_unused_columns: false`,
    `pretraining_dataset` or `streaming` without `max_steps`, `deepspeed` with `fsdp`,
    `activation_offloading` without `gradient_checkpointing`, `test_datasets` with a non-zero
    `val_set_size`, and (v0.4.0-v0.8.1, checked at launch by check_model_config) a base model
    saved already quantized without `gptq: true` — any one before v0.5.0, one without
    `load_in_4bit` until v0.9.0. A row fires only where the Axolotl version pinned next to the config
    (requirements, pyproject or lock file) has the check. With no pin only the rows whose check
    came in the release that added the key it tests, and was never dropped, fire (every release
    that reads the key refuses it; older ones drop the key): `qat` with `load_in_8bit` /
    `load_in_4bit`, `deepcompile` without `deepspeed`, `activation_offloading` or
    `selective_checkpointing` without `gradient_checkpointing`, `torch_compile_options` without
    `torch_compile`, `peft_layers_pattern` without `peft_layers_to_transform`,
    `model_quantization_config` with `load_in_*bit`, `dpo_loss_type`/`dpo_loss_weights` off DPO,
    `optimizer: muon` with `deepspeed`, `streaming` with `val_set_size` or without `max_steps`,
    `rl: ebft` without an `ebft:` section,
    `lora_target_parameters` with `lora_dropout` (checked from v0.15.0; v0.12.0 to v0.14.x
    pass it to PEFT, whose ParamWrapper raises when the adapter is built), `chat_template: jinja`
    without `chat_template_jinja`, `tokenizer_use_mistral_common` with `added_tokens_overrides`,
    `special_tokens`, `tokens`, `chat_template` or `processor_kwargs`, `batch_flattening: true`
    without an attention backend or with `sample_packing`, `quantize_moe_experts` with
    `lora_target_linear`, without a LoRA adapter or without `load_in_*bit`, `fp32_norms`
    without FSDP2, `cpu_offload_pin_memory: false` off FSDP2 or without `offload_params`,
    `fp8_enable_fsdp_float8_all_gather` off FSDP2, `model_quantization_config: Mxfp4Config` with
    `cpu_ram_efficient_loading`, and `do_causal_lm_eval` with `eval_sample_packing`; from the fourth
    audit `optimizer: muon` with FSDP1 (any FSDP before v0.13.1), `q_galore_adamw8bit` with an
    adapter, DeepSpeed, FSDP1 or without `use_orig_params`, `scaling_softmax` without flex
    attention, `gemma4_hybrid_attn_impl` with another backend, `large_head_attention` outside
    auto/sdpa/triton_flash, `context_parallel_size` > 1 without flash attention, with packed
    micro-batches above 1, or with GRPO's Liger loss, `streaming` packing of several datasets,
    unknown `eval_causal_lm_metrics`, `rl: gdpo` with `sum_then_normalize`, `dpo_loss_weights`
    without `dpo_loss_type` or of another length, EBFT strided with `torch_compile` and
    checkpointing or with activation offloading under flex, QAT with a `peft:` block,
    `use_onebitllms` with LoRA, `selective_checkpointing` with reentrant checkpointing or another
    offloader, Inductor options outside Axolotl's allowlist; from the fifth audit `flash_optimum`
    (BetterTransformer) with fp16 or bf16 on, `selective_checkpointing.save` entries naming matmul
    ops with an adapter, a dataset's legacy `message_field_role` / `message_field_content` unequal
    to its `message_property_mappings` entry; the others stay silent. Pinned only: `attn_implementation` beside a legacy
    attention flag or as a short alias (flash, flex, sdp; v0.17.0), FSDP2 (`fsdp_version: 2`)
    with load_in_*bit for DPO/KTO/ORPO/IPO (v0.12.0), two cross-entropy replacements
    (cut/chunked/liger; v0.13.1), `relora` without `jagged_restart_steps` (v0.12.0), a
    `lora_target_modules` entry that is no regular expression, such as `*_proj` (v0.16.0), a
    dataset entry with `chat_template: jinja` and no `chat_template_jinja` of its own (v0.7.0),
    `beta` unequal to `trl.beta` (v0.8.0), qlora with `gptq`, an `attn_implementation` no backend
    has (v0.17.0), ReLoRA without an adapter or with FSDP or DeepSpeed (v0.12.0), a Nemotron-H
    base model checkpointed without packing (v0.16.0), `flash_optimum` with bf16 left out (its
    schema default auto, v0.5.0), ReLoRA with `lr_scheduler: one_cycle` (v0.12.0), and where the
    torch in use is known (pinned or installed) Axolotl's torch floors: an ADOPT optimizer below
    torch 2.5.1 (v0.6.0), flex attention below 2.6.0 (v0.8.1), QAT below 2.6.0 (v0.10.0), FSDP2
    below 2.7.0 (v0.12.0).

    ## Why is this bad?
    `axolotl train` / `axolotl preprocess` validate the YAML before anything else
    (cli/config.py load_cfg -> validate_config -> AxolotlInputConfig); a refused combination
    raises ValueError at launch, after the job waited for its GPUs (issue 16: launch-time
    refusals are among the most reported Axolotl failures).

    ## Example
    `axolotl.yaml`:
        base_model: NousResearch/Llama-2-7b-hf
        datasets:
          - path: mhenrichsen/alpaca_2k_test
            type: alpaca
        val_set_size: 0.05
        micro_batch_size: 2
        gradient_accumulation_steps: 4
        num_epochs: 3
        early_stopping_patience: 3
        eval_steps: 1.0
    `requirements.txt`:
        axolotl==0.3.0
    Use instead (integer steps, eval_steps dividing save_steps), in `axolotl.yaml`:
        base_model: NousResearch/Llama-2-7b-hf
        datasets:
          - path: mhenrichsen/alpaca_2k_test
            type: alpaca
        val_set_size: 0.05
        micro_batch_size: 2
        gradient_accumulation_steps: 4
        num_epochs: 3
        early_stopping_patience: 3
        eval_steps: 50
        save_steps: 100

    ## Fix safety
    No fix: which of the two settings the user meant is theirs to choose.

    ## References
    - axolotl src/axolotl/utils/schemas/validation.py (the validation mixins), utils/schemas/config.py
      (AxolotlInputConfig), utils/schemas/peft.py (LoraConfig.validate_qlora); before v0.5.0
      utils/config.py validate_config. Read at commit 067b021c8; each row names its validator,
      the first release with the check and the commit/PR that added it (`git log -S`), e.g.
      check_early_stopping: #537 (e30f1e3cf, v0.3.0); check_evals: #944 (v0.4.0), #1682 (v0.5.1);
      `eval_steps` with `val_set_size: 0` refused even beside `test_datasets` in v0.4.0 (#633,
      383f88d7a) until 8c2e05ade (#1245, first in v0.5.0) exempted test_datasets.
    - axolotl utils/models.py check_model_config ("model_config.quantization_config is set but `gptq`
      flag is not"): a581e9f8f (#913, v0.4.0), load_in_4bit exempt from 7830fe04b (#1767, v0.5.0),
      removed by e0420b352 (#2511, v0.9.0); run by utils/config.py normalize_config at launch
    - the keys' first commits (`git log -S` on src/, `git tag --contains`): qat 5fca21410 (v0.10.0),
      deepcompile cd079b553, activation_offloading 99187cd20, model_quantization_config ba3dba3e4,
      lora_target_parameters deac7b18a (v0.12.0), peft_layers_pattern e1915f562 (v0.5.0), muon
      ae6637415 (v0.8.0, with df119e372), dpo_loss_type 90090fa9e (v0.17.0), selective_checkpointing
      f51fa20a9 and torch_compile_options f3e434f74 (v0.18.0), top-level streaming 231a67e70
      (v0.13.0), rl: ebft with check_ebft_config_required c50c4acbf (#3527, v0.16.0); also
      check_deduplication_with_skip_prepare 474208b79 (#3427, v0.15.0) and pretrain_with_tps
      a24957fa0 (#2831, v0.11.0); the second audit's rows in rules/refusal_rows.py, each with its
      commit: check_chat_template_config bfc77b0f3 (#1970, v0.5.0; message 5e920c741, #3802,
      v0.18.0), check_mistral_common_incompatible_options eac4a61f5 (#2780, v0.10.0),
      normalize_attn_implementation e4032fc90 (#3602, v0.17.0), check_batch_flattening_fa bd2a594b8
      (#2167, v0.7.0), check_quantize_moe_experts 945c8aeb1 (#3439) / 6c8c73e5a (#3461, v0.15.0),
      check_fp32_norms b05ab9a07 (#3670, v0.17.0), check_fsdp2_base_model_quant_rl d6e4a611e
      (#2760, v0.12.0), check_cross_entropy_conflicts 372f664c6 (#3330, v0.13.1), check_relora
      7b68dfafd (#1680, v0.12.0), check_fsdp2_cpu_offload_pin_memory 850c1a5f8 (#3167, v0.13.0),
      check_fp8_config 208fb7b8e (#2926, v0.12.0), check_gpt_oss_fsdp_loading 9d5c95db6 (#3019,
      v0.12.0), check_lora_target_modules_regex 55a7950e3 (#3538, v0.16.0), check_causal_lm_evals
      5a5d47458 (#1274, v0.5.0); the fourth audit's rows in rules/refusal_rows_fourth.py, each
      with its commit (check_muon_deepspeed_fsdp bbd3486f5, #3264, v0.13.1; check_qgalore
      20f56fac1, #3654; check_scaling_softmax_requires_flex 258ce8d4f, #3338, and e4032fc90, #3602;
      SFTDataset.check_chat_template_config bfc77b0f3, #1970, reached from b194e17c2, #2260); the
      fifth audit's in rules/refusal_rows_fifth.py (check_better_transformers 1edc30c78, v0.3.0, bf16
      default "auto" cc3cebfa7, #1239; check_relora 7b68dfafd, #1680; check_selective_checkpointing
      f51fa20a9, #3786; handle_legacy_message_fields_logic b194e17c2, #2260; the torch floors
      check_adopt_torch_version d5f58b650, check_flex_torch_version a8f38c367, #2363, check_qat_config
      5fca21410, #2590, check_fsdp_torch_version d6e4a611e, #2760); peft src/peft/tuners/lora/layer.py ParamWrapper.__init__ ("does not work with
      lora_dropout != 0.", f3b97c370, #2638, v0.17.0)
    - axolotl-ai-cloud/axolotl#833 (early stopping with eval_steps 1.0), #1286 (test_datasets
      with early stopping), #28, #73, #1513
    """

    code = "TRN025"
    name = "axolotl-config-refused"
    severity = ERROR
    triggers = ("launch.validated_by",)

    def check(self, run, context):
        for config in run.configs:
            validator = config.value("launch.validated_by")
            if validator is None:
                continue
            refused = [row for row in _INDEX.candidates(config) if row.package == validator and row.holds(config)]
            if not refused:
                continue
            pinned = config.version(validator)
            if pinned is None:
                yield from self._unpinned(config, validator, refused, context)
                continue
            for row in refused:
                if row.before and older_than(pinned[0], row.since) and older_than(pinned[0], row.before[0]) is False:
                    yield self.finding(config, config.span(*reversed(row.keys)),
                                       f"{validator} {pinned[0]} ({pinned[1]}) fails on this config: {row.before[1]}; "
                                       f"from {row.since} the launch refuses it: \"{row.message}\" ({row.commit})")
                    continue
                if older_than(pinned[0], row.since) is not False:
                    continue  # before the check (or an unreadable version): the launch accepted it
                if row.until and older_than(pinned[0], row.until) is not True:
                    continue  # the check was dropped by then
                dropped = f", dropped in {row.until}" if row.until else ""
                yield self.finding(
                    config, config.span(*reversed(row.keys)),  # the last setting the check tests
                    f"{validator} {pinned[0]} ({pinned[1]}) refuses this config at launch: \"{row.message}\" "
                    f"({_where(row, pinned[0])}; from {row.since}{dropped}, {row.commit})"
                    + (f"; {row.note}" if row.note else ""),
                )

    def _unpinned(self, config, validator, refused, context):
        """Version unknown: the rows whose check came with the key it tests and stayed (every release that
        reads the key fails); the others are noted for --verbose."""
        for row in refused:
            if not row.unpinned or row.until:
                continue
            before = f"; {row.before[1]}" if row.before else ""
            yield self.finding(
                config, config.span(*reversed(row.keys)),
                f"every {validator} release that reads {row.unpinned} fails on this config: from {row.since} the "
                f"launch refuses it: \"{row.message}\" ({row.where}, {row.commit}){before}"
                + (f"; {row.note}" if row.note else ""))
        skipped = sum(1 for row in refused if not row.unpinned or row.until)
        if skipped:
            context.notes.append(f"{config.path}: {self.code} skipped: the {validator} version is unknown "
                                 f"(the file matches {skipped} of its launch checks)")

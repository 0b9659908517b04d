"""Argument combinations the trainer's own parser refuses at launch (rules/argument_table.py)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, kinds, register
from linter.versions import older_than

from .argument_adapters import ADAPTER_ROWS
from .argument_fixed_bugs import FIXED_ROWS
from .argument_table import EXPORT, INFER, TABLES, TRAIN
from .argument_workflows import WORKFLOW_ROWS, launched_as
from .facts import world_size


class _Facts:
    """What a row's condition reads: the config's IR values, and the run's DeepSpeed and GPUs."""

    __slots__ = ("config", "deepspeed", "deepspeed_configs", "zero3", "zero3_offload", "world", "val_size",
                 "not_lora", "full", "_checkpoint", "release", "_model_type", "gpus")

    def __init__(self, config, run, context, release=None):
        self.config = config
        self.release = release  # (version, where) of the package pinned near the config, or None
        self.deepspeed = any(link.kind == "deepspeed" for link in config.links)
        self.deepspeed_configs = [linked for linked in run.linked if linked.value("file.kind") == "deepspeed"] \
            if self.deepspeed else []
        self.zero3 = _zero3(config, run)
        self.zero3_offload = self.zero3 is True and any(
            linked.value("parallel.zero_stage") == 3 and (linked.value("parallel.offload_param") is True
                                                          or linked.value("parallel.offload_optimizer") is True)
            for linked in run.linked)
        self.world = world_size(run, context)
        self.gpus = context.world_size  # --world-size: the devices the job sees
        val_size = config.value("data.val_size")
        self.val_size = val_size if isinstance(val_size, (int, float)) and not isinstance(val_size, bool) else 0.0
        kind = config.value("adapter.kind")  # None: every weight of the trained slice trains (full, freeze)
        self.not_lora = kind != "lora"
        self.full = kind is None and config.get("adapter.trainable_layers") is None
        self._checkpoint: tuple | None = None
        self._model_type: tuple | None = None

    def get(self, key: str):
        return self.config.value(key)

    def prequantized(self) -> str | None:
        """The quantization method of a model_name_or_path saved already quantized (its
        config.json's quantization_config, or a -GPTQ/-AWQ/-bnb-4bit upload: linter.models), one
        that transformers keeps quantized on load, so the loaded model has `quantization_method`
        (transformers quantizers/base.py preprocess_model). FP8 and MXFP4 are left out: recent
        releases dequantize them (model_utils/quantization.py configure_quantization), which
        drops the attribute again (remove_quantization_config)."""
        if self._checkpoint is None:
            from linter.models import prequantized

            name = self.config.value("model.name")
            found = prequantized(name, self.config.path.parent) if isinstance(name, str) else None
            method = found[0].lower() if found is not None else None
            self._checkpoint = (method, found[1]) if method in _KEPT_QUANTIZED else (None, None)
        return self._checkpoint[0]

    def model_type(self) -> str | None:
        """The model_type of model_name_or_path (its config.json beside the config, or the shipped
        name table: linter.models); None where unknown."""
        if self._model_type is None:
            from linter.models import model_type_of

            name = self.config.value("model.name")
            found = model_type_of(name, self.config.path.parent) if isinstance(name, str) and name else None
            self._model_type = (found[0] if found is not None else None,)
        return self._model_type[0]

    def version(self, package: str) -> str | None:
        """The pinned (or installed) version of `package` for this file; None when unknown."""
        found = self.config.version(package)
        return found[0] if found is not None else None

    def one_plain_process(self) -> bool:
        """Does the launch run the trainer as one plain process, with no distributed launcher? A CLI
        that starts torchrun only on several visible devices (launch.distributed_when several_devices:
        not told to start it) on one device: the devices the launch commands make visible, else
        --world-size. False where unknown (a dev pin before 0.8.0: linter/launch_env.py)."""
        if self.get("launch.distributed_when") != "several_devices":
            return False
        if self.release is not None and "dev" in self.release[0] and older_than(self.release[0], "0.8.0") is not False:
            return False
        devices = self.get("launch.visible_devices")
        return (devices if devices is not None else self.gpus) == 1

    def saved_quantized(self) -> str:
        """Says which checkpoint is saved quantized and where that is read (after prequantized())."""
        if self.prequantized() is None:
            return ""
        return f"{self.get('model.name')} is saved {self._checkpoint[0]}-quantized ({self._checkpoint[1]})"


# Pre-quantized methods LLaMA-Factory loads as PTQ-quantized models (configure_quantization's
# GPTQ / AWQ / AQLM branches; a saved bitsandbytes quantization_config is passed through).
_KEPT_QUANTIZED = frozenset({"gptq", "awq", "aqlm", "bitsandbytes"})


def _builds_of(version: str, release: str) -> bool:
    """Is `version` a development build (or pre-release) leading to `release` (0.9.2.dev0 for 0.9.2)? Its
    commits span the change `release` made, so what it does is unknown."""
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(version)
    except InvalidVersion:
        return False
    return (parsed.is_prerelease or parsed.is_devrelease) and parsed.base_version == Version(release).base_version


def _zero3(config, run) -> bool | None:
    """Does the config's DeepSpeed config use ZeRO-3? None where it names one the linter did not read."""
    if not any(link.kind == "deepspeed" for link in config.links):
        return False
    stages = [linked.value("parallel.zero_stage") for linked in run.linked]
    if 3 in stages:
        return True
    return False if stages and None not in stages else None


def _where(config, keys):
    """The first of `keys` the file writes (a default points at the file's first line); `link:KIND`
    is where the file names its linked KIND file (its `deepspeed:` line)."""
    for key in keys:
        if key.startswith("link:"):
            link = next((link for link in config.links if link.kind == key[5:] and link.span is not None), None)
            if link is not None and link.span.path == config.path:
                return link.span
            continue
        found = config.get(key)
        if found is not None and found.span is not None and found.origin.default_source is None:
            return found.span
    return config.span(*(key for key in keys if not key.startswith("link:")))


def _command(config) -> str | None:
    """Which command reads the file: the llamafactory-cli command every launch command naming it
    runs; else train (it trains, evaluates or predicts), export (it names an export_dir), else a
    chat, api or webchat session (get_infer_args)."""
    launched = launched_as(config.value("launch.readers"))
    if launched is not None:
        return launched
    if any(config.value(key) is True for key in ("training.enabled", "training.do_eval", "training.do_predict")):
        return TRAIN
    return EXPORT if config.value("export.dir") is not None else INFER


@register
class ParserRefuses(Rule):
    """TRN021 parser-refuses

    ## What it does
    Flags an argument combination that the trainer's own argument parser refuses at launch.
    One table (rules/argument_table.py) holds every check of LLaMA-Factory's parser that the
    config file decides alone (plus a linked DeepSpeed config's ZeRO stage and the GPU count),
    each row with the parser's own message, the source function, and the release and commit
    that added it: `hparams/parser.py` get_train_args, get_infer_args (chat, api: the vLLM
    limits) and `_verify_model_args`, the `__post_init__` of DataArguments,
    FinetuningArguments, ProcessorArguments and ExportArguments, and `train/tuner.py`
    export_model. Streaming without `max_steps`, a fractional `val_size` with
    streaming, `val_size` beside `eval_dataset`, evaluation without an evaluation set, RM/PPO
    with `load_best_model_at_end`, a Freeze/Full PPO policy with a LoRA reward model,
    `pure_bf16` under ZeRO-3, a new adapter on a quantized model, quantizing an export that
    still merges an adapter, LoRA-only options without LoRA, and the rest. The checks LLaMA-Factory
    makes on the loaded model (merging adapters at export, PiSSA, several adapters) also count a
    `model_name_or_path` saved already quantized (GPTQ, AWQ, AQLM, bitsandbytes: its config.json's
    `quantization_config`, or a -GPTQ/-AWQ/-bnb-4bit upload), as the loaded model's
    `quantization_method` does.

    The same table form holds the checks made when training starts (rules/argument_workflows.py):
    the custom optimizers' refusals in `train/trainer_utils.py` (layer-wise GaLore or APOLLO
    with gradient accumulation, an `optim` GaLore or APOLLO has no class for, ratio-wise BAdam
    with a zero update ratio), the PPO trainer's (an evaluation set, `resume_from_checkpoint`),
    and `do_predict` on a stage whose workflow never predicts (pt, dpo, kto, ppo: nothing is
    written and nothing refuses it). The data loader's checks on the named datasets read their
    entries in the dataset registry the launch opens (`dataset_dir`/dataset_info.json, relative to
    the working directory: the config's folder or one above it in its checkout, where every
    registry found agrees; `dataset_dir: ONLINE` reads none): a ranked (preference) dataset for
    pt, sft, ppo or kto, or an unranked one for rm and dpo ("The dataset is not applicable in the
    current training stage.", from 0.6.2), and a `formatting` the release has no converter for
    (from 0.9.2: alpaca and sharegpt, openai from 0.9.4).

    The command that reads the file is the `llamafactory-cli` command the checkout's launch
    commands give it (train; chat, webchat, api and export parse with get_infer_args, which has
    no TrainingArguments; eval with get_eval_args), else guessed from the file. A training key
    (`do_train`, `learning_rate`, `output_dir`, ...) in a file a launch command gives to one of
    the other commands is refused ("Some keys are not used by the HfArgumentParser"). The
    per-model-type patches applied when a model loads for training are rows too: `shift_attn`
    (LongLoRA S^2-Attn, llama only in every release) and `enable_liger_kernel` (the model types
    of the pinned release; unpinned, types no release has) on another model type are dropped
    with a log line, and the run trains without them; `neat_packing` on a model type outside
    the block-diagonal attention list is a ValueError on a pinned 0.8.3 to 0.9.1 (the model type
    from a config.json beside the file, or the shipped name table; unknown: silent).

    The adapter checks made when the model loads (rules/argument_adapters.py, model/adapter.py
    _setup_lora_tuning) are rows too: several adapters under ZeRO-3, Unsloth or KTransformers,
    DoRA on a GPTQ/AWQ/AQLM checkpoint, and OFT with Unsloth or KTransformers.

    Behaviours of old releases that a later one fixed are rows too (rules/argument_fixed_bugs.py),
    pinned only: on 0.5.0 to 0.6.2 `use_unsloth` drops `additional_target` (Unsloth's
    get_peft_model gets no modules_to_save: those modules never train, silently), and on 0.1.8 to
    0.2.0 DPO with finetuning_type full or freeze and a ZeRO-1/2 DeepSpeed config without an
    `optimizer` block dies when the reference model is passed to deepspeed.initialize ("zero
    stage 2 requires an optimizer"). `ref_model_quantization_bit` / `reward_model_quantization_bit`
    other than 4 or 8 are refused in every release with the keys.

    Checks that later releases dropped (`predict_with_generate` while training, `pure_bf16`
    with bf16/fp16 before 0.8.3, a missing `template` before 0.9.2, ...) fire only on a pinned
    release that has them.

    A row whose hazard holds in every release (older releases fail later or misbehave, or do
    not know one of its keys) fires whatever LLaMA-Factory version is pinned; a row that only
    newer releases refuse fires only where the pinned release has the check (unknown: silent).
    Checks other rules own are not repeated: quantization without LoRA/OFT (QNT005),
    GaLore/APOLLO with DeepSpeed (TRN006), layer-wise GaLore/APOLLO on several GPUs (TRN017),
    `predict_with_generate` under ZeRO-3 (TRN018), Unsloth under ZeRO-3 (TRN010). Checks that
    need installed packages, the dataset, the model files, the device (PRE001 covers
    `pure_bf16` on a GPU without bf16) or environment variables the launch commands do not set
    (Megatron, Ray) are left out.

    The launcher's own decision is a row too: `llamafactory-cli train` starts torchrun only when
    its launch command sets FORCE_TORCHRUN or more than one device is visible (src/llamafactory/cli.py,
    from 0.8.0; linter/launch_env.py reads the command's environment), so a DeepSpeed config given to
    it with one visible device (the command's CUDA_VISIBLE_DEVICES, else `--world-size 1`) and no
    FORCE_TORCHRUN runs as one plain process: refused from 0.8.3 ("Please use `FORCE_TORCHRUN=1` to
    launch DeepSpeed training."), and under ZeRO-3 a crash at the first forward in every release
    before it. Rows that another package's pin decides (neat packing with transformers >= 4.53.0 on
    0.9.4) need both pins; a development build (0.9.3.dev0) of the release that added or dropped a
    check spans the change and stays silent.

    ## Why is this bad?
    The launch stops with a ValueError before anything trains; where the release is older than
    the check, the run fails later (at the first evaluation, after loading a large model) or
    silently does something else (interleave probabilities ignored under concat mixing).

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: Qwen/Qwen2.5-7B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: qwen
        streaming: true
        output_dir: out
        num_train_epochs: 3.0
    Use instead:
        model_name_or_path: Qwen/Qwen2.5-7B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: alpaca_en_demo
        template: qwen
        streaming: true
        output_dir: out
        max_steps: 3000

    ## Fix safety
    No fix: which side of each combination to drop is the author's choice.

    ## References
    - hiyouga/LLaMA-Factory (HEAD ff6d4d12): src/llamafactory/hparams/parser.py
      (get_train_args, get_infer_args, _verify_model_args), hparams/data_args.py,
      hparams/finetuning_args.py, hparams/model_args.py (ProcessorArguments, ExportArguments),
      train/tuner.py (export_model), model/adapter.py (init_adapter), train/trainer_utils.py
      (create_custom_optimizer), train/ppo/trainer.py, train/*/workflow.py; each row names
      the commit and first release of its message (`git log -S`), e.g. DeepSpeed without
      FORCE_TORCHRUN 46f0189e8 (0.8.3; the launcher's condition f45e81e18, 0.8.0), streaming `max_steps`
      43e83548b (0.1.4), `val_size` with `eval_dataset` 502555b65 (0.8.3), the evaluation set
      b0d49e137 (0.9.4), `pure_bf16` with ZeRO-3 bf99223a8 (0.8.3); which rows fire without a
      pin: bench/llamafactory_key_history.md (each row's keys' first release against its check's)
    - hiyouga/LLaMA-Factory#4557 (ZeRO-3 in one plain process: "'weight' must be 2-D"), #6581, #9175, #2176, #744, #3476, #1626, #5030, #2235, #4175,
      #5171 (merging into a GPTQ base), #4923 (PiSSA on an AWQ base), #5887 (layer-wise GaLore
      with gradient accumulation), #6321 (DPO with do_predict), #8301 / #6456 (a training config
      given to webchat / export), #3607 (shift_attn on Qwen1.5)
    - src/llamafactory/data/loader.py _get_merged_dataset (the ranking check, d764cd873 "support ORPO",
      0.6.2), data/parser.py get_dataset_list and DatasetAttr.join (dataset_dir, dataset_info.json,
      `ranking` default false, ONLINE from 7468f2535), data/converter.py get_dataset_converter
      (46203856f, #6901, 0.9.2; openai a22dab97f, #9112, 0.9.4); hiyouga/LLaMA-Factory#4717, #6189,
      #3297, #1829
    - src/llamafactory/cli.py and launcher.py (which command calls get_train_args,
      get_infer_args or get_eval_args; llamafactory-cli since ce8200ad9, 0.7.1),
      model/model_utils/longlora.py configure_longlora and extras/constants.py
      SUPPORTED_CLASS_FOR_S2ATTN (llama only since 20130b486), model/model_utils/liger_kernel.py
      apply_liger_kernel (its model types at each tag from 0.9.0, c62a6ca59),
      model/model_utils/packing.py configure_packing (SUPPORTED_CLASS_FOR_BLOCK_DIAG_ATTN,
      60558388e to d670d62a6), model/adapter.py _setup_lora_tuning (ZeRO-3 04ae80a52 0.5.0, Unsloth
      5420905a2 0.7.0, KTransformers 934b3084e 0.9.4 and 887ee2b12 0.9.5, DoRA on PTQ 46f99ff27 0.6.0,
      Unsloth OFT 003a2acb1 0.9.4)
    - src/llmtuner/model/adapter.py init_adapter (use_unsloth 6faf9c35a, 0.5.0; modules_to_save passed from
      efa808069, 0.6.3: the fix 95a4589bb was reverted by the release commit 7468f2535 of 0.6.2),
      hiyouga/LLaMA-Factory#3200; src/llmtuner/tuner/dpo/trainer.py (accelerator._prepare_deepspeed of the
      reference model, e5b72c6a7, 0.1.8; fixed by 67a46e553 and 4e40f5b62, 0.2.1) and DeepSpeed
      runtime/engine.py _configure_zero_optimizer ("zero stage {} requires an optimizer"),
      hiyouga/LLaMA-Factory#1243, #971, #799; hparams/finetuning_args.py (ref/reward_model_quantization_bit
      asserts, 7a3a0144a, 0.3.0)
    """

    code = "TRN021"
    name = "parser-refuses"
    severity = ERROR
    triggers = kinds(*TABLES)

    def check(self, run, context):
        for config in run.configs:
            table = TABLES.get(config.value("file.kind"))
            if table is None:
                continue
            package, rows = table
            copy = config.value("arguments.framework_copy")
            if copy is not None:
                # The repository's own (possibly modified) copy parses the file; which of a release's
                # checks it keeps is not known (one such copy builds an eval split from its own
                # train_size key, so "val_size" is never refused): silent, noted for --verbose.
                context.notes.append(f"{config.path}: {self.code} skipped: the file is read by the repository's "
                                     f"own copy of {package} ({copy}), whose checks may differ from any release's")
                continue
            rows = rows + WORKFLOW_ROWS + ADAPTER_ROWS + FIXED_ROWS if package == "llamafactory" else rows
            release = config.version(package)
            command = _command(config)
            facts = None
            for row in rows:
                if row.command != "any" and row.command != command:
                    continue
                newer = release is None or older_than(release[0], row.since) is not True
                if release is not None and not row.always and not newer:
                    continue
                if release is not None and row.until is not None and (
                        older_than(release[0], row.until) is not True or _builds_of(release[0], row.until)):
                    continue  # the check was dropped by this release (or by one of its development builds)
                facts = facts or _Facts(config, run, context, release)
                if not row.applies(facts):
                    continue
                if release is None and not row.always:
                    context.notes.append(f"{config.path}: {self.code} row \"{row.message}\" skipped: the {package} "
                                         f"version is unknown (the check exists from {row.since}"
                                         f"{f' until {row.until}' if row.until else ''})")
                    continue
                if row.ignored and row.until is not None:
                    when = (f"{package} {release[0]} ({release[1]}): {row.where} has {row.message} (from "
                            f"{row.since} until {row.until}, {row.commit})")
                elif row.ignored:
                    when = f"{row.where} has {row.message} (every release: {row.commit})"
                elif row.until is not None:
                    when = (f"{package} {release[0]} ({release[1]}) refuses it (\"{row.message}\", {row.where}, "
                            f"from {row.since} until {row.until}, {row.commit})")
                elif newer:
                    when = f"the launch refuses it (\"{row.message}\", {row.where}, since {row.since}, {row.commit})"
                else:
                    when = f"{package} {release[0]} ({release[1]}) does not check it yet ({row.since} refuses it)"
                damage = row.damage(facts) if callable(row.damage) else row.damage
                yield self.finding(config, _where(config, row.anchor), f"{when}: {damage}")

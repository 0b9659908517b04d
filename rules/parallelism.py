"""Data-parallel settings against the model's memory savers (issue 16 recall)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register

from linter.versions import older_than

from .facts import world_size


def _sharded(run) -> bool:
    """DeepSpeed or FSDP wraps the model instead of DDP: find_unused_parameters is not used."""
    return any(config.get("parallel.zero_stage") is not None or config.value("parallel.fsdp") is True
               or any(link.kind == "deepspeed" for link in config.links) for config in run.configs)


@register
class DdpFindUnusedWithCheckpointing(Rule):
    """TRN007 ddp-find-unused-with-checkpointing

    ## What it does
    Flags `ddp_find_unused_parameters: true` together with gradient checkpointing and
    `gradient_checkpointing_kwargs: {use_reentrant: true}` in a run on more than one GPU
    (`--world-size`, or the launcher config's `num_processes`) that neither DeepSpeed nor FSDP
    wraps. Silent when the number of GPUs is unknown.

    ## Why is this bad?
    Reentrant checkpointing runs the checkpointed layers' forward without autograd, so DDP's
    unused-parameter search marks their weights unused and ready; the recomputation in the
    backward pass then produces their gradients a second time, and DDP stops on the first
    backward: "Expected to mark a variable ready only once ... Parameter at index N has been
    marked as ready twice". The Trainer turns the search off by itself when checkpointing is on
    (`find_unused_parameters = not model.is_gradient_checkpointing`), but a written `true` wins.

    ## Example
    `trl.yaml`, on 2 GPUs:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        use_peft: true
        gradient_checkpointing: true
        gradient_checkpointing_kwargs:
          use_reentrant: true
        ddp_find_unused_parameters: true
    Use instead:
        model_name_or_path: meta-llama/Llama-2-7b-hf
        dataset_name: trl-lib/Capybara
        output_dir: out
        use_peft: true
        gradient_checkpointing: true
        gradient_checkpointing_kwargs:
          use_reentrant: true
        ddp_find_unused_parameters: false

    ## Fix safety
    No fix: `false` is right when every trainable parameter is used in each step, which only the
    author knows; `use_reentrant: false` is the other remedy.

    ## References
    - transformers/trainer.py _wrap_model (ddp_find_unused_parameters; unset: not
      is_gradient_checkpointing, PR #13961); modeling_utils.py gradient_checkpointing_enable
    - torch/nn/parallel/distributed.py (find_unused_parameters with reentrant checkpoint: "marked as ready twice")
    - huggingface/peft#313; huggingface/accelerate#2017; huggingface/transformers#23018
    """

    code = "TRN007"
    name = "ddp-find-unused-with-checkpointing"
    severity = ERROR
    triggers = ("parallel.ddp_find_unused",)

    def check(self, run, context):
        world = world_size(run, context)
        if world is None or world < 2 or _sharded(run):
            return
        for config in run.configs:
            find_unused = config.get("parallel.ddp_find_unused")
            if find_unused is None or find_unused.value is not True or config.value("training.enabled") is False:
                continue
            if (config.value("memory.gradient_checkpointing") is not True
                    or config.value("memory.checkpointing_reentrant") is not True):
                continue
            yield self.finding(
                config, find_unused.span,
                f"ddp_find_unused_parameters true with reentrant gradient checkpointing on {world} GPUs: DDP marks "
                "the checkpointed weights ready twice and stops at the first backward (\"Expected to mark a variable "
                "ready only once\"); set it to false, or use_reentrant to false",
            )


@register
class SequenceParallelWithoutGroupSampler(Rule):
    """TRN045 sequence-parallel-needs-group-sampler

    ## What it does
    Flags a config with sequence parallelism (`sequence_parallel_size` above 1) whose training
    dataloader's sampler deals samples over every rank (`DefaultSampler`, `InfiniteSampler`,
    `LengthGroupedSampler`) instead of over the data-parallel groups (`SequenceParallelSampler`).
    A sampler chosen by an expression (`SequenceParallelSampler if sequence_parallel_size > 1
    else DefaultSampler`, as the shipped configs write it) or a class of the author's own is left
    alone.

    ## Why is this bad?
    Sequence parallelism splits each sequence over a group of GPUs, which must all hold the same
    sample: the attention's all-to-all exchanges the pieces. A sampler that shards by global
    rank gives each GPU of the group a different sample, of a different length, so the
    collectives wait forever (InternLM/xtuner#818: the run hangs at the first step) or index out
    of range (#997). The sampler is built as written; nothing replaces it.

    ## Example
    `train.py`:
        from mmengine.dataset import DefaultSampler
        from xtuner.model import SupervisedFinetune
        sequence_parallel_size = 4
        model = dict(type=SupervisedFinetune)
        train_dataloader = dict(batch_size=1, sampler=dict(type=DefaultSampler, shuffle=True))
    Use instead:
        from xtuner.model import SupervisedFinetune
        from xtuner.parallel.sequence import SequenceParallelSampler
        sequence_parallel_size = 4
        model = dict(type=SupervisedFinetune)
        train_dataloader = dict(batch_size=1, sampler=dict(type=SequenceParallelSampler, shuffle=True))

    ## Fix safety
    No fix: the length grouping of `LengthGroupedSampler` has no sequence-parallel twin, so the
    choice is the author's.

    ## References
    - xtuner/parallel/sequence/sampler.py SequenceParallelSampler (get_data_parallel_rank /
      get_data_parallel_world_size), setup_distributed.py init_sequence_parallel; from v0.1.16
      (59834032c), unchanged at b934f46
    - xtuner/dataset/samplers/length_grouped.py LengthGroupedSampler and mmengine/dataset/sampler.py
      DefaultSampler / InfiniteSampler (get_dist_info: global rank and world size)
    - xtuner/tools/train.py (sequence_parallel_size -> DeepSpeedStrategy); mmengine/runner/runner.py
      Runner.build_dataloader (builds `sampler` as written)
    - InternLM/xtuner#818, InternLM/xtuner#997
    """

    code = "TRN045"
    name = "sequence-parallel-needs-group-sampler"
    severity = ERROR
    triggers = ("parallel.sequence_parallel",)

    def check(self, run, context):
        for config in run.configs:
            degree = config.value("parallel.sequence_parallel")
            if not isinstance(degree, int) or degree < 2 or config.value("data.sampler_shards_all_ranks") is not True:
                continue
            yield self.finding(
                config, config.span("data.sampler"),
                f"sequence parallel size {degree} with {config.value('data.sampler')}, which deals samples by global "
                f"rank: the {degree} GPUs that split one sequence get different samples of different lengths, so "
                "the sequence-parallel all-to-all hangs or indexes out of range; use the sequence-parallel sampler "
                "(SequenceParallelSampler), which deals by data-parallel group",
            )


@register
class VarlenSequenceParallelUnevenPack(Rule):
    """TRN078 varlen-sequence-parallel-uneven-pack

    ## What it does
    Flags an XTuner config that packs (`pack_to_max_length = True`), hands
    `use_varlen_attn=True` to `default_collate_fn` and sets `sequence_parallel_size` above 1.
    Silent where the file may be read by a release without sequence parallelism: it fires where
    the pin is v0.1.16 or later, or where the dataloader names `SequenceParallelSampler` (which
    only v0.1.16 and later have), so every release that can read the file has the check.

    ## Why is this bad?
    On the varlen path `default_collate_fn` asserts
    `input_ids.size(1) % seq_parallel_world_size == 0` before, and instead of, the
    `pad_for_sequence_parallel` padding the other path gets. Packs of exactly `max_length` pass,
    but `pack_dataset` builds its `Packer` with `drop_last=False`, so every preprocessing map
    batch ends in one shorter residual pack of arbitrary length. Training dies with a bare
    `AssertionError` at the first step that draws one of them, anywhere in the shuffled epoch,
    after the model is loaded and the data packed (InternLM/xtuner#938).

    ## Example
    `train.py`:
        from xtuner.dataset.collate_fns import default_collate_fn
        from xtuner.model import SupervisedFinetune
        from xtuner.parallel.sequence import SequenceParallelSampler
        use_varlen_attn = True
        pack_to_max_length = True
        sequence_parallel_size = 4
        model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn)
        train_dataloader = dict(batch_size=1, sampler=dict(type=SequenceParallelSampler, shuffle=True),
                                collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn))
    Use instead:
        from xtuner.dataset.collate_fns import default_collate_fn
        from xtuner.model import SupervisedFinetune
        from xtuner.parallel.sequence import SequenceParallelSampler
        use_varlen_attn = False
        pack_to_max_length = True
        sequence_parallel_size = 4
        model = dict(type=SupervisedFinetune, use_varlen_attn=use_varlen_attn)
        train_dataloader = dict(batch_size=1, sampler=dict(type=SequenceParallelSampler, shuffle=True),
                                collate_fn=dict(type=default_collate_fn, use_varlen_attn=use_varlen_attn))

    ## Fix safety
    No fix: dropping varlen attention lets packed samples attend to each other, and dropping the
    residual packs (`Packer(..., drop_last=True)`, the workaround in the thread) needs a code change.

    ## References
    - xtuner/dataset/collate_fns/default_collate_fn.py default_collate_fn (the assert; from v0.1.16,
      59834032c #456, then named defalut_collate_fn.py; unchanged at HEAD b934f4620)
    - xtuner/dataset/huggingface.py pack_dataset (`Packer(max_length, use_varlen_attn=...)`,
      drop_last left False); xtuner/dataset/utils.py Packer.__call__ (the residual pack)
    - InternLM/xtuner#938
    """

    code = "TRN078"
    name = "varlen-sequence-parallel-uneven-pack"
    severity = ERROR
    triggers = ("parallel.sequence_parallel",)

    def check(self, run, context):
        for config in run.configs:
            degree = config.value("parallel.sequence_parallel")
            if (not isinstance(degree, int) or degree < 2 or config.value("data.collate_varlen") is not True
                    or config.value("sequence.packing") is not True):
                continue
            version = config.version("xtuner")
            if version is not None:
                if older_than(version[0], "0.1.16") is not False:
                    continue
                bound = f"xtuner {version[0]} ({version[1]})"
            elif config.value("data.sampler") == "SequenceParallelSampler":
                bound = "every release with SequenceParallelSampler (v0.1.16 and later)"
            else:
                context.notes.append(f"{config.path}: {self.code} skipped: the xtuner version is unknown "
                                     "(the sequence-parallel assert exists from v0.1.16)")
                continue
            yield self.finding(
                config, config.span("data.collate_varlen"),
                f"use_varlen_attn in default_collate_fn with packing and sequence parallel size {degree} on {bound}: "
                f"the varlen path asserts input_ids.size(1) % {degree} == 0 without padding, and Packer "
                "(drop_last=False) emits a shorter residual pack at the end of every preprocessing batch, so "
                "training dies with an AssertionError at the first step that draws one",
            )


# The model types whose attention XTuner's sequence parallelism splits by heads (the dispatched
# forwards that call pre_process_for_sequence_parallel_attn, xtuner/model/modules/dispatch/*.py),
# by the first release that has them: llama and internlm2 from v0.1.16 (59834032c #456); mistral,
# mixtral, qwen2, qwen2_moe and cohere from v0.1.18; phi3 from v0.1.19; deepseek_v2 from v0.1.20.
_SP_ATTENTION = (("0.1.16", {"llama", "internlm2"}), ("0.1.18", {"mistral", "mixtral", "qwen2", "qwen2_moe", "cohere"}),
                 ("0.1.19", {"phi3"}), ("0.1.20", {"deepseek_v2"}))
_SP_ANY_HEADS = "0.1.21"  # 7646e7bf0 (#769): an inner sequence-parallel group when heads do not divide


@register
class SequenceParallelSizeDividesHeads(Rule):
    """TRN093 sequence-parallel-size-divides-heads

    ## What it does
    Flags an XTuner config whose `sequence_parallel_size` does not divide the model's number of
    attention heads (`num_attention_heads`: from a local config.json, the Hugging Face cache or
    trainlint's model table), in a run launched with DeepSpeed (XTuner builds the
    sequence-parallel group in its DeepSpeed strategy only), where the xtuner in use (an exact pin
    near the config, or the installed package) is v0.1.16 to v0.1.20 and its sequence-parallel
    attention covers the model's type (llama and internlm2 from v0.1.16; mistral, mixtral,
    qwen2, qwen2_moe and cohere from v0.1.18; phi3 from v0.1.19; deepseek_v2 from v0.1.20).
    Silent where the version or the model is unknown.

    ## Why is this bad?
    Sequence parallelism hands each GPU of a group a slice of the sequence and, for attention,
    trades it for a slice of the heads with an all-to-all. Up to v0.1.20 that split asserts
    `n_head % sequence_parallel_world_size == 0` ("The number of attention heads should be
    divisible by sequence_parallel_world_size") at the first attention forward, after the model
    has loaded and the dataset has been packed (InternLM/xtuner#755: Qwen2-7B's 28 heads with
    size 8). v0.1.21 (#769) runs such sizes with an inner group.

    ## Example
    `train.py`, on 8 GPUs:
        from xtuner.model import SupervisedFinetune
        pretrained_model_name_or_path = "Qwen/Qwen2-7B-Instruct"
        sequence_parallel_size = 8
        model = dict(type=SupervisedFinetune)
    `train.sh`:
        NPROC_PER_NODE=8 xtuner train train.py --deepspeed deepspeed_zero3
    `requirements.txt`:
        xtuner==0.1.20
    Use instead:
        from xtuner.model import SupervisedFinetune
        pretrained_model_name_or_path = "Qwen/Qwen2-7B-Instruct"
        sequence_parallel_size = 4
        model = dict(type=SupervisedFinetune)

    ## Fix safety
    No fix: the size trades memory for GPUs; a divisor of the head count or xtuner 0.1.21 are
    the author's choice.

    ## References
    - xtuner/parallel/sequence/attention.py pre_process_for_sequence_parallel_attn (the assert,
      from 59834032c #456, v0.1.16); 7646e7bf0 "Support the scenario where sp size is not
      divisible by attn head num" (#769, first in v0.1.21)
    - xtuner/model/modules/dispatch/*.py (the attention forwards that use it, per release);
      xtuner/engine/_strategy/deepspeed.py (init_sequence_parallel)
    - InternLM/xtuner#755, #769
    """

    code = "TRN093"
    name = "sequence-parallel-size-divides-heads"
    severity = ERROR
    triggers = ("parallel.sequence_parallel",)

    def check(self, run, context):
        for config in run.configs:
            degree = config.value("parallel.sequence_parallel")
            if not isinstance(degree, int) or isinstance(degree, bool) or degree < 2:
                continue
            if not (config.value("launch.passes_deepspeed") is True
                    or any(link.kind == "deepspeed" for link in config.links)):
                continue  # without DeepSpeed no sequence-parallel group (or the whole world's: VER002)
            model = config.value("model.name")
            if not isinstance(model, str) or not model:
                continue
            found = context.version_before("xtuner", _SP_ANY_HEADS, config, self.code)
            if found is None:
                continue
            yield from self._heads(config, context, degree, model, found)

    def _heads(self, config, context, degree, model, found):
        from linter.models import dimensions_of, model_type_of

        kind = model_type_of(model, config.path.parent)
        dims = dimensions_of(model, config.path.parent)
        if kind is None or dims is None:
            context.notes.append(f"{config.path}: {self.code} skipped: the model type or head count of {model} "
                                 "is unknown")
            return
        covered = set().union(*(types for first, types in _SP_ATTENTION if older_than(found[0], first) is False))
        if kind[0] not in covered or dims.heads % degree == 0:
            return
        yield self.finding(
            config, config.span("parallel.sequence_parallel"),
            f"sequence_parallel_size {degree} does not divide the {dims.heads} attention heads of {model} on xtuner "
            f"{found[0]} ({found[1]}): the sequence-parallel attention asserts n_head % {degree} == 0 at the first "
            "forward, after the model has loaded and the data has been packed (InternLM/xtuner#755); use a size "
            f"that divides {dims.heads} or xtuner {_SP_ANY_HEADS} or later (#769)",
        )

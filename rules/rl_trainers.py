"""TRL's reinforcement-learning and preference trainers (GRPO, DPO, KTO): the checks they make at
launch, read from the config before the job is queued (issue 16)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, kinds, register
from linter.versions import older_than

from .facts import HF_TRAINER_FILES, grpo_like, positive_int, world_size


# trl/trainer/grpo_trainer.py and grpo_config.py: the completions of one generation round must
# hold whole groups of num_generations. TRL 0.15.0 (PR #2776) counts completions in
# per_device_train_batch_size and checks micro x processes; 0.17.0 multiplies by
# gradient_accumulation_steps; 0.18.0 moves the check to GRPOConfig.__post_init__ with
# generation_batch_size (default micro x processes x steps_per_generation, whose default is
# gradient_accumulation_steps).
_GRPO_COMPLETION_BATCHES = "0.15.0"
_GRPO_ACCUMULATED = "0.17.0"
# The evaluation batch (per_device_eval_batch_size x processes) must hold whole groups too where
# eval_strategy is not "no": the [first, before) TRL releases that check it (TRN012's references).
_GRPO_EVAL_CHECKED = (("0.15.0", "0.20.0"), ("0.22.0", None))
_GRPO_EVAL_GENERATIONS = "0.27.0"  # num_generations_eval, where set, replaces num_generations


# GRPOConfig.__post_init__ checks that need no world size: (key, condition, first TRL release, message):
# cf5183db7 (v0.18.0), 5a0cebc78 (v0.17.0, then in grpo_trainer.py), 44d7ef9bd (#6411, v1.9.0).
# The last item: (condition, what every TRL that reads the keys does) where the row fires unpinned.
# Both batch keys arrived with their check (cf5183db7); GRPO (v0.14.0, its first release) up to 0.16
# computes a group of one completion's advantage as r - mean(r) = 0, divided by `std()` of one value
# (NaN; not divided with scale_rewards false, 0.16): the rewards teach nothing.
_GRPO_CONFIG_REFUSALS = (
    ("generation.steps", lambda c: c.value("generation.batch_size") is not None
     and c.value("generation.steps") is not None, "0.18.0",
     "'generation_batch_size' and 'steps_per_generation' can not be both configured at the same time",
     (lambda c: True, "every TRL that reads the two keys refuses it (both arrived with the check, cf5183db7)", None)),
    ("generation.per_prompt", lambda c: isinstance(c.value("generation.per_prompt"), int)
     and not isinstance(c.value("generation.per_prompt"), bool) and c.value("generation.per_prompt") < 2, "0.17.0",
     "GRPO requires at least 2 generations per prompt to calculate the advantages",
     (lambda c: c.value("generation.per_prompt") == 1,
      "TRL 0.14.0 to 0.16.x (grpo_trainer.py _generate_and_score_completions) train on it silently: one completion "
      "per prompt has advantage 0 (NaN where divided by the group's std of one value), so the rewards teach "
      "nothing", "0.14.0")),
    ("batch.auto_find", lambda c: c.value("batch.auto_find") is True, "1.9.0",
     "auto_find_batch_size is not supported by GRPO, because the generation batch must contain full prompt groups",
     None),
)


@register
class GrpoBatchNotDivisible(Rule):
    """TRN012 grpo-batch-not-divisible

    ## What it does
    Flags a `trl grpo` config whose `num_generations` does not divide the completions one
    generation round holds: `per_device_train_batch_size` x GPUs on TRL 0.15 and 0.16, times
    `gradient_accumulation_steps` from TRL 0.17. Needs the world size (`--world-size`, an
    accelerate config's `num_processes`, or the repository's launch command that runs the file);
    silent without it, on TRL before 0.15, and where `generation_batch_size` or
    `steps_per_generation` is written. With the TRL version unknown it fires only where
    both formulas fail. Where the config evaluates during training (`eval_strategy` steps
    or epoch), it also flags an evaluation batch (`per_device_eval_batch_size` x GPUs) that
    `num_generations` (`num_generations_eval` from TRL 0.27) does not divide, on the TRL
    releases that refuse it: 0.15 to 0.19 and from 0.22 (silent when the TRL version is
    unknown). With a pinned TRL it also flags GRPOConfig's other batch refusals: both
    `generation_batch_size` and `steps_per_generation` written (from 0.18.0), `num_generations`
    below 2 (from 0.17.0) and `auto_find_batch_size` (from 1.9.0). The first two fire with the
    TRL version unknown too: both batch keys arrived with their check, and `num_generations: 1`
    trains silently on every earlier GRPO release (advantage 0, or NaN). These config refusals
    also hold for the GRPOConfig of an Unsloth script (Unsloth's generated subclass passes the
    keys to TRL's `__init__`); its batch is TRN099's (Unsloth raises it instead of refusing).

    ## Why is this bad?
    GRPO scores each completion against the others generated for the same prompt, so a
    generation round must hold whole groups of `num_generations`. GRPOTrainer (GRPOConfig
    from TRL 0.18) refuses the config at launch: "The global train batch size ... must be
    evenly divisible by the number of generations per prompt" (huggingface/trl#2858,
    #3061; open-r1#249). Evaluation generates whole groups too: "The global eval batch
    size (1 x 1) must be evenly divisible by the number of generations per prompt (8)"
    (huggingface/trl#3566).

    ## Example
    `grpo.yaml`, on 2 GPUs:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/Capybara
        per_device_train_batch_size: 1
        num_generations: 8
    `requirements.txt`:
        trl==0.15.2
    Use instead, in `grpo.yaml`:
        model_name_or_path: Qwen/Qwen2.5-0.5B-Instruct
        dataset_name: trl-lib/Capybara
        per_device_train_batch_size: 4
        num_generations: 8

    ## Fix safety
    No fix: a larger batch needs memory, fewer generations change the method; the author
    picks.

    ## References
    - trl/trainer/grpo_trainer.py (TRL 0.15-0.17): GRPOTrainer.__init__ possible_values check
    - trl/trainer/grpo_config.py (TRL >= 0.18): GRPOConfig.__post_init__ generation_batch_size
    - the evaluation batch: grpo_trainer.py GRPOTrainer.__init__ (0.15.0-0.17), grpo_config.py
      __post_init__ (0.18-0.19); dropped in 0.20.0 (508d551db, #3725); back in 0.22.0 (dfb96af81,
      #3889: `do_eval and eval_strategy != "no"`, and TrainingArguments.__post_init__ turns do_eval
      on with an eval_strategy); num_generations_eval from 0.27.0
    - grpo_config.py GRPOConfig.__post_init__: both batch keys cf5183db7 (v0.18.0); at least 2
      generations 5a0cebc78 (v0.17.0); auto_find_batch_size 44d7ef9bd (#6411, v1.9.0); rloo_config.py
      has the same checks from 0.22.0
    - huggingface/trl#2776, #2858, #3061, #3566; huggingface/open-r1#249
    """

    code = "TRN012"
    name = "grpo-batch-not-divisible"
    severity = ERROR
    triggers = (*kinds(*HF_TRAINER_FILES), "trainer.patched_grpo_config")

    def check(self, run, context):
        world = world_size(run, context)
        for config in run.configs:
            if config.value("trainer.patched_grpo_config") is True:
                # An Unsloth script's generated GRPOConfig subclasses TRL's and passes these keys to its
                # __init__ unchanged, so TRL's world-free refusals hold; the batch checks are TRN099's.
                yield from self._config_refusals(config)
                continue
            if config.value("file.kind") not in HF_TRAINER_FILES or not grpo_like(config):
                continue
            yield from self._config_refusals(config)
            if not positive_int(world):
                continue
            yield from self._evaluation(config, world)
            generations, micro = config.value("generation.per_prompt"), config.value("batch.micro")
            accumulation = config.value("batch.grad_accum")
            if not (positive_int(generations) and generations >= 2 and positive_int(micro) and positive_int(accumulation)):
                continue
            if config.get("generation.batch_size") is not None or config.get("generation.steps") is not None:
                continue
            per_round = micro * world
            accumulated = per_round * accumulation
            trl = config.version("trl")
            if trl is not None:
                if older_than(trl[0], _GRPO_COMPLETION_BATCHES) is not False:
                    continue
                if older_than(trl[0], _GRPO_ACCUMULATED):
                    rounds = {per_round: f"{micro} x {world} GPUs"}
                else:
                    rounds = {accumulated: f"{micro} x {world} GPUs x {accumulation} accumulation steps"}
                on = f"TRL {trl[0]} ({trl[1]})"
            else:
                rounds = {per_round: f"{micro} x {world} GPUs",
                          accumulated: f"{micro} x {world} GPUs x {accumulation} accumulation steps"}
                on = "any TRL from 0.15"
            if any(size % generations == 0 for size in rounds):
                continue
            size, how = max(rounds.items())
            yield self.finding(
                config, config.span("generation.per_prompt"),
                f"num_generations {generations} does not divide a generation round of {size} "
                f"completion{'s' if size != 1 else ''} "
                f"({how}) on {on}: GRPO refuses the config at launch; make the batch a multiple of "
                f"num_generations",
            )

    def _config_refusals(self, config):
        """GRPOConfig.__post_init__'s world-size-free checks (RLOOConfig's, which shares the
        num_generations mark, has them from its first release, 0.22.0), pinned TRL only."""
        trl = config.version("trl")
        for key, holds, since, message, unpinned in _GRPO_CONFIG_REFUSALS:
            if trl is None:
                if unpinned is not None and holds(config) and unpinned[0](config):
                    yield self.finding(config, config.span(key),
                                       f"from TRL {since} GRPOConfig refuses this config at launch: \"{message}\"; "
                                       f"{unpinned[1]}")
                continue
            if unpinned and unpinned[2] and holds(config) and unpinned[0](config) and older_than(trl[0], since) \
                    and older_than(trl[0], unpinned[2]) is False:
                yield self.finding(config, config.span(key), f"on TRL {trl[0]} ({trl[1]}): {unpinned[1]}; from TRL "
                                   f"{since} GRPOConfig refuses it: \"{message}\"")
            if holds(config) and older_than(trl[0], since) is False:
                yield self.finding(config, config.span(key),
                                   f"TRL {trl[0]} ({trl[1]}) refuses this GRPO/RLOO config at launch: \"{message}\" "
                                   f"(GRPOConfig.__post_init__, GRPOTrainer.__init__ before 0.18; from TRL {since})")

    def _evaluation(self, config, world):
        """The evaluation batch, which the TRL releases in `_GRPO_EVAL_CHECKED` refuse where it
        cannot hold whole groups (silent when the TRL version is unknown)."""
        if config.value("checkpoint.eval_strategy") not in ("steps", "epoch"):
            return
        trl = config.version("trl")
        if trl is None or not any(older_than(trl[0], first) is False and (last is None or older_than(trl[0], last))
                                  for first, last in _GRPO_EVAL_CHECKED):
            return
        generations, name = config.value("generation.per_prompt"), "num_generations"
        if (positive_int(config.value("generation.per_prompt_eval"))
                and older_than(trl[0], _GRPO_EVAL_GENERATIONS) is False):
            generations, name = config.value("generation.per_prompt_eval"), "num_generations_eval"
        micro = config.value("batch.eval_micro")
        if not (positive_int(generations) and generations >= 2 and positive_int(micro)) or micro * world % generations == 0:
            return
        size = micro * world
        yield self.finding(
            config, config.span("batch.eval_micro"),
            f"{name} {generations} does not divide the evaluation batch of {size} completion{'s' if size != 1 else ''} "
            f"(per_device_eval_batch_size {micro} x {world} GPU{'s' if world != 1 else ''}) on TRL {trl[0]} ({trl[1]}): with evaluation on, "
            f"GRPO refuses the config at launch; make per_device_eval_batch_size x GPUs a multiple of {name}",
        )


# trl/trainer/kto_trainer.py: KTOTrainer refuses a per-device batch of 1 when the loss estimates
# the KL term (every loss_type but "apo_zero_unpaired"), from TRL 0.12.0 (PR #2153).
_KTO_BATCH_CHECK = "0.12.0"
_KTO_NO_KL = ("apo_zero_unpaired",)  # a tuple: loss_type may be a written list


@register
class KtoBatchSizeOne(Rule):
    """TRN013 kto-batch-size-one

    ## What it does
    Flags a TRL KTO config (KTOConfig's `desirable_weight` / `undesirable_weight` mark it)
    with `per_device_train_batch_size: 1` and a loss that estimates the KL term (any
    `loss_type` but `apo_zero_unpaired`), unless the TRL in use is older than 0.12.

    ## Why is this bad?
    KTO estimates its KL reference point by pairing each prompt with the completion of
    another example in the same batch. With one example per GPU there is no other example,
    the KL term equals the implied reward, and KTOTrainer refuses the config: "Actual (not
    effective) batch size must be > 1" (huggingface/trl#2554, #2153). Gradient accumulation
    does not help: the pairing is within one micro batch.

    ## Example
    `kto.yaml`:
        model_name_or_path: Qwen/Qwen2-0.5B-Instruct
        dataset_name: trl-lib/kto-mix-14k
        per_device_train_batch_size: 1
        gradient_accumulation_steps: 8
        desirable_weight: 1.0
    `requirements.txt`:
        trl==0.12.0
    Use instead, in `kto.yaml`:
        model_name_or_path: Qwen/Qwen2-0.5B-Instruct
        dataset_name: trl-lib/kto-mix-14k
        per_device_train_batch_size: 2
        gradient_accumulation_steps: 4
        desirable_weight: 1.0

    ## Fix safety
    No fix: a batch of 2 needs more memory per GPU, and the accumulation steps to keep the
    effective batch are the author's choice.

    ## References
    - trl/trainer/kto_trainer.py: KTOTrainer.__init__ (calculate_KL, "Actual (not effective)
      batch size must be > 1"); trl/trainer/kto_config.py loss_type
    - huggingface/trl#2153 (v0.12.0), #2554
    """

    code = "TRN013"
    name = "kto-batch-size-one"
    severity = ERROR
    triggers = kinds("trl")

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "trl" or config.value("training.trainer") != "kto":
                continue
            micro = config.value("batch.micro")
            if not isinstance(micro, int) or isinstance(micro, bool) or micro > 1:
                continue
            if config.value("training.loss_type") in _KTO_NO_KL:
                continue
            trl = config.version("trl")
            if trl is not None and older_than(trl[0], _KTO_BATCH_CHECK) is not False:
                continue
            yield self.finding(
                config, config.span("batch.micro"),
                f"per_device_train_batch_size {micro} for KTO: the KL term pairs examples within one batch, and "
                "KTOTrainer refuses a batch below 2 (\"Actual (not effective) batch size must be > 1\"); use 2 or more "
                "(fewer accumulation steps keep the effective batch)",
            )


# trl/trainer/dpo_trainer.py, kto_trainer.py, bco_trainer.py: from TRL 0.7.5 (DPO; KTO and BCO
# in 0.12.0) to 0.28, "You cannot use `precompute_ref_log_probs=True` with Deepspeed ZeRO-3";
# the DPO refactor of 0.29.0 (PR #3906) dropped the refusal and precomputes in __init__, before
# DeepSpeed places (ZeRO-1/2) or gathers (ZeRO-3) the parameters; 1.9.0 (PR #6403) wraps the model
# in a DeepSpeed inference engine for that pass (DPO and KTO).
_PRECOMPUTE_CHECKED = "0.12.0"
_PRECOMPUTE_IN_INIT = "0.29.0"
_PRECOMPUTE_FIXED = "1.9.0"


@register
class PrecomputeRefUnderDeepspeed(Rule):
    """TRN014 precompute-ref-under-deepspeed

    ## What it does
    Flags a TRL preference config (DPO, KTO, BCO) with `precompute_ref_log_probs: true`
    whose run uses DeepSpeed (a linked DeepSpeed config) where the TRL in use (a pin near
    the file or the installed package; silent when unknown) fails on it: ZeRO-3 from TRL
    0.12 to 1.8, and for DPO also ZeRO-1/2 from TRL 0.29 to 1.8.

    ## Why is this bad?
    Precomputing runs the reference model over the whole dataset once, before training.
    Up to TRL 0.28 the trainers refused that under ZeRO-3 at launch ("You cannot use
    `precompute_ref_log_probs=True` with Deepspeed ZeRO-3"). TRL 0.29 moved the pass into
    the DPO trainer's `__init__` and dropped the refusal, but there DeepSpeed has not yet
    placed the parameters (still on the CPU under ZeRO-1/2: a device mismatch) or gathered
    them (sharded under ZeRO-3: "weight must be 2-D"), so the job crashes at launch
    (huggingface/trl#2985). TRL 1.9.0 runs the pass through a DeepSpeed inference engine
    (#6403).

    ## Example
    `dpo.yaml`:
        model_name_or_path: Qwen/Qwen2.5-7B-Instruct
        dataset_name: trl-lib/ultrafeedback_binarized
        precompute_ref_log_probs: true
        deepspeed: ds_z3.json
    `ds_z3.json`:
        {"zero_optimization": {"stage": 3}}
    `requirements.txt`:
        trl==1.8.0
    Use instead TRL 1.9.0 or later (or `precompute_ref_log_probs: false`), in `requirements.txt`:
        trl==1.9.0

    ## Fix safety
    No fix: turning precomputation off keeps a reference model in memory during training;
    upgrading TRL is the other choice.

    ## References
    - trl/trainer/dpo_trainer.py (0.7.5-0.28: the ZeRO-3 refusal; 0.29.0, PR #3906:
      _precompute_ref_logps in __init__; 1.9.0, PR #6403: prepare_deepspeed for the pass)
    - trl/trainer/kto_trainer.py, bco_trainer.py (the same refusal from 0.12.0)
    - huggingface/trl#2985, #6403
    """

    code = "TRN014"
    name = "precompute-ref-under-deepspeed"
    severity = ERROR
    triggers = kinds("trl")

    def check(self, run, context):
        stage = next((config.value("parallel.zero_stage") for config in run.configs
                      if isinstance(config.value("parallel.zero_stage"), int)), None)
        if stage is None:
            return
        for config in run.configs:
            if config.value("file.kind") != "trl" or config.value("training.precompute_ref") is not True:
                continue
            trl = config.version("trl")
            if trl is None or older_than(trl[0], _PRECOMPUTE_FIXED) is not True:
                continue
            if stage == 3 and older_than(trl[0], _PRECOMPUTE_CHECKED) is False:
                what = "the reference pass needs the ZeRO-3-sharded weights gathered"
            elif (stage in (1, 2) and older_than(trl[0], _PRECOMPUTE_IN_INIT) is False
                  and config.value("training.trainer") in (None, "dpo")):
                what = f"the reference pass runs before DeepSpeed moves the ZeRO-{stage} model to the GPU"
            else:
                continue
            yield self.finding(
                config, config.span("training.precompute_ref"),
                f"precompute_ref_log_probs under DeepSpeed ZeRO-{stage} on TRL {trl[0]} ({trl[1]}): {what}, and the "
                f"trainer refuses or crashes at launch (fixed in TRL {_PRECOMPUTE_FIXED}); upgrade TRL or set "
                "precompute_ref_log_probs false",
            )


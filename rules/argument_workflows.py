"""The checks LLaMA-Factory makes when training starts rather than when it parses the arguments, one
row each (rows of rules/argument_table.py's form, read by TRN021): the custom optimizers'
refusals in `train/trainer_utils.py` (create_custom_optimizer, called by each trainer's
create_optimizer after the model has loaded), the PPO trainer's, and what a stage's workflow
silently skips (`ignored`: nothing refuses it). Read at hiyouga/LLaMA-Factory HEAD ff6d4d12e; each
row's first release from `git log -S '<message>'` and `git tag --contains`. Left out: checks on the
loaded model or the installed packages (Adam-mini, Muon, the reward model's value head, "Please
update `transformers`"), and a reward server URL (reward_model_type api, a string check that the
file decides but no thread reports).
"""

from __future__ import annotations

from .argument_table import TRAIN, Row, _true

_GALORE = "train/trainer_utils.py _create_galore_optimizer"
_APOLLO = "train/trainer_utils.py _create_apollo_optimizer"


def _optimizes(facts, optimizer: str) -> bool:
    """`optimizer` (GaLore, APOLLO, BAdam) builds the optimizer of a training run (create_custom_optimizer,
    called by the trainers' create_optimizer when training starts)."""
    return _true(facts, "training.enabled") and facts.get("optimizer.memory_efficient") == optimizer


def _accumulates(facts) -> bool:
    steps = facts.get("batch.grad_accum")
    return isinstance(steps, int) and not isinstance(steps, bool) and steps != 1


def _optim_outside(facts, names: tuple[str, ...]) -> bool:
    """A written `optim` the custom optimizer has no class for (transformers' default adamw_torch is in
    every list, so an unwritten one passes)."""
    optim = facts.get("optimizer.name")
    return isinstance(optim, str) and optim not in names


# _create_galore_optimizer's optim branches since e416cecf6 (0.6.0, GaLore's first release), unchanged at HEAD.
_GALORE_OPTIMS = ("adamw_torch", "adamw_bnb_8bit", "adamw_8bit", "paged_adamw_8bit", "adafactor")


WORKFLOW_ROWS = (
    # ---- train/trainer_utils.py create_custom_optimizer (when training starts, after the model loads) -----
    # always: each check came with its optimizer (use_galore and galore_layerwise in 0.6.0, use_apollo and
    # apollo_layerwise in 0.9.2, use_badam and badam_update_ratio in 0.6.3); "Unknow optim: {}" until 0.9.2.
    Row("Unknown optim: {training_args.optim}.", _GALORE, "0.6.0", "e416cecf6", "optimizer.name",
        lambda f: _optimizes(f, "GaLore") and _optim_outside(f, _GALORE_OPTIMS),
        lambda f: (f"GaLore has optimizer classes for {', '.join(_GALORE_OPTIMS)} only, not "
                   f"{f.get('optimizer.name')}: the run stops when the optimizer is built, after the model loads "
                   "(every release with use_galore has the check)"), always=True, command=TRAIN),
    Row("Per-layer GaLore does not support gradient accumulation.", _GALORE, "0.6.0", "7ff8a064f",
        ("batch.grad_accum", "optimizer.layerwise"),
        lambda f: _optimizes(f, "GaLore") and _true(f, "optimizer.layerwise") and _accumulates(f),
        "layer-wise GaLore steps each parameter inside its gradient hook, so nothing is left to accumulate; the "
        "run stops when the optimizer is built, after the model loads (every release with galore_layerwise has "
        "the check); set gradient_accumulation_steps: 1", always=True, command=TRAIN),
    Row("Unknown optim: {training_args.optim}.", _APOLLO, "0.9.2", "c2120432d", "optimizer.name",
        lambda f: _optimizes(f, "APOLLO") and _optim_outside(f, ("adamw_torch",)),
        lambda f: (f"APOLLO has an optimizer class for adamw_torch only, not {f.get('optimizer.name')}: the run "
                   "stops when the optimizer is built, after the model loads (every release with use_apollo has "
                   "the check)"), always=True, command=TRAIN),
    Row("Per-layer APOLLO does not support gradient accumulation.", _APOLLO, "0.9.2", "c2120432d",
        ("batch.grad_accum", "optimizer.layerwise"),
        lambda f: _optimizes(f, "APOLLO") and _true(f, "optimizer.layerwise") and _accumulates(f),
        "layer-wise APOLLO steps each parameter inside its gradient hook, so nothing is left to accumulate; the "
        "run stops when the optimizer is built, after the model loads (every release with apollo_layerwise has "
        "the check); set gradient_accumulation_steps: 1", always=True, command=TRAIN),
    Row("assert finetuning_args.badam_update_ratio > 1e-6", "train/trainer_utils.py _create_badam_optimizer",
        "0.6.3", "9d23f5dc8", "optimizer.badam_update_ratio",
        lambda f: _optimizes(f, "BAdam") and f.get("optimizer.badam_mode") == "ratio"
        and isinstance(f.get("optimizer.badam_update_ratio"), (int, float))
        and f.get("optimizer.badam_update_ratio") <= 1e-6,
        "ratio-wise BAdam needs a positive update ratio: an AssertionError when the optimizer is built, after the "
        "model loads (every release with use_badam has the check)", always=True, command=TRAIN),
    # ---- the stage workflows (train/*/workflow.py, train/ppo/trainer.py) -------------------------
    # always: run_pt, run_dpo and run_kto have had no do_predict branch since their first release (dpo 0.1.6
    # ca719a869, kto 0.8.0; read at v0.5.0, v0.6.0, v0.8.0, v0.9.0, v0.9.1 and HEAD); only run_sft and run_rm
    # predict, and parser.py's predict_with_generate check is for stage sft only. PPO with do_predict is
    # refused above unless it trains, and then run_ppo ignores it the same way.
    Row("no do_predict branch: nothing is predicted and nothing refuses it",
        "each of train/pt, dpo, kto and ppo/workflow.py", "0.0.9",
        "pt and ppo from 0.0.9, dpo from 0.1.6 (ca719a869), kto from 0.8.0", "training.do_predict",
        lambda f: _true(f, "training.do_predict") and f.get("training.stage") in ("pt", "dpo", "kto", "ppo"),
        lambda f: (f"the {f.get('training.stage')} workflow never calls predict, so the run loads the model and "
                   "the evaluation data and ends without writing any predictions; predict with stage: sft "
                   "(predict_with_generate: true) or stage: rm"), always=True, command=TRAIN, ignored=True),
    Row("PPOTrainer does not support eval dataset yet.", "train/ppo/trainer.py CustomPPOTrainer.__init__", "0.8.3",
        "e4d11a117", ("data.eval_sets", "data.val_size"),
        lambda f: f.get("training.stage") == "ppo" and _true(f, "training.enabled")
        and (f.get("data.eval_sets") is not None or f.val_size > 1e-6),
        "PPO has no evaluation loop; drop eval_dataset and val_size (refused once the model, the reference and "
        "the reward model are loaded)", command=TRAIN),
    # always: the check came with the PPO trainer's own loop (adf2730d1, 0.3.2); PPO had no resume before.
    Row("`resume_from_checkpoint` will be supported in the future version.",
        "train/ppo/trainer.py CustomPPOTrainer.ppo_train", "0.3.2", "adf2730d1", "checkpoint.resume_from",
        lambda f: f.get("training.stage") == "ppo" and _true(f, "training.enabled")
        and f.get("checkpoint.resume_from") not in (None, False, ""),
        "the PPO loop cannot resume: it stops when training starts, after loading the models", always=True,
        command=TRAIN),
)

"""An example third-party pack: one rule, registered on import like the built-in pack."""

from linter.api import WARNING, Applicability, Rule, SetValue, register


@register
class ZeroStageZero(Rule):
    """EXT001 zero-stage-zero

    ## What it does
    Flags a DeepSpeed config that leaves ZeRO off (stage 0).

    ## Why is this bad?
    A team policy in this example: every multi-GPU job shards at least optimizer states.

    ## Example
    `ds_config.json`:
        {"zero_optimization": {"stage": 0}}
    Use instead:
        {"zero_optimization": {"stage": 1}}

    ## Fix safety
    Unsafe: stage 1 adds communication; a team that wants stage 0 on one GPU should not use this pack.

    ## References
    - tests/example_pack (an example, not a real policy)
    """

    code = "EXT001"
    name = "zero-stage-zero"
    severity = WARNING
    fix_applicability = Applicability.UNSAFE

    def check(self, run, context):
        for config in run.configs:
            if config.value("parallel.zero_stage") == 0:
                yield self.finding(config, config.span("parallel.zero_stage"), "ZeRO is off (stage 0)",
                                   fix=self.fix("Use ZeRO stage 1", SetValue(config, "parallel.zero_stage", 1)))

"""Files that cannot be read at all."""

from linter.registry import ERROR, Rule, register


@register
class UnparseableConfig(Rule):
    """SYN001 unparseable-config

    ## What it does
    Reports a config file that is not valid YAML, JSON or Python, or not UTF-8, with the line
    and column where reading stopped.

    ## Why is this bad?
    The framework will fail to load it at launch — often after a queue wait or a model
    download. A template with unfilled placeholders (`"train_batch_size": CONFIG_BATCH_SIZE`)
    is a common case.

    ## Example
        {"train_batch_size": CONFIG_BATCH_SIZE}
    Use instead:
        {"train_batch_size": 64}

    ## Fix safety
    No fix: only the author knows the intended value.

    ## References
    - YAML is read as the frameworks read it (PyYAML, YAML 1.1); JSON as Python's `json` does.
    """

    code = "SYN001"
    name = "unparseable-config"
    severity = ERROR

    def check(self, run, context):
        # The engine reports this rule while loading files: a run only exists for a parsed file.
        return ()

"""PEFT adapters: settings the PEFT release in use cannot build (issue 16 recall)."""

from __future__ import annotations

from linter.registry import ERROR, Rule, register

# peft/tuners/lora/bnb.py: DoRA arrived in PEFT 0.9.0 for plain Linear layers only; the
# bitsandbytes Linear8bitLt and Linear4bit raise "... does not support DoRA yet, please set it to
# False" until 0.10.0 (huggingface/peft#1518). Before 0.9.0 LoraConfig has no use_dora.
_DORA_FIRST = "0.9.0"
_DORA_QUANTIZED = "0.10.0"


@register
class DoraQuantizedPeftVersion(Rule):
    """PEF001 dora-quantized-peft-version

    ## What it does
    Flags DoRA (`use_dora`, Axolotl `peft_use_dora`) on a base model loaded in 4 or 8 bits
    with bitsandbytes, where the PEFT in use is 0.9.x (a pin near the file or the installed
    package; silent when unknown).

    ## Why is this bad?
    PEFT 0.9.0 implemented DoRA for plain `nn.Linear` layers only. Its bitsandbytes layers
    (`Linear8bitLt`, `Linear4bit`) raise "Linear4bit does not support DoRA yet, please set
    it to False" when `get_peft_model` wraps them, after the quantized model has loaded
    (huggingface/peft#1991). PEFT 0.10.0 added DoRA for bitsandbytes layers (#1518);
    LLaMA-Factory and Axolotl refused the combination in the meantime.

    ## Example
    `train.yaml`:
        model_name_or_path: microsoft/Phi-3-mini-4k-instruct
        dataset_name: trl-lib/Capybara
        use_peft: true
        use_dora: true
        load_in_4bit: true
    `requirements.txt`:
        peft==0.9.0
    Use instead PEFT 0.10.0 or later, in `requirements.txt`:
        peft==0.10.0

    ## Fix safety
    No fix: the pin is the author's; plain LoRA (`use_dora: false`) is the other choice.

    ## References
    - peft/tuners/lora/bnb.py (0.9.0: "does not support DoRA yet"; 0.10.0: DoRA for
      bitsandbytes layers, huggingface/peft#1518)
    - huggingface/peft#1991; axolotl-ai-cloud/axolotl#1485 (validate_quantized_dora removed
      for PEFT 0.10); LLaMA-Factory src/llmtuner/hparams/parser.py (0.6.0: peft>=0.10.0 for
      DoRA with quantization)
    """

    code = "PEF001"
    name = "dora-quantized-peft-version"
    severity = ERROR

    def check(self, run, context):
        for config in run.configs:
            if config.value("adapter.dora") is not True or config.value("quantization.bits") not in (4, 8):
                continue
            if config.value("quantization.method") not in (None, "bnb", "bitsandbytes"):
                continue  # GPTQ, AWQ, HQQ, ...: other layer classes
            old = context.version_before("peft", _DORA_QUANTIZED, config, self.code)
            if old is None or context.version_before("peft", _DORA_FIRST, config, self.code) is not None:
                continue
            four_bit = config.value("quantization.bits") == 4
            model, layer = ("a 4-bit", "Linear4bit") if four_bit else ("an 8-bit", "Linear8bitLt")
            yield self.finding(
                config, config.span("adapter.dora"),
                f"DoRA on {model} bitsandbytes model with PEFT {old[0]} ({old[1]}): PEFT's bitsandbytes layers "
                f"support DoRA only from {_DORA_QUANTIZED} (\"{layer} does not support DoRA yet\" after the model "
                "loads); upgrade PEFT or turn DoRA off",
            )

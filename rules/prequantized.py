"""A bitsandbytes quantization request on a checkpoint saved already quantized with another method.

What transformers does when from_pretrained receives a BitsAndBytesConfig for a checkpoint whose
config.json carries its own quantization_config was read in every release's wheel from 4.31.0 to
5.23.0 (modeling_utils.py from_pretrained, then quantizers/auto.py
AutoHfQuantizer.merge_quantization_configs from 4.38.0):
- 4.32.0-4.35.x (GPTQ): it calls get_loading_attributes() on the passed config, which only GPTQConfig
  has: AttributeError "'BitsAndBytesConfig' object has no attribute 'get_loading_attributes'";
- 4.36.0-4.37.x (GPTQ, AWQ): ValueError "The model is already quantized with gptq. You can't quantize
  it again with bitsandbytes";
- 4.38.0-4.55.x (GPTQ, AWQ; FBGEMM FP8 from 4.43, compressed-tensors from 4.48): get_loading_attributes()
  again, the AttributeError;
- 4.56.0 on (every method): ValueError "The model is quantized with GPTQConfig but you are passing a
  BitsAndBytesConfig config" (absent from the 4.55.0 wheel, present in 4.56.0).
A checkpoint saved with bitsandbytes itself gets its own config back (a warning, no error); other
methods before 4.56.0 are not judged here (the FP8 classes outside that list load with a warning).
"""

from __future__ import annotations

from linter.fixes import Applicability
from linter.registry import ERROR, Rule, register
from linter.versions import older_than

_GPTQ_FIRST = "4.32.0"  # transformers' GPTQ integration (GPTQConfig)
_REFUSED_AGAIN = ("4.36.0", "4.38.0")  # "already quantized with ... You can't quantize it again"
_CLASS_CHECK = "4.56.0"  # "The model is quantized with ... but you are passing a ... config"
_FIRST_FAILING = {"gptq": _GPTQ_FIRST, "awq": "4.36.0"}
# quant_method -> its transformers config class (utils/quantization_config.py, AUTO_QUANTIZATION_CONFIG_MAPPING)
_CLASSES = {"gptq": "GPTQConfig", "awq": "AwqConfig", "fp8": "FineGrainedFP8Config", "fbgemm_fp8": "FbgemmFp8Config",
            "compressed-tensors": "CompressedTensorsConfig", "mxfp4": "Mxfp4Config"}


def _failure(method: str, version: str) -> str | None:
    """The error transformers `version` raises for a BitsAndBytesConfig on a `method` checkpoint;
    None where it does not fail or that is not known here."""
    first = _FIRST_FAILING.get(method, _CLASS_CHECK)
    if older_than(version, first) is not False:
        return None
    if older_than(version, _CLASS_CHECK) is False:
        named = _CLASSES.get(method)
        if named is None:
            return f"a ValueError (the {method} config class is not a BitsAndBytesConfig)"
        return f"ValueError \"The model is quantized with {named} but you are passing a BitsAndBytesConfig config\""
    if older_than(version, _REFUSED_AGAIN[0]) is False and older_than(version, _REFUSED_AGAIN[1]) is True:
        return f"ValueError \"The model is already quantized with {method}. You can't quantize it again with bitsandbytes\""
    return "AttributeError \"'BitsAndBytesConfig' object has no attribute 'get_loading_attributes'\""


@register
class QuantizePrequantizedCheckpoint(Rule):
    """QNT010 bnb-quantization-on-prequantized-model

    ## What it does
    Flags a bitsandbytes quantization request (a Ludwig `quantization:` block with the
    bitsandbytes backend; TRL's `load_in_4bit` / `load_in_8bit`) on a base model saved already
    quantized with another method: GPTQ or AWQ (its config.json's `quantization_config`, or an
    `-GPTQ` / `-AWQ` upload name), or any other non-bitsandbytes method with transformers 4.56.0
    or later. Read with the transformers version pinned next to the config (or installed); when
    it is unknown only a GPTQ checkpoint is judged, which every release that reads GPTQ weights
    refuses. Frameworks that defer to the checkpoint's own quantization config are not judged
    (LLaMA-Factory ignores `quantization_bit` on such models; Axolotl passes the checkpoint's
    GPTQ/AWQ config itself).

    ## Why is this bad?
    These frameworks always pass a BitsAndBytesConfig to `from_pretrained`. transformers cannot
    merge it with the checkpoint's GPTQ/AWQ config: it raises before any weight is loaded —
    "'BitsAndBytesConfig' object has no attribute 'get_loading_attributes'" (4.32-4.35,
    4.38-4.55), "The model is already quantized with gptq. You can't quantize it again with
    bitsandbytes" (4.36-4.37), "The model is quantized with GPTQConfig but you are passing a
    BitsAndBytesConfig config" (4.56 on). The weights are already 4-bit: quantizing them again
    is not possible, and training a GPTQ/AWQ model needs its own kernels.

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: TheBloke/Llama-2-13B-GPTQ
        quantization:
          bits: 4
        adapter:
          type: lora
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
        trainer:
          type: finetune
    Use instead (the unquantized checkpoint, quantized by bitsandbytes on load):
        model_type: llm
        base_model: meta-llama/Llama-2-13b-hf
        quantization:
          bits: 4
        adapter:
          type: lora
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: response
            type: text
        trainer:
          type: finetune

    ## Fix safety
    Display-only: the remedy is another checkpoint (the unquantized one) or dropping the
    quantization request where the framework can train the GPTQ/AWQ model as it is.

    ## References
    - transformers modeling_utils.py PreTrainedModel.from_pretrained (4.32.0-4.37.2: the
      get_loading_attributes() call, then "The model is already quantized with ..."),
      quantizers/auto.py AutoHfQuantizer.merge_quantization_configs (4.38.0-5.23.0; the class
      check from 4.56.0), utils/quantization_config.py (get_loading_attributes only on
      GPTQConfig, AwqConfig and the FP8/compressed-tensors/AutoRound configs) — read in each
      release's wheel, 4.31.0-5.23.0
    - ludwig/models/llm.py (0.8) and ludwig/utils/llm_utils.py load_pretrained_from_config
      (quantization_config = quantization.to_bitsandbytes(); bitsandbytes backend only from 0.15)
    - trl/trainer/utils.py get_quantization_config (BitsAndBytesConfig for load_in_4bit/8bit)
    - llamafactory/model/model_utils/quantization.py configure_quantization ("`quantization_bit`
      will not affect on the PTQ-quantized models"); axolotl loaders/model.py
      _set_quantization_config (GPTQConfig/AwqConfig from the checkpoint's config)
    - ludwig-ai/ludwig#3652
    """

    code = "QNT010"
    name = "bnb-quantization-on-prequantized-model"
    severity = ERROR
    fix_applicability = Applicability.DISPLAY_ONLY

    def check(self, run, context):
        for config in run.configs:
            if config.value("quantization.bnb_on_load") is not True:
                continue
            name = config.value("model.name")
            if not isinstance(name, str) or not name:
                continue
            from linter.models import prequantized

            quantized = prequantized(name, config.path.parent)
            if quantized is None or quantized[0].lower() in ("bitsandbytes", "bnb"):
                continue
            method, source = quantized[0].lower(), quantized[1]
            version = config.version("transformers")
            if version is None:
                if method != "gptq":
                    context.notes.append(f"{config.path}: {self.code} skipped: the transformers version is unknown "
                                         f"(whether it refuses a BitsAndBytesConfig on a {method} checkpoint depends on it)")
                    continue
                why = (f"every transformers release that reads GPTQ checkpoints ({_GPTQ_FIRST} on) refuses it, with "
                       "AttributeError \"'BitsAndBytesConfig' object has no attribute 'get_loading_attributes'\" or "
                       "ValueError \"The model is quantized with GPTQConfig but you are passing a BitsAndBytesConfig config\"")
            else:
                failure = _failure(method, version[0])
                if failure is None:
                    continue
                why = f"transformers {version[0]} ({version[1]}) raises {failure}"
            yield self.finding(
                config, config.span("quantization.bnb_on_load"),
                f"bitsandbytes quantization requested for {name}, which is saved {method}-quantized ({source}): "
                f"from_pretrained gets a BitsAndBytesConfig next to the checkpoint's own quantization_config and {why} "
                "before loading; start from the unquantized checkpoint",
                fix=self.fix("Use the unquantized checkpoint (quantized by bitsandbytes on load)"))

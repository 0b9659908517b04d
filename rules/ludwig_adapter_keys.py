"""Ludwig adapter keys its schema accepts and its PEFT config builder never passes on, as a table of
the rows of rules/release_table.py.

ludwig/schema/llms/peft.py: each adapter schema class builds PEFT's config in `to_config()`.
AdaloraConfig extends LoraConfig (every release), so it inherits every LoRA key the schema
accepts, but its own to_config() builds peft.AdaLoraConfig from the AdaLoRA keys and r / alpha /
dropout / bias only. The keys each release's builder leaves out were read at every tag from v0.8
to v0.17.8 (the schema's fields against the `self.<field>` its to_config reads); LoRA's own
builder leaves out none but use_rslora / use_dora in v0.10.2 (loraplus_lr_ratio, not passed from
v0.13.0, is read by ludwig/modules/optimization_modules.py instead).
"""

from __future__ import annotations

from linter.registry import WARNING, register

from .release_table import Range, ReleaseTable, Row

_PEFT = "ludwig/schema/llms/peft.py"
_LAST_READ = "v0.17.8"


def _adapter(kind: str, key: str, test):
    def applies(f) -> bool:
        written = f(key)
        return (f("file.kind") == "ludwig" and f("model.kind") == "llm" and isinstance(f("adapter.kind"), str)
                and f("adapter.kind").lower() == kind and written is not None and test(written))
    return applies


def _true(value) -> bool:
    return value is True


def _nonempty(value) -> bool:
    return bool(value)


def _not_default(value) -> bool:
    return value is not True  # False or a method name (gaussian, pissa, olora, eva, loftq, ...)


def _adalora(key: str, spelled: str, test, since: str, added: str, effect: str) -> Row:
    return Row("TRN095", (Range("ludwig", since, None),), _adapter("adalora", key, test), key,
               f"adapter.{spelled} with an adalora adapter",
               f"AdaloraConfig.to_config builds PEFT's AdaLoraConfig without {spelled}, so {effect}",
               f"{_PEFT} AdaloraConfig.to_config; the key reaches AdaloraConfig from LoraConfig in {added}", True)


_VARIANT = "the run trains and saves a plain LoRA adapter while the config (and the saved model config) name it"
ROWS = (
    # a707840b6 (#3948, v0.10.2) adds use_rslora / use_dora to LoraConfig but not to to_config;
    # 337f40746 (#3984, v0.10.3) passes them ("Actually add support for RSLoRA and DoRA").
    Row("TRN095", (Range("ludwig", "0.10.2", "0.10.3"),), _adapter("lora", "adapter.dora", _true), "adapter.dora",
        "adapter.use_dora with a lora adapter",
        f"LoraConfig.to_config builds PEFT's LoraConfig without use_dora: {_VARIANT} DoRA",
        "ludwig-ai/ludwig#3984; fixed in Ludwig 0.10.3 (337f40746)"),
    Row("TRN095", (Range("ludwig", "0.10.2", "0.10.3"),), _adapter("lora", "adapter.rslora", _true), "adapter.rslora",
        "adapter.use_rslora with a lora adapter",
        f"LoraConfig.to_config builds PEFT's LoraConfig without use_rslora: the adapter is scaled by alpha / r, not "
        f"alpha / sqrt(r), silently; {_VARIANT} rank-stabilised",
        "ludwig-ai/ludwig#3984; fixed in Ludwig 0.10.3 (337f40746)"),
    _adalora("adapter.target_modules", "target_modules", _nonempty, "0.9", "v0.9",
             "PEFT wraps its own default AdaLoRA targets for the model type (q_proj and v_proj for Llama), or "
             "refuses a model type it has none for, instead of the modules written"),
    _adalora("adapter.dora", "use_dora", _true, "0.10.2", "v0.10.2 (a707840b6)",
             "the run trains plain AdaLoRA while the config says DoRA"),
    _adalora("adapter.rslora", "use_rslora", _true, "0.10.2", "v0.10.2 (a707840b6)",
             "the adapter keeps the alpha / r scaling while the config says rank-stabilised"),
    _adalora("adapter.init_weights", "init_lora_weights", _not_default, "0.16.0", "v0.16.0 (5fe1e8701)",
             "the adapter starts from PEFT's default initialisation, not the method written"),
    _adalora("adapter.alpha_pattern_keys", "alpha_pattern", _nonempty, "0.16.0", "v0.16.0 (5fe1e8701)",
             "every wrapped module keeps the one alpha"),
    _adalora("adapter.layer_replication", "layer_replication", _nonempty, "0.16.0", "v0.16.0 (5fe1e8701)",
             "no layer is replicated"),
)


@register
class LudwigAdapterKeyDropped(ReleaseTable):
    """TRN095 ludwig-adapter-key-dropped

    ## What it does
    Flags a key of a Ludwig LLM config's `adapter:` block that the schema accepts but the
    Ludwig release's PEFT config builder never passes to PEFT: `use_dora` / `use_rslora` with
    a `lora` adapter on Ludwig 0.10.2 (pinned, or installed), and, with an `adalora` adapter,
    `target_modules` (Ludwig 0.9 and later), `use_dora` / `use_rslora` (0.10.2 and later) and
    `init_lora_weights`, `alpha_pattern`, `layer_replication` (0.16.0 and later). The AdaLoRA
    rows fire with no Ludwig pin too: no release that accepts those keys passes them.

    ## Why is this bad?
    The config validates and the run trains, but with a different adapter than the one
    written: Ludwig 0.10.2 added `use_dora` / `use_rslora` to the LoRA schema and forgot to
    hand them to `peft.LoraConfig` ("I forgot to actually pass it into the adapter config so
    they never got used", ludwig-ai/ludwig#3984), so DoRA and rsLoRA runs trained plain LoRA.
    Ludwig's AdaLoRA schema extends the LoRA one, so it accepts every LoRA key, but builds
    `peft.AdaLoraConfig` from the AdaLoRA keys alone: the written target modules are replaced
    by PEFT's defaults for the model type, and the other keys do nothing, with no error.

    ## Example
    `train.yaml`:
        model_type: llm
        base_model: mistralai/Mistral-7B-v0.1
        adapter:
          type: lora
          use_dora: true
        input_features:
          - name: prompt
            type: text
        output_features:
          - name: output
            type: text
        trainer:
          type: finetune
    `requirements.txt`:
        ludwig==0.10.2
    Use instead, in `requirements.txt`:
        ludwig==0.10.3

    ## Fix safety
    No fix: upgrading Ludwig, or choosing a `lora` adapter for the LoRA keys, is the author's call.

    ## References
    - ludwig/schema/llms/peft.py LoraConfig.to_config (use_rslora / use_dora added by a707840b6,
      #3948, v0.10.2; passed by 337f40746, #3984, v0.10.3) and AdaloraConfig.to_config (read at
      every tag v0.8 to v0.17.8); init_lora_weights, alpha_pattern, layer_replication from
      5fe1e8701 (#4146, v0.16.0)
    - peft tuners/adalora/model.py (target_modules None: the model type's default AdaLoRA targets)
    - ludwig-ai/ludwig#3984, #3948
    """

    code = "TRN095"
    name = "ludwig-adapter-key-dropped"
    severity = WARNING
    triggers = ("adapter.dora", "adapter.rslora", "adapter.target_modules", "adapter.init_weights",
                "adapter.alpha_pattern_keys", "adapter.layer_replication")
    rows = ROWS

    def unpinned_message(self, row: Row, facts) -> str:
        return (f"{row.what}: {row.failure}, in every Ludwig release that accepts the key (from "
                f"{row.ranges[0].first}, read up to {_LAST_READ}) ({row.reference})")

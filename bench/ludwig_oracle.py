"""Ludwig's own validator as the oracle for TRN034-TRN036 (the table of Ludwig's config checks).

Run where Ludwig is installed (it needs torch; Ludwig >= 0.11 needs Python 3.12):

    TRAINLINT=.venv/bin/trainlint python bench/ludwig_oracle.py

Each case is written as a config, handed to Ludwig's `ModelConfig.from_dict` (the call
`ludwig train` makes), and linted by trainlint with the installed Ludwig pinned beside it. A case
agrees when Ludwig refuses it and a TRN034-TRN036 finding fires, or Ludwig accepts it and none
does. The base model is a two-layer config written locally, so nothing is downloaded.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# trainlint may live in another environment than Ludwig: TRAINLINT=/path/to/trainlint
TRAINLINT = os.environ.get("TRAINLINT", "trainlint")
_ECD = {"model_type": "ecd", "base_model": None, "adapter": None, "trainer": None}


def _pretrained_text(encoder: str) -> dict:
    """A text input whose encoder loads a checkpoint: written for auto_transformer (it has no
    default), the schema's default for the named HF encoders (bert: bert-base-uncased)."""
    written = {"pretrained_model_name_or_path": "meta-llama/Llama-2-7b-hf"} if encoder == "auto_transformer" else {}
    return {"name": "instruction", "type": "text", "encoder": {"type": encoder, **written}}


BASE = {"model_type": "llm", "base_model": "<local>",
        "input_features": [{"name": "instruction", "type": "text"}],
        "output_features": [{"name": "output", "type": "text"}],
        "adapter": {"type": "lora"}, "trainer": {"type": "finetune"}}
CASES = {
    "accepted: lora finetune": {},
    "accepted: 4-bit with lora": {"quantization": {"bits": 4}},
    "finetune with a category output": {"output_features": [{"name": "label", "type": "category"}]},
    "adapter with trainer none": {"trainer": {"type": "none"}},
    "4-bit without an adapter": {"adapter": None, "quantization": {"bits": 4}},
    "two text inputs": {"input_features": [{"name": "a", "type": "text"}, {"name": "b", "type": "text"}]},
    "template without a column": {"prompt": {"template": "Answer this."}},
    "retrieval without template or task": {"prompt": {"retrieval": {"type": "random", "k": 1}}},
    # ECD (check_llm_text_encoder_is_not_used_with_ecd, from 0.9.2): a pretrained text encoder with a text output
    "ECD: pretrained encoder, text output": {**_ECD, "input_features": [_pretrained_text("auto_transformer")]},
    "ECD: bert encoder (default checkpoint), text output": {**_ECD, "input_features": [_pretrained_text("bert")]},
    "ECD: default text encoder, text output": _ECD,
    "ECD: parallel_cnn encoder, text output": {
        **_ECD, "input_features": [{"name": "instruction", "type": "text", "encoder": {"type": "parallel_cnn"}}]},
    "ECD: encoder without a type, with a checkpoint": {
        **_ECD, "input_features": [{"name": "instruction", "type": "text",
                                    "encoder": {"pretrained_model_name_or_path": "gpt2"}}]},
    "ECD: parallel_cnn with a checkpoint key": {
        **_ECD, "input_features": [{"name": "instruction", "type": "text",
                                    "encoder": {"type": "parallel_cnn", "pretrained_model_name_or_path": "gpt2"}}]},
    "ECD: pre-0.6 `encoder: bert` string": {**_ECD, "input_features": [
        {"name": "instruction", "type": "text", "encoder": "bert"}]},
    "ECD: defaults section picks bert": {**_ECD, "defaults": {"text": {"encoder": {"type": "bert"}}}},
    "ECD: bert with an empty checkpoint": {**_ECD, "input_features": [
        {"name": "instruction", "type": "text", "encoder": {"type": "bert", "pretrained_model_name_or_path": ""}}]},
    "ECD: pretrained encoder, category output": {
        **_ECD, "input_features": [_pretrained_text("auto_transformer")],
        "output_features": [{"name": "label", "type": "category"}]},
}


def main() -> None:
    # Ludwig 0.10 imports torchtext, whose compiled library does not load beside newer torch;
    # validation does not use it.
    for name in ("torchtext", "torchtext.vocab", "torchtext.transforms", "torchtext.data", "torchtext.data.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["torchtext"].__version__ = "0.16.0"
    import ludwig
    import yaml
    from ludwig.schema.model_types.base import ModelConfig

    work = Path(tempfile.mkdtemp())
    (work / "model").mkdir()
    (work / "model" / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 512}))
    (work / "requirements.txt").write_text(f"ludwig=={ludwig.__version__}\n")
    agree = 0
    print(f"Ludwig {ludwig.__version__}\n\n| case | Ludwig | trainlint | agree |\n|---|---|---|---|")
    for index, (name, change) in enumerate(CASES.items()):
        config = {**copy.deepcopy(BASE), "base_model": str(work / "model"), **change}
        config = {key: value for key, value in config.items() if value is not None}
        path = work / f"case{index}.yaml"
        path.write_text(yaml.safe_dump(config))
        try:
            ModelConfig.from_dict(copy.deepcopy(config))
            refused = None
        except Exception as error:  # noqa: BLE001 - the validator's verdict is what is measured
            refused = str(error).splitlines()[0][:90]
        done = subprocess.run([TRAINLINT, "check", str(path), "--no-detect", "--select", "TRN034,TRN035,TRN036",
                               "--format", "json"], capture_output=True, text=True, cwd=ROOT)
        codes = sorted({finding["code"] for finding in json.loads(done.stdout or "[]")})
        same = bool(refused) == bool(codes)
        agree += same
        print(f"| {name} | {'refused: ' + refused if refused else 'accepted'} | {', '.join(codes) or 'silent'} | "
              f"{'yes' if same else 'NO'} |")
    print(f"\n{agree} of {len(CASES)} cases agree.")


if __name__ == "__main__":
    main()

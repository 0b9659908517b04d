"""LLaMA-Factory multimodal data against the template's multimodal plugin (TRN097) and the image
tokens one image expands to against cutoff_len (TRN098)."""

from __future__ import annotations

from linter.registry import ERROR, WARNING, Rule, register
from linter.versions import older_than

_MODALITY = {"images": "image", "videos": "video", "audios": "audio"}


def _media(config) -> dict[str, frozenset[str]]:
    """{dataset name: its modalities} from data.media_sets (`name=images,videos`)."""
    found = {}
    for item in config.value("data.media_sets") or ():
        name, _, columns = item.rpartition("=")
        found[name] = frozenset(_MODALITY[column] for column in columns.split(",") if column in _MODALITY)
    return found


def _preprocessed(config) -> bool:
    """Does the launch run the dataset through the template's plugin? Every stage's processor but
    pt's (data/processor(s)/pretrain.py never calls mm_plugin), unless a saved tokenized_path loads."""
    return (config.value("file.kind") == "llamafactory" and config.value("training.stage") != "pt"
            and config.value("data.tokenized_path") is None and config.value("model.visual_inputs") is not True)


def _dataset_span(config, name: str):
    key = "data.train_sets" if name in (config.value("data.train_sets") or ()) else "data.eval_sets"
    return config.span(key)


@register
class MediaDatasetWithTextTemplate(Rule):
    """TRN097 image-dataset-with-text-template

    ## What it does
    Flags a LLaMA-Factory config that names a dataset with images (videos, audios) and a
    `template` whose multimodal plugin has no token for them: a text template such as `qwen`,
    `llama3` or `default` keeps register_template's base plugin, while the model's multimodal
    template (`qwen2_vl`, `llava`, ...) carries the image plugin. The dataset's media columns come
    from the dataset registry the launch reads (`dataset_dir`/dataset_info.json beside the config
    or above it; LLaMA-Factory's own data/dataset_info.json for a built-in name such as
    `mllm_demo` that no registry here defines), the template's plugin from each release's
    data/template.py (linter/data/llamafactory_templates.json, `plugins`). A pinned release is
    judged by its own table; unpinned, the template must lack the plugin in every release that
    registers it. Stage `pt` (whose processor never calls the plugin), a saved `tokenized_path`
    and `visual_inputs` (0.7.0 to 0.8.3) are left alone.

    ## Why is this bad?
    From 0.9.0, `BasePlugin._validate_input` (data/mm_plugin.py) raises "This model does not
    support image input." (from 0.9.2 "... Please check whether the correct `template` is used.")
    at the first sample with an image, while the dataset is tokenized. Before 0.9.0 there is no
    plugin: without `visual_inputs` the loader has no processor, the images are dropped, and the
    model trains on the text alone. Either way the run never sees the images.

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: Qwen/Qwen2-7B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: mllm_demo,identity
        template: qwen
        output_dir: out
    Use instead (a text model: drop the image dataset; a vision model: its template):
        model_name_or_path: Qwen/Qwen2-VL-7B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: mllm_demo,identity
        template: qwen2_vl
        output_dir: out

    ## Fix safety
    No fix: drop the dataset or change the model and its template, the author's choice.

    ## References
    - hiyouga/LLaMA-Factory src/llamafactory/data/mm_plugin.py BasePlugin._validate_input (1874d579c,
      first in v0.9.0; reworded by v0.9.2; unchanged at ff6d4d12e), data/template.py register_template
      (mm_plugin default get_mm_plugin(name="base")), data/processor/pretrain.py (no plugin call);
      v0.8.3 data/processors/supervised.py (images read only with a processor, visual_inputs)
    - data/dataset_info.json mllm_demo (`columns.images`, read at 73d4a8e65 and ff6d4d12e);
      data/parser.py DatasetAttr (images / videos / audios columns)
    - hiyouga/LLaMA-Factory#5958, #5974, #6375, #6417, #6703, #8825
    """

    code = "TRN097"
    name = "image-dataset-with-text-template"
    severity = ERROR
    triggers = ("data.media_sets",)

    def check(self, run, context):
        for config in run.configs:
            media, template = _media(config), config.value("data.chat_template")
            if not media or not isinstance(template, str) or not _preprocessed(config):
                continue
            found = config.version("llamafactory")
            judged = _supported(template, found[0] if found else None)
            if judged is None:
                continue
            supported, where, old = judged
            for name, modalities in media.items():
                missing = sorted(modalities - supported)
                if not missing:
                    continue
                kinds = " and ".join(missing)
                if old:
                    why = (f"LLaMA-Factory {where} has no multimodal plugin: without visual_inputs the loader has no "
                           f"processor, so {name}'s {kinds} inputs are dropped and the model trains on the text alone")
                else:
                    why = (f"template {template} has no {kinds} plugin {where}, so tokenizing {name} stops at its first "
                           f"sample (\"This model does not support {missing[0]} input.\", data/mm_plugin.py "
                           "BasePlugin._validate_input)")
                    if old is None:  # judged over every release
                        why += ("; releases before 0.9.0 have no plugin and drop the media without visual_inputs, "
                                "training on the text alone")
                source = config.value("data.media_registry")
                advice = ("set visual_inputs: true with a vision model " if old else "use the model's multimodal "
                          f"template {_suggest(template, missing, found[0] if found else None)}")
                yield self.finding(config, _dataset_span(config, name),
                                   f"{name} has {kinds} inputs ({source}) but {why}; {advice}or drop {name}")


def _supported(template: str, version: str | None):
    """(the modalities the template's plugin takes, where that is read, True for a release before
    plugins / False for one release / None for every release), or None where it is not known (a
    template the release does not register: TRN067)."""
    from linter import template_registry as registry

    if version is not None and older_than(version, "0.9.0") is True:
        names = registry.registered("llamafactory", version)
        return (frozenset(), version, True) if names is not None and template in names else None
    if version is not None and version in registry.plugin_versions("llamafactory"):
        found = registry.plugin("llamafactory", version, template)
        return (found[1], f"in LLaMA-Factory {version}", False) if found is not None else None
    plugins = [registry.plugin("llamafactory", release, template) for release in registry.plugin_versions("llamafactory")]
    plugins = [found for found in plugins if found is not None]
    if not plugins:
        return None
    return frozenset().union(*(found[1] for found in plugins)), "in any LLaMA-Factory release", None


def _suggest(template: str, missing: list[str], version: str | None) -> str:
    """A few templates of the release (else HEAD) with a plugin for the modalities, named like `template`."""
    from linter import template_registry as registry

    release = version if version in registry.plugin_versions("llamafactory") else "head"
    stem = template.split("_")[0].rstrip("0123456789.")
    names = sorted(name for name in (registry.registered("llamafactory", release) if release != "head"
                                     else registry.ever_registered("llamafactory")) or ()
                   if name.startswith(stem) and (found := registry.plugin("llamafactory", release, name))
                   and set(missing) <= found[1])
    return f"({', '.join(names[:4])}, ...) " if len(names) > 4 else f"({', '.join(names)}) " if names else ""


# ---- TRN098: how the pinned build reads the image size keys, and how many tokens an image at that cap is.
# (label, the key it reads, "side" (longest side) or "pixels" (pixel count), its default, cutoff_len's default),
# from hparams/model_args.py and data_args.py at each tag and the commits inside each development cycle:
# v0.9.0 image_resolution 512 = the longest side (mm_plugin._regularize_images), cutoff_len 1024; 1e6f96508
# (2024-11-10) cutoff_len 2048; 5003820a6 (2024-11-23) image_resolution 512 * 512 = a pixel count
# (BasePlugin._preprocess_image), both first in v0.9.1; f5cd17881 (#6976, 2025-02-18) image_max_pixels
# 768 * 768 (image_resolution gone), first in v0.9.2, unchanged at ff6d4d12e.
_SIDE_090 = ("0.9.0", "image_resolution", "side", 512, 1024)
_SIDE_091 = ("0.9.1.dev0 from 1e6f96508 before 5003820a6", "image_resolution", "side", 512, 2048)
_PIXELS_091 = ("0.9.1", "image_resolution", "pixels", 512 * 512, 2048)
_PIXELS_092 = ("0.9.2 and later", "image_max_pixels", "pixels", 768 * 768, 2048)
_READINGS = {
    "0.9.0": (_SIDE_090,), "0.9.1": (_PIXELS_091,),
    # development builds span the changes: every reading of their commits (0.9.1.dev0 from f7e85cd7d to
    # c18581f0a, 0.9.2.dev0 from 5bec82ca9 to 1890d3daf)
    "0.9.1.dev0": (("0.9.1.dev0 before 1e6f96508",) + _SIDE_090[1:], _SIDE_091,
                   ("0.9.1.dev0 from 5003820a6",) + _PIXELS_091[1:]),
    "0.9.2.dev0": (("0.9.2.dev0 before f5cd17881",) + _PIXELS_091[1:], ("0.9.2.dev0 from f5cd17881",) + _PIXELS_092[1:]),
}
# Pixels per image token, by template: (the side in pixels of the square one merged token covers, the smallest
# side the model's processor makes of an image, the first release that registers the template). Every plugin
# below counts image_seqlen = image_grid_thw.prod() // merge_size ** 2 (data/mm_plugin.py Qwen2VLPlugin,
# Qwen3VLPlugin, Qwen2OmniPlugin.process_messages), and the processor's smart_resize rounds each side to a
# multiple of patch_size * merge_size (transformers image_processing_qwen2_vl.py smart_resize).
# - qwen2_vl (Qwen2-VL, Qwen2.5-VL): 14-px patches merged 2 x 2 = 28 px, sides at least 56 (min_pixels 56 * 56);
#   LLaMA-Factory's tests/data/test_mm_plugin.py test_qwen2_vl_plugin: a 32 x 32 image of Qwen2-VL-7B-Instruct
#   is 4 tokens. Registered from v0.9.0.
# - qwen2_omni (Qwen2.5-Omni): the same 4 tokens for the same 32 x 32 image in test_qwen2_omni_plugin
#   (Qwen2.5-Omni-7B), so 28 px and sides at least 56. Registered from v0.9.3. (qwen3_omni shares the plugin
#   but not, as far as LLaMA-Factory's source shows, the patch size: left out.)
# - qwen3_vl, qwen3_vl_nothink (Qwen3-VL): transformers models/qwen3_vl/configuration_qwen3_vl.py
#   Qwen3VLVisionConfig patch_size=16, spatial_merge_size=2, so 32 px; test_qwen3_vl_plugin: a 32 x 32 frame of
#   Qwen3-VL-30B-A3B-Instruct is 1 token. The smallest side is taken as one merged token (32), the least
#   smart_resize makes; the hub's min_pixels may be larger, which only adds tokens. Registered from v0.9.4
#   (0761a4448, #9196). (qwen3_5 / qwen3_6 share the plugin; their models' patch size is not confirmed here.)
_MODELS = {"qwen2_vl": (28, 56, "0.9.0"), "qwen2_omni": (28, 56, "0.9.3"),
           "qwen3_vl": (32, 32, "0.9.4"), "qwen3_vl_nothink": (32, 32, "0.9.4")}


def _readings(version: str | None, template: str = "qwen2_vl") -> tuple:
    """Every reading of the image size keys the build may have; all of them (of the releases that
    register `template`) where it is unknown; none where the build predates the template."""
    since = _MODELS[template][2]
    if version is None:
        # the releases each reading covers: 0.9.0, 0.9.1, and 0.9.2 onwards (which has every template here)
        older = tuple(reading for reading, last in ((_SIDE_090, "0.9.0"), (_PIXELS_091, "0.9.1"))
                      if older_than(last, since) is not True)
        return older + (_PIXELS_092,)
    if older_than(version, since) is True:
        return ()  # the build has no such template (TRN067)
    if version in _READINGS:
        return _READINGS[version]
    return (_PIXELS_092,) if older_than(version, "0.9.2") is False else ()


def _tokens(reading, value: int, template: str) -> int:
    """Image tokens of a square image at the cap: its side (or the square root of the pixel count)
    rounded to a multiple of the token's side, at least the model's smallest side, squared over the token."""
    patch, smallest, _ = _MODELS[template]
    side = value if reading[2] == "side" else int(value ** 0.5)
    return max(round(side / patch), smallest // patch) ** 2


@register
class MultimodalCutoffBelowImageTokens(Rule):
    """TRN098 multimodal-cutoff-below-image-tokens

    ## What it does
    Flags a LLaMA-Factory multimodal SFT config whose `cutoff_len` is shorter than the image
    tokens of one image at the size cap the release reads: `image_resolution` (0.9.0: the longest
    side, default 512; 0.9.1: a pixel count, default 512 * 512) or `image_max_pixels` (from 0.9.2,
    default 768 * 768), over the pixels per image token of the template's model (qwen2_vl, for
    Qwen2-VL and Qwen2.5-VL, and qwen2_omni, for Qwen2.5-Omni: 28 x 28; qwen3_vl and
    qwen3_vl_nothink, for Qwen3-VL: 32 x 32). It fires only where a named dataset has images (its
    registry, or LLaMA-Factory's own for mllm_demo) and every reading the LLaMA-Factory build may
    have fails: a development build that spans a change (0.9.1.dev0: image_resolution became a
    pixel count in 5003820a6) counts each reading, and a pixel count below the model's smallest
    image (56 x 56 for Qwen2-VL) shrinks every image to a few tokens, a failure too. Unpinned,
    every release that registers the template must fail (a release that does not know the
    written key refuses it).

    ## Why is this bad?
    The plugin expands each image placeholder to all its tokens before the supervised processor
    truncates the prompt to `cutoff_len` (data/processor/supervised.py, infer_seqlen), so an image
    larger than the cutoff is cut inside its placeholder; the model's forward then fails with
    "Image features and image tokens do not match" when such a sample is drawn, hours into
    training. Later releases only add the hint "Please increase `cutoff_len` if a visual
    placeholder was truncated".

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: Qwen/Qwen2-VL-2B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        dataset: mllm_demo
        template: qwen2_vl
        cutoff_len: 512
        output_dir: out
    `requirements.txt`:
        llamafactory==0.9.4
    Use instead:
        model_name_or_path: Qwen/Qwen2-VL-2B-Instruct
        stage: sft
        do_train: true
        finetuning_type: full
        dataset: mllm_demo
        template: qwen2_vl
        cutoff_len: 2048
        output_dir: out

    ## Fix safety
    No fix: raise cutoff_len or lower the image cap, the author's trade-off.

    ## References
    - hiyouga/LLaMA-Factory src/llamafactory/data/mm_plugin.py (v0.9.0 _regularize_images: the longest
      side; 5003820a6 BasePlugin._preprocess_image: a pixel count; Qwen2VLPlugin.process_messages:
      image_grid_thw.prod() // merge_size ** 2), hparams/model_args.py (image_resolution, image_max_pixels
      f5cd17881 #6976), hparams/data_args.py cutoff_len (1024 in v0.9.0, 2048 from 1e6f96508),
      data/processor(s)/supervised.py (truncation after the expansion), tests/data/test_mm_plugin.py
      test_qwen2_vl_plugin, test_qwen2_omni_plugin, test_qwen3_vl_plugin (read at ff6d4d12e); Qwen3VLPlugin
      from 0761a4448 (#9196, v0.9.4)
    - huggingface/transformers src/transformers/models/qwen3_vl/configuration_qwen3_vl.py
      Qwen3VLVisionConfig (patch_size=16, spatial_merge_size=2)
    - hiyouga/LLaMA-Factory#5964, #5968, #6559, #6844, #9313, #8226, #7363
    """

    code = "TRN098"
    name = "multimodal-cutoff-below-image-tokens"
    severity = WARNING
    triggers = ("data.media_sets",)

    def check(self, run, context):
        for config in run.configs:
            template = config.value("data.chat_template")
            if (template not in _MODELS or not _preprocessed(config)
                    or not any("image" in modalities for modalities in _media(config).values())):
                continue
            found = config.version("llamafactory")
            readings = _readings(found[0] if found else None, template)
            verdicts = [_verdict(config, reading, template) for reading in readings]
            if not verdicts or None in verdicts or not any(kind == "cut" for kind, _, _ in verdicts):
                continue
            said: dict[str, list[str]] = {}  # what a reading does -> the builds that read it so
            for _, label, core in verdicts:
                said.setdefault(core, []).append(label)
            readings_said = "; ".join(core if len(verdicts) == 1 else f"{' and '.join(labels)}: {core}"
                                      for core, labels in said.items())
            on = f"LLaMA-Factory {found[0]} ({found[1]})" if found else "every LLaMA-Factory release with template " + template
            key = "media.image_max_pixels" if _written(config, "media.image_max_pixels") else "media.image_resolution"
            span = config.span("sequence.max_length") if _written(config, "sequence.max_length") else config.span(key)
            yield self.finding(
                config, span,
                f"{on}: {readings_said}; the plugin expands each image placeholder before the prompt is cut to "
                "cutoff_len, so an image over the cutoff is cut inside its placeholder and the forward fails (\"Image features "
                "and image tokens do not match\") when the sample is drawn; raise cutoff_len or lower the image cap")


def _written(config, key: str) -> bool:
    found = config.get(key)
    return found is not None and not found.origin.is_default


def _verdict(config, reading, template: str):
    """("cut" | "other", the builds that read the keys so, what this reading does) where it fails; None
    where it does not."""
    label, key, semantics, default, cutoff_default = reading
    other = "media.image_max_pixels" if key == "image_resolution" else "media.image_resolution"
    if _written(config, other):
        written_as = "image_max_pixels" if key == "image_resolution" else "image_resolution"
        return "other", label, f"{written_as} is not a key there and is refused"
    ir_key = "media.image_resolution" if key == "image_resolution" else "media.image_max_pixels"
    value = config.value(ir_key) if _written(config, ir_key) else default
    cutoff = config.value("sequence.max_length") if _written(config, "sequence.max_length") else cutoff_default
    if not isinstance(value, int) or isinstance(value, bool) or not isinstance(cutoff, int) or value <= 0:
        return None
    patch, smallest, _ = _MODELS[template]
    if semantics == "pixels" and value < smallest * smallest:
        side = int(value ** 0.5)
        return "other", label, (f"{key} {value} is a pixel count, so every image is shrunk to about {side} x "
                         f"{side} pixels, below the model's smallest image")
    tokens = _tokens(reading, value, template)
    if tokens <= cutoff:
        return None
    cap = f"{value} px a side" if semantics == "side" else f"{value} pixels"
    return "cut", label, (f"images are capped at {key} {cap}, and one image at the cap is {tokens} image tokens "
                   f"({patch} x {patch} pixels each), more than cutoff_len {cutoff}")

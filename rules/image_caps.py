"""LLaMA-Factory's image size cap as the pinned release reads it (TRN104): 0.9.1 reads
image_resolution as a pixel count where 0.9.0 read it as the longest side."""

from __future__ import annotations

from linter.registry import WARNING, Rule, register

from .multimodal_data import _READINGS, _written

# The most an image_resolution may be and still be read, with certainty, as a longest side carried over
# from 0.9.0: 32 * 32 pixels. Read as a pixel count (0.9.1), such a value caps every image at 32 x 32
# pixels or less, 1/256 of 0.9.1's own default (512 * 512), and no more than the floor LLaMA-Factory later
# puts under every image (image_min_pixels, default 32 * 32, f5cd17881, v0.9.2); read as a side it is an
# ordinary image side (0.9.0's default is 512). A larger value (e.g. 2048, a 45 x 45 image) may be a
# deliberate small cap: left alone.
_MOST_AS_SIDE = 32 * 32


def _pixel_count_builds(version: str) -> bool:
    """Does every reading the build may have take image_resolution as a pixel count?"""
    readings = _READINGS.get(version, ())
    return bool(readings) and all(key == "image_resolution" and semantics == "pixels"
                                  for _, key, semantics, _, _ in readings)


@register
class ImageResolutionReadAsPixelCount(Rule):
    """TRN104 image-resolution-read-as-pixel-count

    ## What it does
    Flags a LLaMA-Factory config whose `image_resolution` is at most 32 * 32 = 1024 where the
    pinned release reads that key as a pixel count (0.9.1: 5003820a6 changed it from the longest
    side, 0.9.0's reading, to the most pixels of an image, default 512 * 512). A value that small
    is a side carried over from a 0.9.0 config (0.9.0's default is 512): as a pixel count it caps
    every image at 32 x 32 pixels or less. It fires only where the release is pinned and reads the
    key so in every build (0.9.1; not 0.9.1.dev0, whose early commits read a side), not for
    stage `pt`, whose workflow never runs the multimodal plugin.

    ## Why is this bad?
    `BasePlugin._preprocess_image` (data/mm_plugin.py) resizes every image whose width * height
    is over image_resolution by sqrt(image_resolution / (width * height)): image_resolution 512
    leaves about 22 x 22 pixels of every image, in training (the plugin's token count and the
    collator's inputs) and in chat alike. Nothing fails: the model trains on thumbnails, and a
    processor such as Qwen2-VL's scales them back up to its smallest input.

    ## Example
    `llamafactory.yaml`:
        model_name_or_path: Qwen/Qwen2-VL-7B-Instruct
        stage: sft
        do_train: true
        finetuning_type: lora
        dataset: mllm_demo
        template: qwen2_vl
        image_resolution: 512
        output_dir: out
    `requirements.txt`:
        llamafactory==0.9.1
    Use instead (the pixel count of a 512 x 512 image, 0.9.1's default):
        image_resolution: 262144

    ## Fix safety
    No fix: the pixel count that matches the intended side depends on the images' aspect ratio,
    the author's call (side * side keeps a square image's size).

    ## References
    - hiyouga/LLaMA-Factory src/llamafactory/data/mm_plugin.py BasePlugin._preprocess_image and
      hparams/model_args.py image_resolution (v0.9.0: "Keeps the height or width of image below
      this resolution", default 512; 5003820a6, first in v0.9.1: "Keeps the number of pixels of
      image below this resolution", default 512 * 512; image_max_pixels / image_min_pixels 32 * 32
      replace it in f5cd17881, v0.9.2)
    """

    code = "TRN104"
    name = "image-resolution-read-as-pixel-count"
    severity = WARNING
    triggers = ("media.image_resolution",)

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "llamafactory" or config.value("training.stage") == "pt":
                continue
            value = config.value("media.image_resolution")
            if (not _written(config, "media.image_resolution") or not isinstance(value, int)
                    or isinstance(value, bool) or not 0 < value <= _MOST_AS_SIDE):
                continue
            found = config.version("llamafactory")
            if found is None or not _pixel_count_builds(found[0]):
                continue
            side = int(value ** 0.5)
            yield self.finding(
                config, config.span("media.image_resolution"),
                f"LLaMA-Factory {found[0]} ({found[1]}) reads image_resolution as the most pixels of an image "
                f"(0.9.0 read it as the longest side), so image_resolution {value} shrinks every image to about "
                f"{side} x {side} pixels (data/mm_plugin.py BasePlugin._preprocess_image); write a pixel count "
                f"such as {value * value} ({value} x {value}) or drop the key for the default 512 * 512")

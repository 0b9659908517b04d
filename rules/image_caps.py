"""LLaMA-Factory's image and video frame size caps as the pinned release reads them (TRN104): 0.9.1
reads image_resolution and video_resolution as pixel counts where 0.9.0 read them as the longest side."""

from __future__ import annotations

from linter.registry import WARNING, Rule, register

from .multimodal_data import _READINGS, _written

# The most an image_resolution may be and still be read, with certainty, as a longest side carried over
# from 0.9.0: 32 * 32 pixels. Read as a pixel count (0.9.1), such a value caps every image at 32 x 32
# pixels or less, 1/256 of 0.9.1's own default (512 * 512), and no more than the floor LLaMA-Factory later
# puts under every image (image_min_pixels, default 32 * 32, f5cd17881, v0.9.2); read as a side it is an
# ordinary image side (0.9.0's default is 512). A larger value (e.g. 2048, a 45 x 45 image) may be a
# deliberate small cap: left alone. video_resolution changed in the same commit (5003820a6, 0.9.0's default 128,
# 0.9.1's 128 * 128); a frame side of at most 32 pixels read as a count is at most 32 x 32 pixels, 1/16 of 0.9.1's
# default frame.
_MOST_AS_SIDE = 32 * 32
# (IR key, LLaMA-Factory key, what it caps, 0.9.1's default as written in model_args.py)
_CAPS = (("media.image_resolution", "image_resolution", ("an image", "image"), "512 * 512"),
         ("media.video_resolution", "video_resolution", ("a video frame", "video frame"), "128 * 128"))


def _pixel_count_builds(version: str) -> bool:
    """Does every reading the build may have take image_resolution (and with it video_resolution, which
    changed in the same commit) as a pixel count?"""
    readings = _READINGS.get(version, ())
    return bool(readings) and all(key == "image_resolution" and semantics == "pixels"
                                  for _, key, semantics, _, _ in readings)


@register
class ImageResolutionReadAsPixelCount(Rule):
    """TRN104 image-resolution-read-as-pixel-count

    ## What it does
    Flags a LLaMA-Factory config whose `image_resolution` or `video_resolution` is at most
    32 * 32 = 1024 where the pinned release reads that key as a pixel count (0.9.1: 5003820a6
    changed both from the longest side, 0.9.0's reading, to the most pixels of an image, default
    512 * 512, or of a video frame, default 128 * 128). A value that small is a side carried over
    from a 0.9.0 config (0.9.0's defaults are 512 and 128): as a pixel count it caps every image
    or frame at 32 x 32 pixels or less. It fires only where the release is pinned and reads the
    keys so in every build (0.9.1; not 0.9.1.dev0, whose early commits read a side), not for
    stage `pt`, whose workflow never runs the multimodal plugin.

    ## Why is this bad?
    `BasePlugin._preprocess_image` (data/mm_plugin.py) resizes every image whose width * height
    is over image_resolution by sqrt(image_resolution / (width * height)): image_resolution 512
    leaves about 22 x 22 pixels of every image, in training (the plugin's token count and the
    collator's inputs) and in chat alike. `_regularize_videos` passes video_resolution to the same
    resize for every sampled frame (`image_resolution=getattr(processor, "video_resolution", ...)`
    in `_get_mm_inputs`), so video_resolution 128 leaves frames of about 11 x 11 pixels. Nothing
    fails: the model trains on thumbnails, and a processor such as Qwen2-VL's scales them back up
    to its smallest input.

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
      replace it in f5cd17881, v0.9.2); video_resolution likewise (v0.9.0: "Keeps the height or
      width of video below this resolution", default 128; 5003820a6: "Keeps the number of pixels
      of video below this resolution", default 128 * 128; model/patcher.py patch_processor,
      data/mm_plugin.py BasePlugin._regularize_videos and _get_mm_inputs at v0.9.1)
    """

    code = "TRN104"
    name = "image-resolution-read-as-pixel-count"
    severity = WARNING
    triggers = ("media.image_resolution", "media.video_resolution")

    def check(self, run, context):
        for config in run.configs:
            if config.value("file.kind") != "llamafactory" or config.value("training.stage") == "pt":
                continue
            found = None
            for key, name, what, default in _CAPS:
                value = config.value(key)
                if (not _written(config, key) or not isinstance(value, int) or isinstance(value, bool)
                        or not 0 < value <= _MOST_AS_SIDE):
                    continue
                found = found or config.version("llamafactory")
                if found is None or not _pixel_count_builds(found[0]):
                    break
                side = int(value ** 0.5)
                yield self.finding(
                    config, config.span(key),
                    f"LLaMA-Factory {found[0]} ({found[1]}) reads {name} as the most pixels of {what[0]} (0.9.0 "
                    f"read it as the longest side), so {name} {value} shrinks every {what[1]} to about {side} x {side} "
                    f"pixels (data/mm_plugin.py BasePlugin._preprocess_image); write a pixel count such as "
                    f"{value * value} ({value} x {value}) or drop the key for the default {default}")

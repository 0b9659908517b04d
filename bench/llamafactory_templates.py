"""The chat template names each LLaMA-Factory release registers (data/template.py register_template).

    python bench/llamafactory_templates.py [/path/to/hiyouga/LLaMA-Factory.git]

For every release tag (v0.0.9 ... ) and the mirror's HEAD: the module that registers the
templates (src/*/extras/template.py up to v0.2.x, src/*/data/template.py after), every
top-level `register_template(name="...")` call in it (`_register_template` in v0.5.2-v0.9.1,
Template.__post_init__'s `if self.name == "..."` branches in v0.0.9) (a docstring's indented example is not
one), and whether the module raises "Template ... does not exist." for another name
(get_template_and_fix_tokenizer; earlier get_template). Writes linter/data/llamafactory_templates.json,
which TRN067 reads: `releases` maps each tag's version (no "v") to its sorted names, `head` the
names at HEAD (a git install may use them), `raises` the versions whose module refuses an
unregistered name. `plugins` (from v0.9.0, the first release with data/mm_plugin.py) maps each tag's
version (and "head") to the templates registered with a multimodal plugin: `mm_plugin=get_mm_plugin(
name, image_token=..., video_token=..., audio_token=...)` read with `ast`, as [plugin name, the
modalities whose token is given]; a template not listed keeps register_template's default
`get_mm_plugin(name="base")`, whose tokens are all None (BasePlugin._validate_input then refuses
every image, video and audio: "This model does not support image input."). TRN097 and TRN098 read it.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIRROR = Path("/work/.mirror/hiyouga+LLaMA-Factory/repo")
OUT = ROOT / "linter" / "data" / "llamafactory_templates.json"
# `register_template(` (`_register_template(` from v0.5.2 to v0.9.1) at column 0; v0.0.9 chose by
# `if self.name == "..."` inside Template.__post_init__.
_CALL = re.compile(r'^_?register_template\(\s*name\s*=\s*"([^"]+)"|^\s+(?:el)?if self\.name == "([^"]+)"', re.M)
_RAISE = re.compile(r"Template \{[^}]*\} does not exist")


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True).stdout


def template_module(mirror: Path, ref: str) -> tuple[str, str] | None:
    paths = [path for path in git(mirror, "ls-tree", "-r", "--name-only", ref).splitlines()
             if re.fullmatch(r"src/[^/]+/(data|extras)/template\.py", path)]
    if not paths:
        return None
    path = sorted(paths)[0]
    return path, git(mirror, "show", f"{ref}:{path}")


def plugins(text: str) -> dict[str, list]:
    """{template: [plugin, "image,video,..."]} for each top-level register_template call whose
    mm_plugin is a get_mm_plugin(...) call other than the base plugin."""
    found = {}
    for node in ast.parse(text).body:
        call = node.value if isinstance(node, ast.Expr) else None
        if not isinstance(call, ast.Call) or getattr(call.func, "id", None) not in ("register_template", "_register_template"):
            continue
        kwargs = {keyword.arg: keyword.value for keyword in call.keywords}
        name, plugin = kwargs.get("name"), kwargs.get("mm_plugin")
        if not isinstance(name, ast.Constant) or not isinstance(plugin, ast.Call):
            continue
        inner = {keyword.arg: keyword.value for keyword in plugin.keywords}
        kind = plugin.args[0] if plugin.args else inner.get("name")
        kind = kind.value if isinstance(kind, ast.Constant) else None
        tokens = [modality for modality in ("image", "video", "audio") if isinstance(
            inner.get(f"{modality}_token"), ast.Constant) and inner[f"{modality}_token"].value is not None]
        if kind != "base" or tokens:
            found[name.value] = [kind, ",".join(tokens)]
    return dict(sorted(found.items()))


def main() -> None:
    mirror = Path(sys.argv[1]) if len(sys.argv) > 1 else MIRROR
    tags = [tag for tag in git(mirror, "tag", "--sort=v:refname").split() if re.fullmatch(r"v\d+(\.\d+)+", tag)]
    releases, raises, modules, with_plugins = {}, [], {}, {}
    def names(text: str) -> list[str]:
        return sorted({first or second for first, second in _CALL.findall(text)})

    for tag in tags:
        found = template_module(mirror, tag)
        if found is None:
            continue
        path, text = found
        version = tag[1:]
        releases[version] = names(text)
        modules[version] = path
        if "mm_plugin=" in text:
            with_plugins[version] = plugins(text)
        if _RAISE.search(text):
            raises.append(version)
    head = template_module(mirror, "HEAD")
    data = {
        "source": f"hiyouga/LLaMA-Factory, every release tag and HEAD {git(mirror, 'rev-parse', '--short=9', 'HEAD').strip()}: "
                  "top-level register_template(name=...) calls (bench/llamafactory_templates.py)",
        "modules": modules,
        "raises": raises,
        "releases": releases,
        "head": names(head[1]) if head else [],
        "plugins": {**with_plugins, "head": plugins(head[1]) if head else {}},
    }
    OUT.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    for version, names in releases.items():
        print(f"{version}: {len(names)} templates ({modules[version]}){'' if version in raises else ' (no refusal)'}")


if __name__ == "__main__":
    main()

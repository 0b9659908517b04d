"""The FastChat conversation templates each Axolotl-pinned fschat registers, and Axolotl's own.

    python bench/fastchat_conversations.py [/path/to/lm-sys/FastChat.git] [/path/to/axolotl.git]

Axolotl's sharegpt datasets were formatted by fastchat's get_conv_template(conversation)
(prompters.py ShareGPTPrompter, from e7d3e2dbb #578 until fd3b80716 #2021 removed it). For each
fschat that Axolotl's requirements.txt pinned in that time (0.2.34 at v0.4.0; 0.2.36, then the
git commits 5095615 and 27a05b04 on the 0.4.1 main branch): every top-level
`register_conv_template(Conversation(name="..."))` in fastchat/conversation.py. Axolotl's own
registrations (prompt_strategies/sharegpt.py), its chat templates (utils/chat_templates.py) and the names its
schema's ChatTemplate enum accepted are read at each commit listed below. Writes
linter/data/fastchat_conversations.json, which TRN066 reads.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FASTCHAT = Path("/work/.mirror/lm-sys+FastChat/repo")
AXOLOTL = Path("/work/.mirror/axolotl-ai-cloud+axolotl/repo")
OUT = ROOT / "linter" / "data" / "fastchat_conversations.json"
# fschat pins in Axolotl's requirements.txt (git log -G fschat -- requirements.txt)
PINS = {"0.2.34": "v0.2.34", "0.2.36": "v0.2.36", "5095615": "5095615810cf613dba7f27dd155f571fcff976d8",
        "27a05b04": "27a05b04a35510afb1d767ae7e5990cbd278f8fe"}
_CONVERSATION = re.compile(r'^register_conv_template\(\s*Conversation\(\s*name\s*=\s*"([^"]+)"', re.M)
_AXOLOTL_OWN = re.compile(r'register_conv_template\(\s*Conversation\(\s*name\s*=\s*"([^"]+)"')
_CHAT_TEMPLATE = re.compile(r'^ {4,8}"([a-z0-9_]+)": ', re.M)
# Axolotl commits: v0.4.0; 9d4225a05 (#1664, 2024-05-29: normalize_cfg_datasets fills an empty sharegpt
# `conversation` with chat_template); fd3b80716^ (the last commit with sharegpt).
AXOLOTL_REFS = {"v0.4.0": "v0.4.0", "fill": "9d4225a05", "last": "fd3b80716^"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _enum(text: str) -> list[str]:
    """The values of the schema's `class ChatTemplate(str, Enum)` (the chat_template names it accepts)."""
    body = text.split("class ChatTemplate(", 1)[1].split("\nclass ", 1)[0]
    return sorted(set(re.findall(r'^    \w+ = "([^"]+)"', body, re.M)))


def main() -> None:
    fastchat = Path(sys.argv[1]) if len(sys.argv) > 1 else FASTCHAT
    axolotl = Path(sys.argv[2]) if len(sys.argv) > 2 else AXOLOTL
    pins = {pin: sorted(set(_CONVERSATION.findall(git(fastchat, "show", f"{ref}:fastchat/conversation.py"))))
            for pin, ref in PINS.items()}
    own = {name: sorted(set(_AXOLOTL_OWN.findall(git(axolotl, "show", f"{ref}:src/axolotl/prompt_strategies/sharegpt.py"))))
           for name, ref in AXOLOTL_REFS.items()}
    templates = {name: sorted(set(_CHAT_TEMPLATE.findall(git(axolotl, "show", f"{ref}:src/axolotl/utils/chat_templates.py"))))
                 for name, ref in AXOLOTL_REFS.items()}
    schema = {name: _enum(git(axolotl, "show", f"{ref}:src/axolotl/utils/config/models/input/v0_4_1/__init__.py"))
              for name, ref in AXOLOTL_REFS.items() if name != "v0.4.0"}  # v0.4.0 had no pydantic schema
    data = {"source": "lm-sys/FastChat fastchat/conversation.py at each fschat Axolotl pinned; axolotl-ai-cloud/axolotl "
                      "prompt_strategies/sharegpt.py and utils/chat_templates.py (bench/fastchat_conversations.py)",
            "fschat": pins, "axolotl_conversations": own, "axolotl_chat_templates": templates,
            "axolotl_chat_template_enum": schema}
    OUT.write_text(json.dumps(data, indent=1) + "\n")
    for pin, names in pins.items():
        print(f"fschat {pin}: {len(names)} conversations")
    print("axolotl conversations:", own)
    print("axolotl chat templates:", templates)
    print("axolotl ChatTemplate enum:", schema)


if __name__ == "__main__":
    main()

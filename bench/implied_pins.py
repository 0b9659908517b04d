"""The exact versions a pinned framework release installs: linter/data/implied_pins.json.

    python bench/implied_pins.py > linter/data/implied_pins.json

`pip install axolotl==0.10.0` installs transformers==4.52.3, trl==0.18.1, peft==0.15.2 and
accelerate==1.7.0: Axolotl's install requirements pin them exactly, release by release. So a
checkout that pins only `axolotl==0.10.0` still says which transformers, TRL, PEFT and accelerate
read its files, and version-bound rules can answer for them (linter/versions.py find_version).

Source: every release of each package below on PyPI (https://pypi.org/pypi/<name>/json). A
release published as a wheel is read from the wheel's METADATA `Requires-Dist` lines; one published
only as an sdist from the `requires.txt` its setup.py wrote into the sdist's egg-info (the same
`parse_requirements` that runs at install time). Only unconditional requirements count: an extra
(`axolotl[deepspeed]`, the `[deepspeed]` section, `; extra == "..."`) is installed only when
asked for, and a platform marker may not hold. Only an exact `==` pin counts: a range does not
say which version pip picks. Axolotl's setup.py replaces the torch pin (and with it xformers and
autoawq) by whatever torch is installed at build time, so those are never taken from the sdist.
Pre-releases are skipped.

Only facts are written: package names and versions, and the file each was read from.
"""

from __future__ import annotations

import io
import json
import re
import sys
import tarfile
import urllib.request
import zipfile

# The frameworks whose releases pin their dependencies exactly. LLaMA-Factory, Unsloth and Ludwig
# require ranges (requirements.txt / pyproject.toml), which say nothing exact; XTuner did up to 0.1.23
# and pins bitsandbytes==0.45.0 and transformers==4.48.0 from 0.2.0 (requirements/runtime.txt, the
# wheel's Requires-Dist; its 1.0 tags are not on PyPI).
FRAMEWORKS = ("axolotl", "xtuner")
# The packages trainlint's version-bound rules ask about (config.version(...)).
PACKAGES = ("transformers", "trl", "peft", "accelerate", "deepspeed", "bitsandbytes")
# Set from the torch installed where the sdist is built (axolotl setup.py parse_requirements).
BUILD_MACHINE = ("torch", "xformers", "autoawq")

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*==\s*([A-Za-z0-9.+!_-]+)\s*$")


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as response:
        return response.read()


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _exact(lines) -> dict[str, str]:
    pins = {}
    for line in lines:
        match = _REQUIREMENT.match(line)
        if match and _normalise(match.group(1)) not in BUILD_MACHINE:
            pins[_normalise(match.group(1))] = match.group(2)
    return pins


def _from_wheel(data: bytes) -> tuple[dict[str, str], str]:
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        name = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        text = wheel.read(name).decode("utf-8", "replace")
    lines = [line.partition(":")[2].strip() for line in text.splitlines() if line.startswith("Requires-Dist:")]
    return _exact(line for line in lines if ";" not in line), name.split("/", 1)[1]


def _from_sdist(data: bytes) -> tuple[dict[str, str], str] | None:
    with tarfile.open(fileobj=io.BytesIO(data)) as sdist:
        member = next((m for m in sdist.getmembers() if m.name.endswith(".egg-info/requires.txt")), None)
        if member is None:
            return None
        text = sdist.extractfile(member).read().decode("utf-8", "replace")
    base = text.split("\n[", 1)[0]  # the sections after the first `[extra]` are extras
    return _exact(base.splitlines()), member.name.split("/", 1)[1]


def releases(framework: str) -> dict[str, dict]:
    from urllib.parse import urljoin

    index_url = f"https://pypi.org/pypi/{framework}/json"
    index = json.loads(_get(index_url))
    from packaging.version import Version

    found = {}
    for version, files in sorted(index["releases"].items(), key=lambda item: Version(item[0])):
        if Version(version).is_prerelease or not files:
            continue
        wheel = next((f for f in files if f["packagetype"] == "bdist_wheel"), None)
        sdist = next((f for f in files if f["packagetype"] == "sdist"), None)
        # A mirror of PyPI may answer with file URLs relative to the index.
        read = (_from_wheel(_get(urljoin(index_url, wheel["url"]))) if wheel
                else _from_sdist(_get(urljoin(index_url, sdist["url"]))) if sdist else None)
        if read is None:
            continue
        pins, source = read
        if not any(package in pins for package in PACKAGES):
            continue  # a release that pins none of them implies nothing
        found[version] = {"pins": {p: pins[p] for p in PACKAGES if p in pins}, "read_from": source}
        print(f"{framework} {version}: {found[version]['pins']}", file=sys.stderr)
    return found


def main() -> None:
    table = {
        "generated_by": "bench/implied_pins.py (PyPI release files; see its docstring)",
        "frameworks": {framework: releases(framework) for framework in FRAMEWORKS},
    }
    json.dump(table, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

"""The estimate drawn as one horizontal bar per target GPU: parts against capacity."""

from __future__ import annotations

_BAR_WIDTH = 60
# Colours for the bar's parts (ANSI): weights, trainable states, optimizer, gathered buffers,
# activations and logits, gradients and temporaries, fixed costs.
_PALETTE = (("weights", "34", "W"), ("embeddings", "34", "W"), ("adapter", "36", "A"), ("trainable", "36", "A"),
            ("optimizer", "35", "O"), ("gather", "33", "B"), ("activations", "32", "a"), ("logits", "32", "l"),
            ("gradient", "31", "g"), ("16-bit", "33", "c"), ("CUDA", "90", "C"), ("allocator", "90", "."))


def memory_bars(components: list[tuple[str, float]], targets: list[tuple[str, float]], colour: bool) -> list[str]:
    """The breakdown as one horizontal bar per target, scaled to that target's memory (or to the
    estimate where it is larger, with a '|' where the memory ends); plain letters without colour."""
    lines = []
    total = sum(gib for _, gib in components)
    if total <= 0:
        return lines
    legend = {}
    for target, capacity in targets or [("estimate", total)]:
        scale = _BAR_WIDTH / max(capacity, total)
        cells, used = [], 0.0
        for name, gib in components:
            code, letter = next(((code, letter) for key, code, letter in _PALETTE if key in name), ("37", "#"))
            used += gib
            count = round(used * scale) - len(cells)
            cells.extend([(code, letter)] * max(count, 0))
            if count > 0:
                legend[letter] = next(key for key, c, l in _PALETTE if l == letter) if letter != "#" else "other"
        limit = round(capacity * scale)
        text = ""
        for index in range(max(len(cells), limit)):
            code, letter = cells[index] if index < len(cells) else ("", " ")
            if index == limit and limit < len(cells):
                text += "|"
            text += f"\x1b[{code}m{'█' if letter != ' ' else ' '}\x1b[0m" if colour and code else letter
        lines.append(f"  {target:>12} [{text}{']' if limit >= len(cells) else ''} {total:.1f} / {capacity:g} GiB")
    if not colour:
        lines.append("  key: " + ", ".join(f"{letter}={name}" for letter, name in legend.items()))
    return lines

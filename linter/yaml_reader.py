"""YAML -> `Document`, with ruamel.yaml's composer (C parser when available) and PyYAML's meanings.

Compose, never construct: the composer yields nodes with marks (character index, line,
column) and constructs no objects, so tags like `!!python/object` build nothing. Scalar
values are then resolved the way the frameworks read them: they all load YAML with PyYAML,
whose implicit resolver follows YAML 1.1 (`NO` is false, `2e-5` is a string, `0755` octal).
"""

from __future__ import annotations

from typing import Any

from .document import Document, Mapping, Pair, ParseError, Scalar, Sequence
from .source import Source
from .yaml_resolver import (Unloadable, MAPPING_TAGS, MERGE, SCALAR_TAGS, SEQUENCE_TAGS, resolve_plain)

def _composer():
    from ruamel.yaml import YAML
    from ruamel.yaml.nodes import MappingNode, ScalarNode
    from ruamel.yaml.resolver import VersionedResolver

    class TagOnlyResolver(VersionedResolver):
        """Skip ruamel's (YAML 1.2) implicit typing: values are resolved here, PyYAML's way.
        Explicit tags still reach the nodes; the composer consults a resolver only without one."""

        def resolve(self, kind, value, implicit):
            if kind is ScalarNode:
                return self.DEFAULT_SCALAR_TAG
            return self.DEFAULT_MAPPING_TAG if kind is MappingNode else self.DEFAULT_SEQUENCE_TAG

    try:
        yaml = YAML(typ="safe", pure=False)
    except Exception:  # no C extension: the pure composer gives the same marks, slower
        yaml = YAML(typ="safe", pure=True)
    yaml.Resolver = TagOnlyResolver
    return yaml


_yaml = None


# PyYAML's composer recurses twice per nesting level (compose_node -> compose_*_node), so past
# 500 levels safe_load certainly exceeds the default recursion limit of 1,000 (sooner, called
# from inside a framework): deeper is reported; shallower is not, since that is unknown.
MAX_DEPTH = 500


def parse_yaml(source: Source) -> Document:
    """The document as PyYAML's safe_load reads it, or a ParseError where safe_load raises.

    ruamel's (C) parser gives the events, with marks; this module composes them into Document
    nodes in one pass (no ruamel nodes, nothing constructed) and applies what safe_load adds:
    one document only (get_single_node), no duplicate or undefined anchors, the implicit
    resolvers above, the SafeConstructor's tags (any other tag raises), merge keys
    (flatten_mapping), and the scanner's refusal of tabs outside quoted and block scalars and
    comments, which ruamel's YAML 1.2 scanner accepts.
    """
    global _yaml
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    if _yaml is None:
        _yaml = _composer()
    text = source.text
    scalars: list | None = [] if "\t" in text else None
    try:
        root = _compose(_events(text), scalars)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        message = error.problem or error.context or "invalid YAML"
        if error.context and error.problem:
            message = f"{error.problem} ({error.context})"
        raise ParseError(f"invalid YAML: {message}", mark.index if mark else 0) from None
    except YAMLError as error:
        raise ParseError(f"invalid YAML: {error}".splitlines()[0], getattr(error, "position", 0) or 0) from None
    except RecursionError:
        raise ParseError("invalid YAML: nesting too deep", 0) from None
    document = Document(source=source, root=root, format="yaml", resolve=resolve_plain)
    if scalars is not None:
        _check_tabs(text, scalars)
    return document


def _events(text: str):
    """The parser's events. With the C extension, its get_event is called directly: ruamel's
    YAML.parse wrapper costs a generator step and a check_event call per event (~20% of a
    10 MB file's parse)."""
    try:
        from _ruamel_yaml import CParser
    except ImportError:  # no C extension: the pure parser gives the same events, slower
        yield from _yaml.parse(text)
        return
    from ruamel.yaml.events import StreamEndEvent

    parser = CParser(text)
    get_event = parser.get_event
    try:
        while True:
            event = get_event()
            if event is None or event.__class__ is StreamEndEvent:
                return
            yield event
    finally:
        parser.dispose()


_EVENTS: dict | None = None


def _event_kinds() -> dict:
    global _EVENTS
    if _EVENTS is None:
        from ruamel.yaml import events

        _EVENTS = {events.ScalarEvent: "scalar", events.AliasEvent: "alias", events.MappingStartEvent: "mapping",
                   events.SequenceStartEvent: "sequence", events.MappingEndEvent: "end",
                   events.SequenceEndEvent: "end", events.DocumentStartEvent: "document"}
    return _EVENTS


def _compose(events, scalars: list | None):
    """Events -> Document nodes, iteratively. Aliases share the anchored node: no expansion, no
    blow-up. `scalars` (when the text has a tab) collects (start, end, style) of every scalar.
    Spans are the composer's: a node starts at its first event's start mark (its anchor or tag,
    if written) and a collection ends at its end event's end mark."""
    kinds = _event_kinds()
    anchors: dict[str, Any] = {}
    aliased: dict[int, tuple[Any, str]] = {}
    # Each open collection: [node, key waiting for its value (mappings only), merge pairs].
    stack: list[list] = []
    root = None
    documents = 0
    for event in events:
        kind = kinds.get(event.__class__)
        if kind is None:
            continue
        if kind == "scalar":
            in_key = bool(stack) and stack[-1][1] is None and stack[-1][0].__class__ is Mapping
            start = event.start_mark.index
            style = event.style or ""
            tag = event.tag
            if scalars is not None:
                scalars.append((start, event.end_mark.index, style))
            value = event.value
            try:
                if tag == "!":
                    # The non-specific tag: PyYAML's parser marks the scalar implicit, so the
                    # resolvers run even on a quoted one (`! '5'` loads as 5).
                    value = resolve_plain(value)
                elif tag is not None:
                    convert = SCALAR_TAGS.get(tag)
                    if convert is None:
                        raise _unknown_tag(tag, "scalar", start)
                    value = convert(value)
                elif not style and not (in_key and value == "="):  # flatten_mapping retags a `=` key as str
                    value = _resolve_fast(value)
            except Unloadable as error:
                raise ParseError(f"invalid YAML for yaml.safe_load: {error}", start) from None
            node = Scalar(value, start, event.end_mark.index, style, event.anchor is not None or tag is not None)
            if event.anchor is not None:
                _define(anchors, event.anchor, node, start)
            if in_key and event.value == "<<" and ((not style and tag is None) or tag == MERGE):
                node.style = "<<"  # a merge key: its mapping is flattened when it ends
        elif kind == "alias":
            target = anchors.get(event.anchor)
            if target is None:
                raise ParseError(f"invalid YAML: found undefined alias {event.anchor!r}", event.start_mark.index)
            aliased[id(target)] = (target, event.anchor)
            if target.__class__ is Scalar:  # an alias site: editing it would edit the anchor
                node = Scalar(target.value, target.start, target.end, target.style, True, event.anchor)
            else:
                node = target
        elif kind == "end":
            frame = stack.pop()
            frame[0].end = event.end_mark.index
            if frame[2]:
                _flatten(frame[0], frame[2])
            continue
        elif kind == "document":
            documents += 1
            if documents > 1:
                # yaml.safe_load -> get_single_node: "expected a single document in the stream".
                raise ParseError("invalid YAML: a second document starts here; yaml.safe_load, which the frameworks "
                                 "read their YAML with, accepts a single document per file", event.start_mark.index)
            continue
        else:  # a mapping or sequence starts
            if len(stack) >= MAX_DEPTH:
                raise ParseError(f"invalid YAML: nested deeper than {MAX_DEPTH} levels, past what PyYAML's "
                                 "recursive composer can read", event.start_mark.index)
            tag = event.tag
            start = event.start_mark.index
            if tag is not None and tag != "!" and tag not in (MAPPING_TAGS if kind == "mapping" else SEQUENCE_TAGS):
                raise _unknown_tag(tag, kind, start)
            flow = bool(event.flow_style)
            node = Mapping([], start, start, flow) if kind == "mapping" else Sequence([], start, start, flow)
            if event.anchor is not None:
                _define(anchors, event.anchor, node, start)
            if stack:
                _attach(stack[-1], node)
            elif root is None:
                root = node
            stack.append([node, None, []])
            continue
        if stack:
            _attach(stack[-1], node)
        elif root is None:
            root = node
    _mark_shared(aliased)
    return root


def _define(anchors: dict, name: str, node, start: int) -> None:
    if name in anchors:
        # PyYAML's composer raises "found duplicate anchor"; ruamel only warns.
        raise ParseError(f"invalid YAML for yaml.safe_load: found duplicate anchor {name!r}", start)
    anchors[name] = node


def _attach(frame: list, node) -> None:
    """Put a node into the collection being built (a collection as soon as it opens)."""
    parent = frame[0]
    if parent.__class__ is Sequence:
        parent.items.append(node)
    elif frame[1] is None:
        if node.__class__ is not Scalar:
            # construct_mapping: a list or dict key is unhashable, and safe_load raises.
            raise ParseError("invalid YAML for yaml.safe_load: found unhashable key (a mapping or sequence "
                             "used as a key)", node.start)
        frame[1] = node
    else:
        key = frame[1]
        frame[1] = None
        pair = Pair(key, node)
        parent.pairs.append(pair)
        if key.style == "<<":
            key.style = ""
            frame[2].append(pair)


def _resolve_fast(text: str) -> Any:
    """resolve_plain after PyYAML's first-character dispatch (Resolver.yaml_implicit_resolvers):
    most plain scalars are names that no resolver can match."""
    if text and text[0] not in _RESOLVABLE_FIRST:
        return text
    return resolve_plain(text)


_RESOLVABLE_FIRST = frozenset("-+0123456789.~nNyYtTfFoO=")


def _unknown_tag(tag: str, kind: str, start: int) -> ParseError:
    return ParseError(f"invalid YAML for yaml.safe_load: it has no constructor for the tag {tag!r} "
                      f"on a {kind} (the frameworks load YAML with safe_load, which refuses it)", start)


def _flatten(mapping: Mapping, merge_pairs: list[Pair]) -> None:
    """SafeConstructor.flatten_mapping: the `<<` pairs go, the mappings they name come first (of a
    list, the earlier one wins), and the mapping's own keys after them override them.

    `pairs` becomes the mapping as the framework sees it; `written` keeps the pairs as written
    (merge keys included), which is where an edit to this mapping goes."""
    merged: list[Pair] = []
    for pair in merge_pairs:
        value = pair.value
        if isinstance(value, Mapping):
            merged.extend(value.pairs)
        elif isinstance(value, Sequence):
            parts = []
            for item in value.items:
                if not isinstance(item, Mapping):
                    raise ParseError("invalid YAML for yaml.safe_load: expected a mapping for merging", item.start)
                parts.append(item.pairs)
            for part in reversed(parts):
                merged.extend(part)
        else:
            raise ParseError("invalid YAML for yaml.safe_load: expected a mapping or list of mappings for "
                             "merging", value.start)
    mapping.written = mapping.pairs
    merge_ids = {id(pair) for pair in merge_pairs}
    mapping.pairs = merged + [pair for pair in mapping.written if id(pair) not in merge_ids]


def _mark_shared(aliased: dict[int, tuple[Any, str]]) -> None:
    """Give every node that an alias reaches (the anchored node and all inside it) the anchor's
    name in `shared`: an edit there changes every alias too."""
    for node, name in aliased.values():
        pending = [node]
        while pending:
            current = pending.pop()
            if current.shared:
                continue
            current.shared = name
            if isinstance(current, Mapping):
                for pair in current.written:
                    pending.append(pair.key)
                    pending.append(pair.value)
            elif isinstance(current, Sequence):
                pending.extend(current.items)


def _check_tabs(text: str, scalars: list) -> None:
    """PyYAML's scanner skips only spaces between tokens and ends a plain scalar at a tab
    (scanner.py, scan_to_next_token and scan_plain_spaces: "we just forbid them completely"),
    so a tab outside a quoted scalar, a block scalar's body or a comment makes safe_load raise
    "found character '\\t' that cannot start any token". ruamel accepts many of them."""
    import bisect

    scalars.sort()
    starts = [start for start, _, _ in scalars]
    index = text.find("\t")
    while index != -1:
        position = bisect.bisect_right(starts, index) - 1
        inside = position >= 0 and scalars[position][0] <= index < scalars[position][1]
        if inside:
            start, _, style = scalars[position]
            allowed = style in ("'", '"') or (style in ("|", ">") and not _on_header_line(text, start, index))
        else:
            line_start = text.rfind("\n", 0, index) + 1
            after = max(line_start, scalars[position][1] if position >= 0 else 0)
            allowed = _in_comment(text, after, index)
        if not allowed:
            raise ParseError("invalid YAML for yaml.safe_load: a tab outside quotes, a block scalar or a comment "
                             "(PyYAML's scanner refuses tabs there; ruamel accepts them)", index)
        index = text.find("\t", index + 1)


def _on_header_line(text: str, start: int, index: int) -> bool:
    """A tab on a block scalar's header line (`key: |  # c`) outside its comment."""
    line_end = text.find("\n", start)
    if line_end != -1 and index > line_end:
        return False
    return not _in_comment(text, start, index)


def _in_comment(text: str, start: int, index: int) -> bool:
    """Is `index` inside a comment that starts at or after `start` on the same line?"""
    hash_at = text.find("#", start, index)
    while hash_at != -1:
        if hash_at == 0 or text[hash_at - 1] in " \t\n\r" or hash_at == start:
            return True
        hash_at = text.find("#", hash_at + 1, index)
    return False

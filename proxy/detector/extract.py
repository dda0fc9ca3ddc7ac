"""Pull every piece of text a model would read out of an MCP result or tool-call arguments.

Covers tools/call (text items, embedded resource text, resource links, structuredContent
strings), resources/read (contents), prompts/get (description and messages) and, for anything
else, every string in the object. Non-text content (images, audio, blobs) is noted as skipped.
Never raises: odd shapes are walked generically.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 64  # JSON nesting we follow; deeper is noted and skipped


class Collector:
    def __init__(self) -> None:
        self.texts: list[str] = []
        self.notes: list[str] = []

    def note(self, value: str) -> None:
        if value not in self.notes:
            self.notes.append(value)

    def strings(self, value: Any, depth: int = 0, *, keys: bool = True) -> None:
        """Every string in a JSON value (and its object keys when `keys`)."""
        if depth > MAX_DEPTH:
            self.note("skipped:too_deep")
            return
        if isinstance(value, str):
            if value:
                self.texts.append(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                if keys and isinstance(key, str) and len(key) > 24:
                    self.texts.append(key)  # short keys are field names; long ones are prose
                self.strings(item, depth + 1, keys=keys)
        elif isinstance(value, list):
            for item in value:
                self.strings(item, depth + 1, keys=keys)

    def content_item(self, item: Any, depth: int = 0) -> None:
        """One content block of a tool result or prompt message."""
        if not isinstance(item, dict):
            self.strings(item, depth)
            return
        kind = item.get("type")
        if kind == "text":
            self.strings(item.get("text"), depth)
        elif kind == "resource":
            self.resource_contents(item.get("resource"), depth + 1)
        elif kind == "resource_link":
            for key in ("name", "title", "description", "uri"):
                self.strings(item.get(key), depth)
        elif kind in ("image", "audio"):
            self.note("skipped:non_text_content")
        else:
            self.strings({k: v for k, v in item.items() if k not in ("data", "_meta")}, depth)

    def resource_contents(self, contents: Any, depth: int = 0) -> None:
        if not isinstance(contents, dict):
            self.strings(contents, depth)
            return
        if isinstance(contents.get("text"), str):
            self.texts.append(contents["text"])
        elif "blob" in contents:
            self.note("skipped:non_text_content")


def collect_result(method: str | None, result: Any) -> Collector:
    out = Collector()
    if not isinstance(result, dict):
        out.note("odd_result_shape")
        out.strings(result)
        return out
    if method == "tools/call":
        _items(out, result.get("content"))
        if "structuredContent" in result:
            out.strings(result["structuredContent"])
    elif method == "resources/read":
        contents = result.get("contents")
        if isinstance(contents, list):
            for item in contents:
                out.resource_contents(item, 1)
        else:
            out.strings(contents)
    elif method == "prompts/get":
        out.strings(result.get("description"))
        messages = result.get("messages")
        if isinstance(messages, list):
            for message in messages:
                content = message.get("content") if isinstance(message, dict) else message
                _items(out, content)
        else:
            out.strings(messages)
    else:
        out.strings({k: v for k, v in result.items() if k != "_meta"})
    return out


def _items(out: Collector, content: Any) -> None:
    if isinstance(content, list):
        for item in content:
            out.content_item(item, 1)
    elif content is not None:
        out.content_item(content, 1)


def collect_arguments(arguments: Any) -> Collector:
    out = Collector()
    if not isinstance(arguments, dict):
        out.note("odd_arguments_shape")
    out.strings(arguments)
    return out

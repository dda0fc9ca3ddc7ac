"""Pull every piece of text a model would read out of an MCP result or tool-call arguments.

Covers tools/call (text items, embedded resource text and blobs that are not of a binary type,
resource links, structuredContent strings), resources/read (contents), prompts/get
(description and messages) and, for anything else, every string in the object. Non-text
content (images, audio, blobs of a binary type) is noted as skipped.
Never raises: odd shapes are walked generically.
"""

from __future__ import annotations

import binascii
import functools
import re
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
        text = resource_text(contents)
        if text:
            self.texts.append(text)
            if not isinstance(contents.get("text"), str):
                self.note("decoded:resource_blob")
        elif text is None and "blob" in contents:
            self.note("skipped:non_text_content")


def resource_text(resource: dict[str, Any]) -> str | None:
    """The text of a resource's contents as a client hands it to a model: its `text`, or its
    `blob` decoded when that is not of a binary type (blob_text); None when it has neither."""
    if isinstance(resource.get("text"), str):
        return str(resource["text"])
    return blob_text(resource.get("blob"), resource.get("mimeType"))


# Blobs of these types reach a model as what they are (an image, a sound), never as text.
_BINARY_PREFIXES = ("image/", "audio/", "video/", "font/")
_BINARY_TYPES = frozenset({
    "application/pdf", "application/octet-stream", "application/zip", "application/gzip",
    "application/x-tar", "application/x-7z-compressed", "application/wasm",
})
# What Node's Buffer.from(s, "base64") reads: both alphabets, anything else skipped.
_URL_SAFE = str.maketrans("-_", "+/")
_NOT_BASE64 = re.compile(r"[^A-Za-z0-9+/]+")


def blob_text(blob: Any, mime: Any) -> str | None:
    """A resource blob as the text a client shows a model (None: a binary type, or no blob).

    Clients decode a `text/*` blob, and some one without a type, as UTF-8 and hand it to the
    model (LibreChat, the Anthropic SDK's converter), so such a blob is read as text: decoded
    as leniently as a client would (both alphabets, whitespace and stray characters skipped,
    padding optional, invalid UTF-8 replaced), never more strictly than the reader that hurts.
    """
    if not isinstance(blob, str):
        return None
    kind = mime.split(";", 1)[0].strip().lower() if isinstance(mime, str) else ""
    if kind.startswith(_BINARY_PREFIXES) or kind in _BINARY_TYPES:
        return None
    return _decoded(blob)


@functools.lru_cache(maxsize=4)
def _decoded(blob: str) -> str:
    """Cached: the detector, the taint step and the hot values each read the same blob of a
    result (the same string object, whose hash Python keeps), and decode it once."""
    letters = _NOT_BASE64.sub("", blob.translate(_URL_SAFE))
    if len(letters) % 4 == 1:
        letters = letters[:-1]  # a letter left over holds no whole byte
    data = binascii.a2b_base64(letters + "=" * (-len(letters) % 4))
    return data.decode("utf-8", errors="replace")


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

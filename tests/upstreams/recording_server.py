"""An MCP server (mcp SDK, both eras) that records every call it executes, for the frame tests.

Each tool appends {"tool", "arguments"} as one JSON line to $CALL_LOG before it does anything,
so a test can prove that a frame Gatewatch refused never ran. Tools:
  echo(text)            returns the text
  send_email(to, body)  pretends to send; returns "sent to <to>"
  read_note(path)       returns "note at <path>"
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server import MCPServer

server = MCPServer("recording", version="1.0.0")


def record(tool: str, arguments: dict[str, Any]) -> None:
    with open(os.environ["CALL_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps({"tool": tool, "arguments": arguments}) + "\n")


@server.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    record("echo", {"text": text})
    return text


@server.tool()
def send_email(to: str, body: str = "") -> str:
    """Send an e-mail."""
    record("send_email", {"to": to, "body": body})
    return f"sent to {to}"


@server.tool()
def read_note(path: str) -> str:
    """Read a note."""
    record("read_note", {"path": path})
    return f"note at {path}"


if __name__ == "__main__":
    server.run("stdio")

"""An upstream written with the mcp SDK's MCPServer: it speaks both protocol eras.

Used by tests/test_relay_sdk.py to drive the proxy with the SDK client in legacy (initialize)
mode and in 2026-07-28 mode.
"""

from __future__ import annotations

from mcp.server import MCPServer
from mcp.server.mcpserver import Context

server = MCPServer("sdk-dual", version="1.0.0", instructions="A test upstream for Gatewatch.")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Return the text in capitals."""
    return text.upper()


@server.tool()
async def count_up(steps: int, ctx: Context) -> str:
    """Report progress once per step, then say how many steps were done."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"counted {steps}"


@server.resource("note://readme", mime_type="text/plain")
def readme() -> str:
    """A fixed note."""
    return "hello from the dual-era server"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}."


if __name__ == "__main__":
    server.run("stdio")

"""A mail sink for the ask tests (mcp SDK, both protocol eras).

send_email(to, subject, body, cc) appends the mail to $MAIL_OUTBOX as one JSON line, so a test
can prove a call never reached the upstream, and answers "queued" without echoing the
recipients (an echo would make them taint in Gatewatch's eyes, which is another test's subject).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from mcp.server import MCPServer

mcp = MCPServer("quiet-mail")


@mcp.tool()
def send_email(to: list[str], subject: str, body: str, cc: list[str] | None = None) -> str:
    """Send an e-mail."""
    record = {"to": to, "cc": cc or [], "subject": subject, "body": body}
    with Path(os.environ["MAIL_OUTBOX"]).open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    return "queued"


if __name__ == "__main__":
    mcp.run()

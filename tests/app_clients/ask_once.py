"""A proxy's side of the socket, using the real proxy.ipc.client.AppLink: connect, ask one
question (argv[1] = session id, argv[2] = destination), print the decision as JSON, exit."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

from proxy.ipc import protocol
from proxy.ipc.client import AppLink


async def main(session: str, destination: str) -> int:
    link = AppLink(protocol.proxy_hello(
        session_id=session, server="gmail", pid=os.getpid(), command=["fake-gmail"],
        started_at=time.time(), client={"name": "claude-ai", "version": "0.1.0"},
    ))
    link.start()
    if not await link.wait_connected(20):
        print(json.dumps({"error": "no app"}), flush=True)
        return 1
    print(json.dumps({"connected": True}), flush=True)
    decision = await link.ask({
        "ask_id": f"{session}-1", "session_id": session, "server": "gmail",
        "tool": "send_email", "destination": destination,
        "arguments_preview": json.dumps({"to": destination, "subject": "Hi"}),
        "contract": "sink_gate", "reason": f"destination to={destination!r} is not trusted",
        "origin": None, "client": {"name": "claude-ai", "version": "0.1.0"},
        "deadline_s": 55, "created_at": time.time(),
    }, timeout=60)
    print(json.dumps({"decision": decision}), flush=True)
    await link.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1], sys.argv[2])))

"""`gatewatch serve`: Gatewatch's own MCP server (stdio), built with the mcp SDK's MCPServer.

Tools answer questions about Gatewatch without running anything upstream; prompts help review a
server and draft a policy; resources expose the built-in packs and the audit summary.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError

from proxy import __version__, paths
from proxy.serve import audit_summary, packs_catalog, prompts, tool_review, verdicts

INSTRUCTIONS = (
    "Gatewatch is the local security gateway in front of this user's MCP servers. Ask it what "
    "it would decide for a tool call (check_verdict), validate policies (verify_policy), see "
    "what is enforced (list_policies), what it decided recently (audit_summary), and whether a "
    "text carries a prompt injection (detect_injection)."
)


def _tool_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except ValueError as exc:
        raise ToolError(str(exc)) from exc


def build_server() -> MCPServer:
    server: MCPServer = MCPServer(
        name="gatewatch", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    @server.tool()
    def check_verdict(
        server: str,
        tool: str,
        arguments: dict[str, Any] | None = None,
        untrusted_context: list[str] | None = None,
        policy_yaml: str | None = None,
    ) -> dict[str, Any]:
        """The verdict (allow, deny or ask) Gatewatch would give a tool call, without running it.

        untrusted_context: texts the agent read from untrusted tool output; destinations in them
        count as tainted. policy_yaml: a draft policy layered over the installed one.
        """
        return _tool_call(
            verdicts.check_verdict, server, tool, arguments or {}, untrusted_context or [],
            policy_yaml,
        )

    @server.tool()
    def verify_policy(policy_yaml: str) -> dict[str, Any]:
        """Validate a user policy (YAML text): valid or errors with their line; tools covered."""
        return _tool_call(verdicts.verify_policy, policy_yaml)

    @server.tool()
    def list_policies(pack: str | None = None) -> dict[str, Any]:
        """The built-in server packs and rule packs, and the user policy, that are enforced."""
        return _tool_call(verdicts.list_policies, pack)

    @server.tool()
    def audit_summary(
        limit: int = 20, hours: float = 24.0, server: str | None = None
    ) -> dict[str, Any]:
        """Counts of recent decisions by verdict, server and tool, and the latest decisions."""
        return audit_summary_of(limit=limit, hours=hours, server=server)

    @server.tool()
    def detect_injection(text: str) -> dict[str, Any]:
        """Run Gatewatch's injection detector on a text: verdict (pass/warn/block), score, rules."""
        return _tool_call(verdicts.detect_injection, text)

    @server.prompt()
    def review_server_security(server: str, tools: str = "") -> str:
        """Review an MCP server's tools for sinks an injected instruction could abuse.

        tools: the server's tools/list result (JSON) or tool names, one per line.
        """
        return prompts.review_server_security(server, tools, _enforced(server, tools))

    @server.prompt()
    def generate_policy(
        server: str, strictness: Literal["standard", "strict", "paranoid"] = "standard",
        tools: str = "",
    ) -> str:
        """Draft a Gatewatch policy for a server at a strictness: standard, strict or paranoid."""
        return prompts.generate_policy(
            server, strictness, tools, packs_catalog.pack_text("servers", server),
            _enforced(server, tools),
        )

    @server.resource("gatewatch://packs/servers", mime_type="application/json")
    def server_packs() -> str:
        """Catalogue of the built-in server policy packs."""
        return json.dumps(packs_catalog.catalog("servers"), indent=2)

    @server.resource("gatewatch://packs/rules", mime_type="application/json")
    def rule_packs() -> str:
        """Catalogue of the built-in injection rule packs."""
        return json.dumps(packs_catalog.catalog("rules"), indent=2)

    @server.resource("gatewatch://packs/{kind}/{name}", mime_type="application/yaml")
    def pack(kind: str, name: str) -> str:
        """One built-in pack's YAML (kind: servers or rules)."""
        found = packs_catalog.pack_text(kind, name) if kind in packs_catalog.KINDS else None
        if found is None:
            raise ResourceNotFoundError(f"no built-in {kind} pack named {name!r}")
        return str(found["text"])

    @server.resource("gatewatch://audit/summary", mime_type="application/json")
    def audit() -> str:
        """Counts and latest decisions from the audit log (last 24 hours)."""
        return json.dumps(audit_summary_of(limit=20, hours=24.0, server=None), indent=2)

    return server


def _enforced(server: str, tools_text: str) -> dict[str, str] | None:
    """The engine's view of the tools, or None when it cannot say (the prompt works without)."""
    try:
        return verdicts.enforced(server, tool_review.parse_tools(tools_text))
    except ValueError:
        return None


def audit_summary_of(*, limit: int, hours: float, server: str | None) -> dict[str, Any]:
    return audit_summary.summarize(paths.db_path(), limit=limit, hours=hours, server=server)

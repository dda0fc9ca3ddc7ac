"""Text of the two prompts `gatewatch serve` offers: a sink review and a policy draft."""

from __future__ import annotations

from typing import Any, Literal

from proxy.serve.tool_review import parse_tools, review

Strictness = Literal["standard", "strict", "paranoid"]

STRICTNESS: dict[str, str] = {
    "standard": (
        "Gate every exfiltrating tool on its destination arguments (trusted destinations only, "
        "otherwise ask); confine path arguments to the directories the user works in; give "
        "destructive tools a call budget."
    ),
    "strict": (
        "Everything in standard, plus: an allowlist of the tools the user needs (others denied); "
        "small call budgets on every write; regex or allowlist constraints on every argument "
        "that names a destination, a path or a command."
    ),
    "paranoid": (
        "Everything in strict, plus: read-only tools only unless the user names a write tool; "
        "no trusted destinations beyond those the user lists (every other send asks); budget 1 "
        "per session on every destructive tool."
    ),
}


def review_server_security(server: str, tools_text: str) -> str:
    tools = parse_tools(tools_text)
    lines = [
        f"Review the MCP server {server!r} for tools an injected instruction could abuse.",
        "",
        "For each tool decide: does it send data somewhere (a sink)? Which arguments choose "
        "where (recipients, URLs, channels, hosts)? Does it take paths, commands or code? Is it "
        "destructive? Could its output carry text written by someone else (untrusted)?",
        "A sink with an untrusted destination is how data leaves: Gatewatch denies destinations "
        "seen in untrusted output and asks for any other destination that is not trusted.",
        "",
    ]
    if tools:
        lines.append("Gatewatch's first pass over the tools:")
        for found in review(tools):
            notes = "; ".join(found.notes()) or "no sink, path, code or destructive signs"
            lines.append(f"- {found.name}: {notes}")
    else:
        lines.append("No tool list was given: call the server's tools/list and review each tool.")
    lines += [
        "",
        "Answer with a table: tool, risk (sink / path / code / destructive / read-only), the "
        "arguments to gate, and the contract you recommend (allowlist, path confinement, regex, "
        "call budget, sink gate). Then check the draft with Gatewatch's verify_policy tool.",
    ]
    return "\n".join(lines)


def generate_policy(
    server: str, strictness: Strictness, tools_text: str, pack: dict[str, Any] | None
) -> str:
    if strictness not in STRICTNESS:
        raise ValueError(f"strictness must be one of {', '.join(STRICTNESS)}, not {strictness!r}")
    lines = [
        f"Write a Gatewatch user policy (YAML) for the MCP server {server!r} at strictness "
        f"{strictness!r}: {STRICTNESS[strictness]}",
        "",
    ]
    if pack is not None:
        lines += [
            f"Gatewatch ships a pack for this server ({pack['path']}); start from it, since a "
            "user entry for a tool replaces the pack's entry for that tool rather than merging:",
            "```yaml",
            pack["text"].rstrip(),
            "```",
            "",
        ]
    tools = parse_tools(tools_text)
    if tools:
        lines.append("The server's tools, with Gatewatch's first pass:")
        for found in review(tools):
            lines.append(f"- {found.name}: {'; '.join(found.notes()) or 'low risk'}")
        lines.append("")
    lines += [
        "Return only the YAML. Then validate it with the verify_policy tool and try the risky "
        "calls with check_verdict (pass untrusted_context to see the taint rules fire).",
    ]
    return "\n".join(lines)

"""Text of the two prompts `gatewatch serve` offers: a sink review and a policy draft."""

from __future__ import annotations

from typing import Any, Literal

from proxy.errors import InvalidValue
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


POLICY_FORMAT = """\
The policy file format (YAML; every key optional):
```yaml
version: 1
trusted_destinations: ["*@corp.example"]   # every server: exact values, globs, hosts, URL prefixes
allowlist: [SERVER.TOOL]                   # when present, other tools of that server are denied
servers:
  SERVER:                                  # the name in `gatewatch run --name`, or a glob
    pack: PACK                             # force a shipped pack
    allowed_paths: [~/projects/out]        # confinement for every path argument
    trusted_destinations: [...]
    output_trusted: false                  # true: its results are not taint
    tools:
      TOOL:
        exfiltrating: true                 # it sends data somewhere: gate its sinks
        sink_params: [to, cc, action.forward]   # dotted: inside an object argument
        trusted_destinations: [...]
        max_calls: 5                       # per session, counting attempts
        path_params: [path]
        allowed_paths: [~/projects/out]
        arg_patterns: {subject: '[a-z ]+'} # full-match regex per argument
        arg_allowlists: {priority: [low, normal]}
        replace: false                     # true: ignore what the pack says about this tool
```
A user entry merges over the pack's entry field by field: sink_params, trusted_destinations and
path_params only grow, so adding a trusted destination never turns the sink gate off."""


def _tool_lines(tools: list[dict[str, Any]], enforced: dict[str, str] | None) -> list[str]:
    lines = []
    for found in review(tools):
        notes = "; ".join(found.notes()) or "no sink, path, code or destructive signs"
        line = f"- {found.name}: {notes}"
        if enforced is not None and found.name in enforced:
            line += f". Enforced today: {enforced[found.name]}"
        lines.append(line)
    return lines


def review_server_security(
    server: str, tools_text: str, enforced: dict[str, str] | None = None,
) -> str:
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
        lines.append("Gatewatch's first pass over the tools, and what its engine enforces:")
        lines += _tool_lines(tools, enforced)
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
    server: str, strictness: Strictness, tools_text: str, pack: dict[str, Any] | None,
    enforced: dict[str, str] | None = None,
) -> str:
    if strictness not in STRICTNESS:
        raise InvalidValue(f"strictness must be one of {', '.join(STRICTNESS)}, not {strictness!r}")
    lines = [
        f"Write a Gatewatch user policy (YAML) for the MCP server {server!r} at strictness "
        f"{strictness!r}: {STRICTNESS[strictness]}",
        "",
    ]
    lines += [POLICY_FORMAT, ""]
    if pack is not None:
        lines += [
            f"Gatewatch ships a pack for this server ({pack['path']}), which applies underneath "
            "the policy: write only what should differ from it.",
            "```yaml",
            pack["text"].rstrip(),
            "```",
            "",
        ]
    tools = parse_tools(tools_text)
    if tools:
        lines.append("The server's tools, Gatewatch's first pass, and what it enforces today:")
        lines += [*_tool_lines(tools, enforced), ""]
    lines += [
        "Return only the YAML. Then validate it with the verify_policy tool and try the risky "
        "calls with check_verdict (pass untrusted_context to see the taint rules fire).",
    ]
    return "\n".join(lines)

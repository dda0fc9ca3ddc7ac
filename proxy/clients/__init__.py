"""Find MCP client configs and wrap (or unwrap) their servers with `gatewatch run`.

Public entry points (import the module you need; this package imports nothing itself, so
`gatewatch run` can use proxy.clients.secrets without loading the rest):

- discovery.discover(home=None, projects=()) -> list[ConfigFile]; discovery.load(config)
- changes.make_plan("wrap" | "unwrap", loaded, chosen, secrets_to_keyring=..., exe=...) -> Plan,
  Plan.preview() (unified diff), changes.apply(plan) -> Applied, changes.unwrap_everything()
- health.check(loaded) -> list[EntryHealth]
- summary.unprotected(loaded) -> Unprotected (per-client counts of unwrapped stdio servers,
  .sentence() for the first-run banner)
- secrets.resolve_env_refs(env) -> dict[str, str]
"""

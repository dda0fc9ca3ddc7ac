"""The one SQLite file every proxy, the CLI and the app share, and the only code with SQL.

`database.Database` bundles the typed stores over one connection (`Database.open(path)`,
`Database.memory()` for tests): `events.EventLog`, `sessions.Sessions`, `pins.Pins`,
`trust.TrustStore` and `trust.Denials`, `taint.TaintStore`, `hot_results.HotResults`,
`server_state.ServerState`, `classifier_cache.ClassifierAnswers` and `history.History` (the
app's History tab). `schema` holds the tables and migrations, `writer` the audit writer's
transactions, `retention` the pruning, `queries` the audit-log filters.
"""

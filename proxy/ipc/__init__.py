"""The local socket between proxies and the app (or `gatewatch approve`); see docs/ipc.md."""

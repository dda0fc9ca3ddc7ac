"""The one SQLite file every proxy, the CLI and the app share."""

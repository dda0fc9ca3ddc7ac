"""Gatewatch's PySide6 tray app. Imports `proxy`; `proxy` never imports this package."""

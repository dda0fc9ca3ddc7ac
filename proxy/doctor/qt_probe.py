"""Run in a subprocess by doctor: can Qt start its platform plugin, and is there a system tray?

Prints one JSON object on stdout. A broken Qt may abort or hang; doctor runs this with a timeout.
"""

from __future__ import annotations

import json
import sys


def main() -> int:
    from PySide6.QtWidgets import QApplication, QSystemTrayIcon

    app = QApplication([sys.argv[0]])
    print(
        json.dumps(
            {
                "platform": app.platformName(),
                "tray": QSystemTrayIcon.isSystemTrayAvailable(),
                "qt": __import__("PySide6").__version__,
            }
        ),
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""System libraries Qt's xcb platform plugin needs on Linux, and the packages that provide them.

Used by `gatewatch doctor` and by installer/install.sh (`python -m proxy.doctor.qt_libs`), so the
installer and doctor name the same packages.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path

# soname -> (apt, dnf, pacman) package
PACKAGES: dict[str, tuple[str, str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-render-util.so.0": (
        "libxcb-render-util0", "xcb-util-renderutil", "xcb-util-renderutil"
    ),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-glx.so.0": ("libxcb-glx0", "libxcb", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libICE.so.6": ("libice6", "libICE", "libice"),
    "libSM.so.6": ("libsm6", "libSM", "libsm"),
}

# Loaded with dlopen at run time, so `ldd` on the plugin does not show them.
DLOPENED = ("libxcb-cursor.so.0", "libdbus-1.so.3")

MANAGERS = (("apt-get", "sudo apt-get install"), ("dnf", "sudo dnf install"),
            ("pacman", "sudo pacman -S"))


def xcb_plugin() -> Path | None:
    """The xcb platform plugin inside the installed PySide6, if there is one."""
    try:
        import PySide6
    except ImportError:
        return None
    plugin = Path(PySide6.__file__).parent / "Qt" / "plugins" / "platforms" / "libqxcb.so"
    return plugin if plugin.exists() else None


def missing_libraries(plugin: Path) -> list[str]:
    """Sonames the xcb plugin needs that the dynamic loader cannot find."""
    missing: set[str] = set()
    if shutil.which("ldd"):
        out = subprocess.run(
            ["ldd", str(plugin)], capture_output=True, text=True, timeout=20, check=False
        ).stdout
        for line in out.splitlines():
            if "not found" in line:
                missing.add(line.split("=>")[0].strip())
    for soname in DLOPENED:
        try:
            ctypes.CDLL(soname)
        except OSError:
            missing.add(soname)
    return sorted(missing)


def install_commands(missing: list[str]) -> list[str]:
    """One install command per package manager, or just the manager found on this system."""
    found = [m for m in MANAGERS if shutil.which(m[0])]
    commands = []
    for index, (_, command) in enumerate(MANAGERS):
        if found and MANAGERS[index] not in found:
            continue
        names = sorted({PACKAGES[s][index] for s in missing if s in PACKAGES})
        if names:
            commands.append(f"{command} {' '.join(names)}")
    unknown = [s for s in missing if s not in PACKAGES]
    if unknown:
        commands.append(f"and a package providing: {', '.join(unknown)}")
    return commands


def packages_to_install(missing: list[str]) -> tuple[str, list[str]] | None:
    """The package manager found here and the packages that provide `missing`, or None when
    there is no known manager or a library has no known package."""
    index = next((i for i, (name, _) in enumerate(MANAGERS) if shutil.which(name)), None)
    if index is None or any(s not in PACKAGES for s in missing):
        return None
    return MANAGERS[index][0], sorted({PACKAGES[s][index] for s in missing})


def main(argv: list[str] | None = None) -> int:
    """Print what is missing and how to install it; exit 1 when something is missing.

    With --packages (for installer/install.sh): print only `MANAGER PACKAGE...` when the
    missing libraries can be installed with this system's package manager.
    """
    argv = sys.argv[1:] if argv is None else argv
    if not sys.platform.startswith("linux"):
        return 0
    plugin = xcb_plugin()
    if plugin is None:
        print("PySide6's xcb platform plugin is missing: reinstall Gatewatch", file=sys.stderr)
        return 1
    missing = missing_libraries(plugin)
    if not missing:
        return 0
    if "--packages" in argv:
        found = packages_to_install(missing)
        if found is not None:
            print(" ".join([found[0], *found[1]]))
        else:
            print(f"no package known for: {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"Qt's xcb platform needs system libraries that are missing: {', '.join(missing)}")
    print("Install them with:")
    for command in install_commands(missing):
        print(f"  {command}")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())

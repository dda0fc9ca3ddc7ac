"""Hatchling build hook: compile the C extension (proxy/detector/_native.c: the detector's
learned layer and tokens, the engine's destination finder).

A wheel (`pip install <repo>`, what installer/install.sh does) carries the compiled module and
is tagged for this interpreter and platform. An editable install (`pip install -e .`, what
tests/run.sh does) compiles it in place, next to the source, where `proxy.detector` imports
it (the file is gitignored). The compiler and flags are the interpreter's own (sysconfig), with
no -ffast-math and no contraction of floating-point operations: the C scorer must give the
Python scorer's floats to the last bit.

Compiling is optional: where it fails (no compiler, no Python headers) the build goes on
without the module, a pure-Python wheel, and the detector and the destination finder run their
Python paths (`gatewatch doctor` says so). GATEWATCH_NATIVE_BUILD=0 skips compiling. The
module carries the SHA-256 of the source it was built from: an in-place build older than the
source is not loaded (proxy/detector/native.py), so an edited _native.c without a reinstall
runs the Python paths.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "proxy/detector/_native.c"
FALLBACK = "the detector and the destination finder will run their Python paths"
# -ffp-contract=off: no fused multiply-add (GCC contracts by default outside ISO C mode);
# -fno-fast-math: IEEE semantics even if the environment's CFLAGS asked otherwise.
FLAGS = ["-O2", "-fPIC", "-fno-fast-math", "-ffp-contract=off", "-fno-strict-aliasing"]


def module_name() -> str:
    return "_native" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so")


def compile_command(source: Path, target: Path) -> list[str] | None:
    """The command that builds `target` from `source` with this interpreter's toolchain,
    or None where sysconfig names none (Windows)."""
    linker = sysconfig.get_config_var("LDSHARED")
    include = sysconfig.get_paths().get("include")
    if not linker or not include:
        return None
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    return [*shlex.split(linker), *FLAGS, f'-DGATEWATCH_SOURCE_SHA256="{digest}"',
            f"-I{include}", str(source), "-o", str(target)]


class NativeBuildHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("GATEWATCH_NATIVE_BUILD") == "0":
            return
        source = Path(self.root) / SOURCE
        name = module_name()
        if version == "editable":
            target = source.with_name(name)
        else:
            self._out = tempfile.TemporaryDirectory(prefix="gatewatch-native-")
            target = Path(self._out.name) / name
        if not self._compile(source, target):
            return
        if version != "editable":
            build_data["force_include"][str(target)] = f"proxy/detector/{name}"
            build_data["pure_python"] = False
            build_data["infer_tag"] = True

    def _compile(self, source: Path, target: Path) -> bool:
        command = compile_command(source, target)
        if command is None:
            self.app.display_warning(f"gatewatch: no C toolchain known here; {FALLBACK}")
            return False
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self.app.display_warning(f"gatewatch: compiling {SOURCE} failed ({exc}); {FALLBACK}")
            return False
        if done.returncode != 0:
            target.unlink(missing_ok=True)
            self.app.display_warning(f"gatewatch: compiling {SOURCE} failed; {FALLBACK}\n"
                                     f"{done.stderr[-2000:]}")
            return False
        return True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        out = getattr(self, "_out", None)
        if out is not None:
            out.cleanup()

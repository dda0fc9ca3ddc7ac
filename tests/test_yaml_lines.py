"""The one YAML-with-line-numbers loader behind policies, server packs and rule packs."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.detector import PackError
from proxy.detector.rules import load_pack
from proxy.engine import PolicyError, load_policy
from proxy.errors import ConfigFileError
from proxy.yaml_lines import LineDict, load_yaml, read_yaml


def test_mappings_know_their_lines() -> None:
    data = load_yaml("a: 1\nb:\n  c: 2\n\n  d: [x]\n")
    assert isinstance(data, LineDict) and isinstance(data["b"], LineDict)
    assert (data.line, data.line_of("a"), data.line_of("b")) == (1, 1, 2)
    assert (data["b"].line_of("c"), data["b"].line_of("d"), data["b"].line_of("zz")) == (3, 5, 3)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("a: 1\nb: 2\na: 3\n", 3, "duplicate key 'a'; keep only one"),
        ("top:\n  x: 1\n  x: 1\n", 3, "duplicate key 'x'"),
        ("a: 1\n5: five\n", 2, "key 5 must be a string; quote it"),
        ("a: 1\nyes: sure\n", 2, "key True must be a string"),  # YAML 1.1 booleans
        ("a: 1\n? [1, 2]\n: list key\n", 2, "must be a string"),
        ("a: [1, 2\nb: 3\n", 2, "YAML syntax error"),
        ("a: 'open\n", 2, "YAML syntax error"),
    ],
)
def test_problems_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigFileError) as caught:
        load_yaml(text, "f.yaml")
    assert caught.value.line == line and words in caught.value.reason
    assert str(caught.value).startswith(f"f.yaml:{line}: ")


def test_unreadable_files_are_config_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError, match="cannot read file") as caught:
        read_yaml(tmp_path / "missing.yaml")
    assert caught.value.path == tmp_path / "missing.yaml"
    latin = tmp_path / "latin.yaml"
    latin.write_bytes(b"name: caf\xe9\n")
    with pytest.raises(ConfigFileError, match=r"not UTF-8 text .*save it as UTF-8"):
        read_yaml(latin)


def test_the_caller_names_the_error_class(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: 1\na: 2\n")
    with pytest.raises(PackError):
        read_yaml(path, error=PackError)
    with pytest.raises(PolicyError):
        read_yaml(path, error=PolicyError)


def test_policies_and_rule_packs_report_the_same_problem_the_same_way(tmp_path: Path) -> None:
    """One loader: a duplicate key reads alike whichever file it is in."""
    policy = tmp_path / "policy.yaml"
    policy.write_text("version: 1\nservers:\n  fs: {}\n  fs: {}\n")
    pack = tmp_path / "pack.yaml"
    pack.write_text("pack: mine\npack: again\nrules: []\n")
    with pytest.raises(PolicyError) as from_policy:
        load_policy(policy)
    with pytest.raises(PackError) as from_pack:
        load_pack(pack)
    assert str(from_policy.value) == f"{policy}:4: duplicate key 'fs'; keep only one"
    assert str(from_pack.value) == f"{pack}:2: duplicate key 'pack'; keep only one"


def test_a_yaml_boolean_key_cannot_silently_rename_a_policy_parameter(tmp_path: Path) -> None:
    """`on:` is True in YAML 1.1: read as the string "True", the pattern would guard a parameter
    no call has, and the real `on` argument would go unchecked. Refused, with its line."""
    policy = tmp_path / "policy.yaml"
    policy.write_text("servers:\n  lights:\n    tools:\n      switch:\n"
                      "        arg_patterns:\n          on: '(true|false)'\n")
    with pytest.raises(PolicyError) as caught:
        load_policy(policy)
    assert caught.value.line == 6 and "key True must be a string; quote it" in caught.value.reason
    policy.write_text(policy.read_text().replace("on:", "'on':"))
    rules = load_policy(policy).servers["lights"].tools["switch"]
    assert set(rules["arg_patterns"]) == {"on"}

"""Wrap and unwrap entries of one document as text splices, then check the result.

Wrapped form (read by `gatewatch run`):
    command: <gatewatch executable>
    args:    ["run", "--name", NAME, "--", <original command>, <original args>...]
The five new items go in front of the original args in the list's own style, and the original
command's literal text moves into the list unchanged, so unwrapping (drop five items, move the
fifth back) gives back the original bytes.

`args: []` (what Claude Code and Gemini CLI write) and no `args` at all (what Codex writes) both
come back as they were: an `args` that wrap adds goes in front of `command`, where clients do
not put it, so unwrap removes an emptied `args` only when it stands there and leaves `[]`
otherwise. Key order survives a client rewriting the file.

For a client that starts servers with a minimal environment (Codex), wrap also lists
GATEWATCH_ENV in the entry's pass-through list (`env_vars`), so the proxy finds the same data
directory and keyring as the app; unwrap takes exactly those names off the end again.
"""

from __future__ import annotations

from typing import Any

from proxy.clients.catalog import GATEWATCH_ENV
from proxy.clients.document import Document, Key, plain_data
from proxy.clients.edits import EditError, Splices, render_string
from proxy.clients.entries import WRAP_PREFIX_LEN, Fields, ServerEntry, wrapped_original
from proxy.clients.nodes import Member, Node

_FLOW_UNSAFE = set(",[]{}#\n")


class Editor:
    """Collects the edits for one document; `result()` applies and verifies them."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.splices = Splices(doc.text, doc.fmt)
        self.expected: Any = plain_data(doc.text, doc.fmt)

    def wrap(self, entry: ServerEntry, exe: str) -> bool:
        """Wrap one stdio entry; False when it already is wrapped with this executable."""
        fields, parent = self._parts(entry)
        command_node = parent.get(fields.command)
        assert command_node is not None and entry.command is not None
        if entry.wrapped:
            changed = self._pass_env(fields, parent)
            if entry.command != exe:
                self.splices.set_scalar(command_node, render_string(self.doc.fmt, exe))
                self._expect(fields.parent)[fields.command] = exe
                changed = True
            return changed
        name = entry.name
        args_member = parent.member(fields.args)
        seq = args_member.value if args_member else None
        raws = [render_string(self.doc.fmt, s) for s in ("run", "--name", name, "--")]
        raws.append(self._command_in_list(command_node, seq))
        self.splices.set_scalar(command_node, render_string(self.doc.fmt, exe))
        if seq is not None:
            self.splices.prepend_items(seq, raws)
        else:
            command_member = parent.member(fields.command)
            assert command_member is not None
            self.splices.insert_member_before(parent, command_member, fields.args,
                                              "[" + ", ".join(raws) + "]")
        target = self._expect(fields.parent)
        target[fields.command] = exe
        target[fields.args] = ["run", "--name", name, "--", entry.command, *entry.args]
        self._pass_env(fields, parent)
        return True

    def unwrap(self, entry: ServerEntry) -> bool:
        """Restore one wrapped entry; False when it is not wrapped."""
        original = wrapped_original(entry.command, entry.args)
        if original is None:
            return False
        fields, parent = self._parts(entry)
        command_node = parent.get(fields.command)
        command_member = parent.member(fields.command)
        args_member = parent.member(fields.args)
        assert command_node is not None and command_member and args_member is not None
        seq = args_member.value
        raw = self.splices.raw(seq.items[WRAP_PREFIX_LEN - 1])
        if self.doc.fmt == "yaml" and "\n" in raw:
            raw = render_string("yaml", original[0])
        self.splices.set_scalar(command_node, raw)
        target = self._expect(fields.parent)
        target[fields.command] = original[0]
        if len(seq.items) > WRAP_PREFIX_LEN:
            self.splices.drop_leading_items(seq, WRAP_PREFIX_LEN)
            target[fields.args] = original[1]
        elif parent.members.index(args_member) < parent.members.index(command_member):
            self.splices.remove_member(parent, args_member)  # wrap added it
            del target[fields.args]
        else:
            self.splices.empty_list(args_member)
            target[fields.args] = []
        self._unpass_env(fields, parent)
        return True

    def _pass_env(self, fields: Fields, parent: Node) -> bool:
        """Add GATEWATCH_ENV to the entry's pass-through list; False when nothing to do."""
        if fields.passes_env is None:
            return False
        key = fields.passes_env
        member = parent.member(key)
        names = self._names(member) if member else []
        if names[-len(GATEWATCH_ENV):] == list(GATEWATCH_ENV):
            return False
        raws = [render_string(self.doc.fmt, n) for n in GATEWATCH_ENV]
        if member is None:
            command, args = parent.member(fields.command), parent.member(fields.args)
            assert command is not None
            after = args if args and parent.members.index(args) > parent.members.index(
                command) else command
            self.splices.insert_member_after(parent, after, key, "[" + ", ".join(raws) + "]")
        else:
            self.splices.append_items(member.value, raws)
        self._expect(fields.parent)[key] = [*names, *GATEWATCH_ENV]
        return True

    def _unpass_env(self, fields: Fields, parent: Node) -> None:
        member = parent.member(fields.passes_env) if fields.passes_env else None
        if member is None:
            return
        names = self._names(member)
        count = len(GATEWATCH_ENV)
        if names[-count:] != list(GATEWATCH_ENV):
            return
        if len(names) == count:  # (an original `env_vars = []` is not told apart)
            self.splices.remove_member(parent, member)
            del self._expect(fields.parent)[member.key]
        else:
            self.splices.drop_trailing_items(member.value, count)
            self._expect(fields.parent)[member.key] = names[:-count]

    @staticmethod
    def _names(member: Member) -> list[str]:
        names = member.value.strings()
        if names is None or not member.value.flow:
            raise EditError(f"{member.key} is not a list of variable names")
        return names

    def set_env(self, entry: ServerEntry, var: str, value: str) -> None:
        assert entry.fields is not None
        env = self.doc.node(entry.fields.env)
        node = env.get(var) if env is not None and env.kind == "map" else None
        if node is None or node.kind != "scalar":
            raise EditError(f"{entry.name}: env {var} is not a plain value")
        self.splices.set_scalar(node, render_string(self.doc.fmt, value))
        self._expect(entry.fields.env)[var] = value

    def result(self) -> str:
        text = self.splices.apply()
        if plain_data(text, self.doc.fmt) != self.expected:
            raise EditError(f"{self.doc.path}: the edit would change more than the chosen "
                            "entries; nothing was written (please report this file's layout)")
        return text

    def _parts(self, entry: ServerEntry) -> tuple[Any, Node]:
        fields = entry.fields
        parent = self.doc.node(fields.parent) if fields else None
        if fields is None or parent is None:
            raise EditError(f"{entry.name}: {entry.skip_reason or 'not a stdio entry'}")
        return fields, parent

    def _command_in_list(self, command_node: Node, seq: Node | None) -> str:
        raw = self.splices.raw(command_node)
        if self.doc.fmt != "yaml":
            return raw
        flow = seq is None or seq.flow
        if "\n" in raw or (flow and _FLOW_UNSAFE & set(raw)):
            return render_string("yaml", str(command_node.value))
        return raw

    def _expect(self, location: tuple[Key, ...]) -> Any:
        node: Any = self.expected
        for key in location:
            node = node[key]
        if not isinstance(node, dict):
            raise EditError("expected an object")
        return node

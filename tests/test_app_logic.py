"""The tray app's logic without Qt: queue and merge, countdown, grants, tray state, framing."""

from __future__ import annotations

from pathlib import Path

import pytest

from app import app_prefs
from app.countdown import Countdown, popup_seconds
from app.grants import Answer, decision_message
from app.questions import Question, QuestionQueue
from app.rate_limit import RateLimiter
from app.tray_state import TrayFacts, TrayState, tray_state


def ask(ask_id: str, session: str = "s1", server: str = "gmail", tool: str = "send_email",
        destination: str | None = "new@random.com", deadline: float = 115,
        digest: str | None = "same-arguments", preview: str = "{}") -> Question:
    msg = {"type": "ask", "ask_id": ask_id, "session_id": session, "server": server,
           "tool": tool, "destination": destination, "arguments_preview": preview,
           "contract": "sink_gate", "reason": "untrusted", "deadline_s": deadline}
    if digest is not None:
        msg["arguments_digest"] = digest
    return Question.from_message(msg, now=1000.0)


def test_identical_questions_merge_and_one_answer_settles_all() -> None:
    queue = QuestionQueue()
    queue.add(ask("a-1", session="s1"))
    queue.add(ask("b-1", session="s2"))  # same server, tool, destination from another proxy
    queue.add(ask("a-2", destination="other@x.org"))
    assert len(queue) == 2
    assert queue.pending_calls() == 3
    group = queue.current()
    assert group is not None
    settled = queue.settle(group)
    assert [q.ask_id for q in settled] == ["a-1", "b-1"]
    current = queue.current()
    assert current is not None and current.first.destination == "other@x.org"


def test_same_address_different_bodies_are_two_questions() -> None:
    # Two send_email calls to one address with different bodies: each needs its own answer.
    queue = QuestionQueue()
    queue.add(ask("a-1", digest="body-one", preview='{"to": "x@y.org", "body": "hi"}'))
    queue.add(ask("a-2", digest="body-two", preview='{"to": "x@y.org", "body": "wire $5k"}'))
    assert len(queue) == 2
    group = queue.current()
    assert group is not None and [q.ask_id for q in group.members] == ["a-1"]
    assert [q.ask_id for q in queue.settle(group)] == ["a-1"]  # one Allow sends one call


def test_previews_that_look_alike_do_not_merge_without_equal_digests() -> None:
    # The preview is redacted and cut at 4 KiB, so it cannot prove two calls are the same.
    queue = QuestionQueue()
    queue.add(ask("a-1", digest="secret-one", preview='{"token": "[redacted]"}'))
    queue.add(ask("a-2", digest="secret-two", preview='{"token": "[redacted]"}'))
    queue.add(ask("a-3", digest=None))
    queue.add(ask("a-4", digest=None))  # no digest (an older proxy): never merged
    assert len(queue) == 4


def test_questions_keep_arrival_order_and_duplicates_are_ignored() -> None:
    queue = QuestionQueue()
    queue.add(ask("1", tool="a"))
    queue.add(ask("2", tool="b"))
    queue.add(ask("1", tool="a"))
    assert [g.first.tool for g in queue.groups()] == ["a", "b"]
    assert queue.pending_calls() == 2


def test_cancel_removes_one_member_and_empty_groups() -> None:
    queue = QuestionQueue()
    queue.add(ask("1"))
    queue.add(ask("2"))
    assert queue.cancel("1") is not None
    assert queue.pending_calls() == 1
    assert queue.cancel("2") is not None
    assert queue.current() is None
    assert queue.cancel("unknown") is None


def test_proxy_exit_drops_all_its_questions_only() -> None:
    changes: list[int] = []
    queue = QuestionQueue(on_change=lambda: changes.append(1))
    queue.add(ask("a-1", session="a"))
    queue.add(ask("a-2", session="a", tool="other"))
    queue.add(ask("b-1", session="b"))
    changes.clear()
    dropped = queue.drop_session("a")
    assert {q.ask_id for q in dropped} == {"a-1", "a-2"}
    assert [q.ask_id for g in queue.groups() for q in g.members] == ["b-1"]
    assert changes == [1]


def test_group_deadline_is_the_earliest_member() -> None:
    queue = QuestionQueue()
    queue.add(ask("1", deadline=100))
    group = queue.add(ask("2", deadline=30))
    assert group.seconds_left(now=1010.0) == pytest.approx(20.0)
    assert popup_seconds(60, group.seconds_left(now=1010.0)) == pytest.approx(20.0)
    assert popup_seconds(15, group.seconds_left(now=1010.0)) == 15


def test_a_changed_tool_question_does_not_merge_with_a_destination_question() -> None:
    queue = QuestionQueue()
    queue.add(ask("1", destination=None))
    queue.add(ask("2"))
    assert len(queue) == 2


def test_malformed_ask_fields_become_safe_defaults() -> None:
    q = Question.from_message({"type": "ask", "ask_id": "x", "destination": 5, "origin": "no",
                               "deadline_s": "soon"}, now=0)
    assert q.destination is None and q.origin is None and q.deadline_s == 0


def test_countdown_expires_once_and_pauses_for_good() -> None:
    c = Countdown(1.0)
    assert not c.tick(0.5)
    assert c.label() == "1 s"
    assert c.tick(0.5)
    assert not c.tick(0.5)  # already expired: no second deny
    p = Countdown(10.0)
    p.pause()
    assert not p.tick(100.0)
    assert p.label() == "paused"


def test_countdown_can_be_switched_off() -> None:
    c = Countdown(10.0, enabled=False)
    assert not c.tick(100.0)
    assert c.label() == ""
    assert not Countdown(0).running


@pytest.mark.parametrize(
    ("answer", "remember", "expires"),
    [
        (Answer(allow=True), "once", None),
        (Answer(allow=True, remember="session"), "session", None),
        (Answer(allow=True, remember="forever"), "forever", None),
        (Answer(allow=True, remember="forever", expires_in_s=3600), "forever", 3600),
        (Answer(allow=True, remember="session", expires_in_s=3600), "session", None),
        # A deny is for this call only, unless the person chose "Always deny".
        (Answer(allow=False, remember="session"), "once", None),
        (Answer.deny_forever(), "forever", None),
        # A timeout is never remembered, whatever else was set.
        (Answer(allow=False, remember="forever", missed=True), "once", None),
        (Answer.deny(missed=True), "once", None),
    ],
)
def test_answer_maps_to_decision(answer: Answer, remember: str, expires: float | None) -> None:
    msg = decision_message("s-3", answer)
    assert msg == {"type": "decision", "ask_id": "s-3", "allow": answer.allow,
                   "remember": remember, "expires_in_s": expires,
                   "timed_out": answer.missed, "agent_message": None}


def test_words_for_the_agent_go_with_a_deny_only() -> None:
    assert decision_message("a", Answer.deny(message="  use the team list "))[
        "agent_message"] == "use the team list"
    assert decision_message("a", Answer(allow=True, agent_message="x"))["agent_message"] is None
    long = decision_message("a", Answer.deny(message="x" * 5000))["agent_message"]
    assert long is not None and len(long) == 500


@pytest.mark.parametrize(
    ("facts", "state"),
    [
        (TrayFacts(0, 0, 0, False), TrayState.IDLE),
        (TrayFacts(2, 0, 0, False), TrayState.RUNNING),
        (TrayFacts(2, 3, 1, True), TrayState.PENDING),
        (TrayFacts(2, 0, 1, True), TrayState.MISSED),
        (TrayFacts(2, 0, 0, True), TrayState.PAUSED),
        (TrayFacts(0, 0, 0, True), TrayState.PAUSED),
    ],
)
def test_tray_state(facts: TrayFacts, state: TrayState) -> None:
    assert tray_state(facts) is state


def test_rate_limiter() -> None:
    limit = RateLimiter(limit=2, window_s=10)
    assert [limit.allow(now=t) for t in (0, 1, 2, 3)] == [True, True, False, False]
    assert limit.take_suppressed() == 2
    assert limit.allow(now=10.5)


def test_app_prefs_round_trip_and_fall_back_on_junk(tmp_path: Path) -> None:
    path = tmp_path / "app.yaml"
    assert app_prefs.load(path).countdown is True
    app_prefs.save(app_prefs.AppPrefs(countdown=False), path)
    assert app_prefs.load(path).countdown is False
    path.write_text("countdown: [\n")
    assert app_prefs.load(path).countdown is True


def test_remember_choices_follow_the_question() -> None:
    assert ask("1").remember_choices == ("once", "session", "forever")
    assert ask("2", destination=None).remember_choices == ("once", "session")
    offered = Question.from_message({"type": "ask", "ask_id": "3", "destination": "a@b.c",
                                     "remember_choices": ["once"]})
    assert offered.remember_choices == ("once",)


@pytest.mark.parametrize(
    ("destination", "detail", "headline"),
    [
        ("a@b.c", None, "send_email on gmail wants to send to a@b.c"),
        (None, {"pin": "new", "diff": "+x"}, "send_email on gmail is a new tool you have not"
                                              " approved"),
        (None, {"pin": "changed", "diff": "-x\n+y"}, "send_email on gmail changed since you"
                                                      " approved it"),
        (None, {}, "send_email on gmail needs your approval"),
    ],
)
def test_headline_says_what_is_happening(destination: str | None, detail: dict[str, str] | None,
                                         headline: str) -> None:
    from app.wording import headline as say

    q = Question.from_message({"type": "ask", "ask_id": "1", "server": "gmail",
                               "tool": "send_email", "destination": destination,
                               "detail": detail}, now=0)
    assert say(q) == headline


def test_start_at_login_writes_and_removes_a_desktop_entry(gw_home: Path) -> None:
    import sys

    from app import autostart

    if not sys.platform.startswith("linux"):
        pytest.skip("XDG autostart is Linux only")
    assert autostart.set_enabled(True)
    entry = autostart.autostart_file().read_text()
    assert "[Desktop Entry]" in entry and "@EXEC@" not in entry and "@ICON@" not in entry
    assert f"Exec={autostart.launcher()[0]}" in entry
    assert autostart.set_enabled(False)
    assert not autostart.autostart_file().exists()


def test_the_popup_gets_the_engine_s_destination_checks_typed() -> None:
    # The engine's decision, through the ask message's JSON, back into the popup's question.
    from app import wording
    from proxy.checking import check_call
    from proxy.ipc.framing import LineDecoder, encode

    trusting = "servers:\n  gmail:\n    trusted_destinations: ['*@corp.example']\n"
    decision = check_call("gmail", "send_email",
                          {"to": ["new@random.example"], "cc": ["boss@corp.example"]},
                          policy_yaml=trusting).decision
    assert decision.verdict == "ask" and len(decision.checked) == 2
    wire = encode({"type": "ask", "ask_id": "s-1", "destination": decision.destination,
                   "contract": decision.contract, "reason": decision.reason,
                   "detail": decision.detail})
    question = Question.from_message(LineDecoder().feed(wire)[0], now=0)
    assert question.checked == decision.checked
    why = wording.why(question)
    assert "to[0]: new@random.example" in why and "boss@corp.example" not in why

"""The agent room keeps the names of agent kinds to itself (issue 34 item 3).

Which kinds of agent there are (built-in ``untouched``, ``replay:``, ``command:``; the real
clients) is listed once, in ``srb_tui/agents/kinds.py``; code outside the room asks the room
(``is_client``, ``CLIENT_KINDS``, ``LANE_CLIENTS``, ``agent_for`` …) instead of naming a kind.

What is checked, by reading the code (AST), not its text:

* no string constant outside the room *is* a client's name (``"codex"``) — prose that
  mentions a client (docstrings, help text, messages such as "claude-code:MODEL") is a
  longer string and passes;
* no comparison outside the room tests a value against a kind's name or spec prefix
  (``kind == "replay"``, ``driver in ("claude-code", "codex")``, ``x == "command:"``), and
  no ``.startswith("command:")``-style test of a spec text. Composing a spec text
  (``f"replay:{name}"`` in the launch dialog) is not a test of a kind and passes.

The room: ``srb_tui/agents/``, ``srb_tui/service/run/agent_*.py`` (the run-side kinds and
their registry) and the Stage III lane (``service/grading/stages/client_lane.py``). Tests
are outside the scan (they name clients to drive them). Two files are allowed by name, with
their reasons (:data:`ALLOWED`): ``schema/published.py`` lists the adversary drivers a task
may name and must stay standard-library-only (the schema contract), so it cannot import the
room — ``tests/contracts/test_a_validation.py`` pins its list to the room's lane clients;
``grader/contract.py`` says "codex" as the name of a model family, not of the client.
"""

from __future__ import annotations

import ast
from pathlib import Path

from srb_tui.agents.kinds import BUILTIN_KINDS, CLIENT_KINDS

PACKAGE = Path(__file__).resolve().parents[2] / "srb_tui"
ROOM = ("agents/", "service/run/agent_", "service/grading/stages/client_lane.py")
ALLOWED = {
    "schema/published.py": "stdlib-only schema; pinned to LANE_CLIENTS by a contract test",
    "grader/contract.py": "'codex' there is a model family (vendor by model name), not the client",
}
KIND_NAMES = frozenset((*BUILTIN_KINDS, *CLIENT_KINDS))
KIND_TESTS = frozenset((*KIND_NAMES, *(f"{k}:" for k in KIND_NAMES)))


def _constants(node: ast.AST) -> list[str]:
    """The string constants ``node`` is, or (a tuple/list/set of them) holds."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [c for elt in node.elts for c in _constants(elt)]
    return []


def room_breaches(source: str, where: str) -> list[str]:
    """Each place in ``source`` that names an agent kind outside the room."""
    found = []
    for node in ast.walk(ast.parse(source, filename=where)):
        line = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Constant) and node.value in CLIENT_KINDS:
            found.append(f"{line}: names {node.value!r}")
        elif isinstance(node, ast.Compare):
            names = [c for side in (node.left, *node.comparators) for c in _constants(side)
                     if c in KIND_TESTS]
            if names:
                found.append(f"{line}: compares with the kind {names[0]!r}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "removeprefix") and node.args):
            prefixes = [c for c in _constants(node.args[0])
                        if c.rstrip(":") in KIND_NAMES]
            if prefixes:
                found.append(f"{line}: tests the prefix {prefixes[0]!r}")
    return found


def _outside_room() -> list[Path]:
    paths = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith(ROOM) or rel in ALLOWED:
            continue
        paths.append(path)
    return paths


def test_no_kind_name_outside_the_agent_room() -> None:
    breaches = [b for path in _outside_room()
                for b in room_breaches(path.read_text(encoding="utf-8"),
                                       path.relative_to(PACKAGE).as_posix())]
    assert breaches == []


def test_the_check_is_not_blind() -> None:
    """Each shape the rule forbids, planted in a module outside the room, is found."""
    planted = '''
"""A docstring may say claude-code:MODEL or codex freely."""
CLIENTS_AGAIN = ("claude-code", "codex", "mini-swe-agent")
def kind_of(text, kind, driver):
    if kind == "replay":
        return 1
    if driver in ("claude-code", "codex"):
        return 2
    if text.startswith("command:"):
        return 3
    return f"no client in {text}"
'''
    found = room_breaches(planted, "ui/planted.py")
    assert sorted(found) == sorted([
        "ui/planted.py:3: names 'claude-code'", "ui/planted.py:3: names 'codex'",
        "ui/planted.py:3: names 'mini-swe-agent'",
        "ui/planted.py:5: compares with the kind 'replay'",
        "ui/planted.py:7: compares with the kind 'claude-code'",
        "ui/planted.py:7: names 'claude-code'", "ui/planted.py:7: names 'codex'",
        "ui/planted.py:9: tests the prefix 'command:'",
    ])
    assert any(p.relative_to(PACKAGE).as_posix().startswith("ui/") for p in _outside_room())


def test_the_room_lists_each_client_once() -> None:
    """The one list and the parts keyed by it agree: every client has an adapter, and the
    lane clients are clients."""
    from srb_tui.agents.adapters import ADAPTERS
    from srb_tui.agents.kinds import CLIENTS, LANE_CLIENTS
    from srb_tui.service.run.agent_kinds import KINDS

    assert tuple(CLIENTS) == CLIENT_KINDS
    assert set(ADAPTERS) == set(CLIENTS)
    assert set(LANE_CLIENTS) <= set(CLIENTS)
    assert set(KINDS) == KIND_NAMES

"""Near-miss detection for key names."""

from __future__ import annotations

from srb_tui.schema.evaluation_toml import KNOWN_OPTIONS, STAGE_KEYS
from srb_tui.schema.suggest import did_you_mean, suggest

STAGE = (*STAGE_KEYS, *KNOWN_OPTIONS)


def test_typos_of_stage_keys_are_recognised() -> None:
    assert suggest("timout_sec", STAGE) == "timeout_sec"
    assert suggest("timeout", STAGE) == "timeout_sec"
    assert suggest("Timeout_Sec", STAGE) == "timeout_sec"
    assert suggest("timeout-sec", STAGE) == "timeout_sec"
    assert suggest("enable", STAGE) == "enabled"
    assert suggest("gates", STAGE) == "gate"
    assert suggest("promt", STAGE) == "prompt"


def test_unrelated_names_and_exact_names_get_no_suggestion() -> None:
    assert suggest("colour", STAGE) is None
    assert suggest("timeout_sec", STAGE) is None
    # Every option the official tasks use is known, so none is taken for a typo.
    for name in ("run_timeout_sec", "max_turns", "reference", "driver_options", "adjudicator"):
        assert suggest(name, STAGE) is None


def test_did_you_mean_phrase() -> None:
    assert did_you_mean("usr", ["harness", "timeout_sec", "network_mode", "user"]) == (
        "; did you mean `user`?"
    )
    assert did_you_mean("zzz", ["user"]) == ""

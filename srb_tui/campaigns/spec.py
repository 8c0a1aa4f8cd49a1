"""Campaign files (TOML), read with the task schema's reader: every problem at once, each
with file, key and line. ``FORMAT`` (below) is the format as ``srb campaign run --help``
and the README show it.

```toml
[campaign]
name = "demo"                 # default: the file's stem
tasks = ["demo01-*"]          # task ids or globs over the task roots
repeats = 2
max_parallel = 2
max_cost = 50.0               # USD over the whole campaign (optional)
retry_limit = 2               # re-runs of a cell whose run was invalid / infra_error
adversary_budget_sec = 20     # optional: every Stage III budget (quick looks, tests)
budget_sec = 600              # optional: the agent budget instead of the task's

[[config]]
label = "reference"           # a token; the matrix column
agent = "replay:reference"    # claude-code:MODEL, codex:MODEL, mini-swe-agent:MODEL,
                              # replay:NAME, command:…, untouched
model = "…"                   # optional, recorded with the run
effort = "high"               # optional; a real client's effort level (checked)
max_cost = 5.0                # optional, USD per run (the gateway refuses past it)
max_tokens = 2000000          # optional, tokens per run (the gateway refuses past it)
budget_sec = 3600             # optional, the agent's wall clock for this configuration
```

A real-client configuration runs exactly as ``srb run TASK --agent claude-code:MODEL
--effort E --max-cost USD --max-tokens N --budget SEC`` does: through the gateway, with the
same checks (``service.agent_specs.check_agent``).
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from srb_tui.schema import Problem
from srb_tui.schema.reader import EMPTY, Source, Table, is_token
from srb_tui.store.campaign_records import CampaignConfigRecord

FORMAT = """\
[campaign]
name = "demo"                 # default: the file's stem
tasks = ["demo01-*"]          # task ids or globs over the task roots (required)
repeats = 2                   # runs of each (task, config) cell (default 1)
max_parallel = 2              # runs at once (default 1)
max_cost = 50.0               # optional: USD over the whole campaign
retry_limit = 2               # re-runs of a cell whose run was invalid / infra_error
adversary_budget_sec = 20     # optional: every Stage III budget (quick looks, tests)
budget_sec = 600              # optional: the agent budget instead of the task's

[[config]]                    # one or more: the matrix columns
label = "reference"           # a token (letters, digits, ._-), unique (required)
agent = "replay:reference"    # as srb run --agent: claude-code:MODEL, codex:MODEL,
                              # mini-swe-agent:MODEL, replay:NAME, command:ARGV, untouched
model = "..."                 # optional, recorded with the run
effort = "high"               # optional: a real client's effort level (checked)
max_cost = 5.0                # optional: USD per run (the gateway refuses past it)
max_tokens = 2000000          # optional: tokens per run (the gateway refuses past it)
budget_sec = 3600             # optional: the agent's wall clock for this configuration
"""

TOP_KEYS = ("campaign", "config")
CAMPAIGN_KEYS = ("name", "tasks", "repeats", "max_parallel", "max_cost", "retry_limit",
                 "adversary_budget_sec", "budget_sec", "description")
CONFIG_KEYS = ("label", "agent", "model", "effort", "max_cost", "max_tokens", "budget_sec")


@dataclass(frozen=True)
class CampaignSpec:
    """A campaign file, read (``problems`` empty when it is usable)."""

    name: str
    file: str
    source: str
    selectors: tuple[str, ...]
    configs: tuple[CampaignConfigRecord, ...]
    repeats: int = 1
    max_parallel: int = 1
    max_cost: float | None = None
    retry_limit: int = 2
    adversary_budget_sec: float | None = None
    budget_sec: float | None = None
    problems: tuple[Problem, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.problems


def _optional_number(table: Table, name: str) -> float | None:
    if not table.has(name):
        return None
    value = table.number(name, -1.0, positive=True)
    return None if value < 0 else value


def parse_campaign(text: str, file: str, default_name: str = "") -> CampaignSpec:
    """Read a campaign from ``text`` (``file`` names it in problems)."""
    problems: list[Problem] = []
    source = Source(file, text, problems)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problems.append(Problem(file, "", f"not valid TOML: {exc}"))
        return CampaignSpec(default_name, file, text, (), (), problems=tuple(problems))
    if not data:  # one message, not one per missing table
        problems.append(Problem(file, "campaign", "the file is empty: a campaign needs a "
                                "[campaign] table with `tasks` and at least one [[config]] "
                                "(the format: `srb campaign run --help`)"))
        return CampaignSpec(default_name, file, text, (), (), problems=tuple(problems))
    top = Table(source, "", data)
    top.check_keys(TOP_KEYS)
    found = top.table("campaign", required=True)
    camp = found or Table(source, "campaign", EMPTY)
    camp.check_keys(CAMPAIGN_KEYS)
    name = camp.string("name", default_name)
    if not name:
        camp.report("name", "required key is missing (the file has no usable stem)")
    elif not is_token(name):
        camp.report("name", f"campaign name `{name}` is not a token (letters, digits, `._-`)")
    selectors = camp.string_list("tasks", required=found is not None)
    if camp.has("tasks") and not selectors:
        camp.report("tasks", "names no task")
    repeats = camp.integer("repeats", 1, minimum=1)
    max_parallel = camp.integer("max_parallel", 1, minimum=1)
    retry_limit = camp.integer("retry_limit", 2, minimum=0)
    max_cost = _optional_number(camp, "max_cost")
    adversary = _optional_number(camp, "adversary_budget_sec")
    budget = _optional_number(camp, "budget_sec")
    tables = top.tables("config", required=True)
    if top.has("config") and not tables:
        top.report("config", "needs at least one [[config]]")
    configs: list[CampaignConfigRecord] = []
    labels: list[str] = []
    for table in tables:
        table.check_keys(CONFIG_KEYS)
        label = table.string("label", required=True)
        agent = table.string("agent", required=True)
        if table.has("agent") and not agent.strip():
            table.report("agent", "is empty")
        labels.append(label)
        configs.append(CampaignConfigRecord(
            label=label, agent=agent, model=table.optional_string("model"),
            effort=table.optional_string("effort"), max_cost=_optional_number(table, "max_cost"),
            max_tokens=table.integer("max_tokens", 0, minimum=1) or None
            if table.has("max_tokens") else None,
            budget_sec=_optional_number(table, "budget_sec"),
        ))
    seen: set[str] = set()
    for table, label in zip(tables, labels, strict=True):
        if label and not is_token(label):
            table.report("label", f"configuration label `{label}` is not a token "
                         "(letters, digits, `._-`, at most 64)")
        if label in seen:
            table.report("label", f"duplicate configuration label `{label}`")
        seen.add(label)
    return CampaignSpec(
        name=name, file=file, source=text, selectors=selectors, configs=tuple(configs),
        repeats=repeats, max_parallel=max_parallel, max_cost=max_cost,
        retry_limit=retry_limit, adversary_budget_sec=adversary, budget_sec=budget,
        problems=tuple(problems),
    )


def read_campaign(path: Path) -> CampaignSpec:
    """A campaign file from disk (a missing or unreadable file is a problem too)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return CampaignSpec(path.stem, str(path), "", (), (),
                            problems=(Problem(str(path), "", f"cannot read: {exc}"),))
    return parse_campaign(text, str(path), path.stem)


def select_tasks(spec: CampaignSpec, task_ids: Sequence[str]) -> tuple[list[str], list[Problem]]:
    """Task ids the selectors name, in selector order then catalogue order, each once; a
    selector naming nothing is a problem (with the line of ``campaign.tasks``)."""
    chosen: list[str] = []
    problems: list[Problem] = []
    line = Source(spec.file, spec.source, []).line("campaign.tasks")
    for index, selector in enumerate(spec.selectors):
        matched = [t for t in task_ids if fnmatch.fnmatchcase(t, selector)]
        if not matched:
            problems.append(Problem(spec.file, f"campaign.tasks[{index}]",
                                    f"`{selector}` matches no task under the task roots", line))
        chosen += [t for t in matched if t not in chosen]
    return chosen, problems

"""Model drivers for reviewers (Stage I) and adversaries (Stage III), and the host-side loops.

`base` (the `ModelDriver` interface and srb's neutral messages), `anthropic_driver` and
`openai_driver` (official SDKs, imported lazily), `scripted` (a program speaking the grader's
JSON-lines protocol), `registry.make_driver`, `channel` (where tool calls execute), `tools`
(tool schemas) and `loop` (`run_review`, `run_adversary_round`). Importing this package does
not import any SDK.
"""

from typing import TYPE_CHECKING

from srb_tui.lazy import exports_on_first_use

if TYPE_CHECKING:
    from .base import (
        AssistantMessage,
        DriverConfigError,
        DriverError,
        Message,
        ModelDriver,
        ModelTurn,
        RetryPolicy,
        ToolCall,
        ToolResult,
        ToolResults,
        ToolSchema,
        Usage,
        UserText,
    )
    from .channel import ChannelError, SubprocessToolChannel, ToolChannel
    from .loop import (
        AdversaryTranscript,
        ReviewSample,
        deadline_in,
        run_adversary_round,
        run_review,
    )
    from .registry import make_driver

__all__ = [
    "AdversaryTranscript",
    "AssistantMessage",
    "ChannelError",
    "DriverConfigError",
    "DriverError",
    "Message",
    "ModelDriver",
    "ModelTurn",
    "RetryPolicy",
    "ReviewSample",
    "SubprocessToolChannel",
    "ToolCall",
    "ToolChannel",
    "ToolResult",
    "ToolResults",
    "ToolSchema",
    "Usage",
    "UserText",
    "deadline_in",
    "make_driver",
    "run_adversary_round",
    "run_review",
]

__getattr__ = exports_on_first_use(__name__)

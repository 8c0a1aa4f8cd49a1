"""The three grading stages as the ladder runs them against real containers.

`common` (stage images, the stage container with the grader copied in, outcomes),
`channels` (tool calls and candidate tries executed inside a stage container), `audit`
(Stage I), `behavioural` (Stage II, also the identity run) and `verification` (Stage III).
The order and the gating between them live in :mod:`srb_tui.service.grading.ladder`.
"""

"""``agentctl batch``: run many tasks (a JSONL file) in isolated workspaces, resumably.

Modules, one concern each:

- :mod:`~agentctl.batch.tasks`: the task file (one JSON object a line), validated per line.
- :mod:`~agentctl.batch.records`: the result record of one task (a line of ``results.jsonl``)
  and the batch's own file, ``batch.json``.
- :mod:`~agentctl.batch.engine`: the contract an engine implements (local, Ray).
- :mod:`~agentctl.batch.workspace`: a task's workspace under ``DIR/work/ID`` (a git worktree or
  a copy) and its diff.
- :mod:`~agentctl.batch.store`: ``results.jsonl`` (append-only, a whole line per write) and the
  artifacts (written under a temporary name, then renamed).
- :mod:`~agentctl.batch.commands`: a task's ``setup`` and ``check`` commands.
- :mod:`~agentctl.batch.execute`: one task end to end against a connected daemon.
- :mod:`~agentctl.batch.single`: one task end to end on this machine, as plain data (what a
  remote worker calls).
- :mod:`~agentctl.batch.local`: the local engine (one shared daemon, N sessions at once).
- :mod:`~agentctl.batch.budget`: the whole batch's cost and token caps and its pace.
- :mod:`~agentctl.batch.runner`: the scheduler (resume, shards, concurrency, Ctrl-C).
- :mod:`~agentctl.batch.progress`: the live line, per-task lines and ``--json`` events.
- :mod:`~agentctl.batch.report`: ``agentctl batch report DIR`` (table, Markdown, HTML).
- :mod:`~agentctl.batch.args`: the command's grammar; :mod:`~agentctl.batch.cli`: its entry
  point.
"""

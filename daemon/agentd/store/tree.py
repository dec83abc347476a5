"""The entry tree of one session, in memory: branches, the current leaf, the model context.

Entries link to their parent by id, so one file holds many branches. The *leaf* is where
the next entry goes; the *branch* is the path root → leaf. Entries of unknown types (from a
newer format) are kept as :class:`UnknownEntry`; those with an id are pass-through nodes of
the tree: paths walk through them, and nothing is taken from them.
"""

from __future__ import annotations

import msgspec

from agentd.protocol.content import (
    AssistantMessage,
    Message,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from agentd.protocol.events import PlanItem
from agentd.protocol.session_file import (
    CompactionEntry,
    Entry,
    HookEntry,
    MessageEntry,
    ModelChangeEntry,
    PlanEntry,
    SessionInfoEntry,
    SettingsEntry,
)
from agentd.store.paths import epoch_from_iso


class UnknownEntry(msgspec.Struct, frozen=True):
    """A line whose ``type`` this version does not know, kept byte for byte in ``raw``."""

    type: str
    raw: bytes
    id: str | None = None
    parent_id: str | None = None


class LoadWarning(msgspec.Struct, frozen=True):
    """A problem found while loading a session (1-based ``line`` when it is about one)."""

    line: int | None
    message: str


Node = Entry | UnknownEntry


class SessionTree:
    """The entries of a session and its current leaf. Reads only; writing is SessionFile's."""

    def __init__(self, nodes: list[Node]) -> None:
        self.leaf_id: str | None = None
        self._nodes: list[Node] = []
        self._entries: list[Entry] = []
        self._by_id: dict[str, Node] = {}
        self._branch_leaf: str | None = None
        self._branch: list[Node] = []
        self.tree_warnings: list[LoadWarning] = []
        self.hook_block_count = 0
        """How many ``hook_result`` entries with decision ``block`` the file holds (any
        branch): a reader looking for them skips the walk when there are none."""
        for node in nodes:
            self._insert(self._adopt(node))

    # --- queries --------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        """Every entry of a known type, in file order (all branches)."""
        return list(self._entries)

    def get(self, entry_id: str) -> Entry | None:
        """The entry with id ``entry_id``, or ``None`` (also for entries of unknown types)."""
        node = self._by_id.get(entry_id)
        return None if isinstance(node, UnknownEntry) else node

    def path_to_leaf(self) -> list[Entry]:
        """The entries on the current branch, root first (unknown types left out)."""
        return [node for node in self._branch_nodes() if not isinstance(node, UnknownEntry)]

    def messages(self) -> list[Message]:
        """The model context on the current branch.

        Without compaction: every message on the branch. With one: the latest compaction on
        the branch wins, giving a user message whose text is its ``summary`` (as written),
        then the messages from its ``first_kept_entry_id`` up to the compaction, then the
        messages after it. A tool result whose call is not before it (the assistant message
        was on a damaged line) is left out: providers refuse unpaired results.
        """
        path = self.path_to_leaf()
        cut = _last_compaction(path)
        if cut is None:
            return _paired(_messages_of(path))
        compaction = path[cut]
        assert isinstance(compaction, CompactionEntry)
        kept_from = next(
            (i for i in range(cut) if path[i].id == compaction.first_kept_entry_id), cut
        )
        kept = [*_messages_of(path[kept_from:cut]), *_messages_of(path[cut + 1 :])]
        return [_summary_message(compaction), *_paired(kept)]

    def title(self) -> str | None:
        """The title from the latest ``session_info`` entry in the file, if any."""
        for entry in reversed(self._entries):
            if isinstance(entry, SessionInfoEntry):
                return entry.title
        return None

    def settings(self) -> SettingsEntry | None:
        """The latest ``settings`` entry in the file, if any."""
        for entry in reversed(self._entries):
            if isinstance(entry, SettingsEntry):
                return entry
        return None

    def plan(self) -> list[PlanItem]:
        """The plan of the latest ``plan`` entry on the current branch (empty: none)."""
        for entry in reversed(self.path_to_leaf()):
            if isinstance(entry, PlanEntry):
                return list(entry.entries)
        return []

    def model(self) -> tuple[str, str] | None:
        """``(provider, model)`` in use on the branch: from the latest ``model_change`` entry
        or assistant message, whichever comes last."""
        for entry in reversed(self.path_to_leaf()):
            if isinstance(entry, ModelChangeEntry):
                return entry.provider, entry.model
            reply = _assistant(entry)
            if reply is not None and reply.provider:
                return reply.provider, reply.model
        return None

    def usage(self) -> Usage:
        """Token counts and cost summed over the assistant messages on the branch."""
        total = Usage()
        for reply in filter(None, map(_assistant, self.path_to_leaf())):
            total = total.add(reply.usage)
        return total

    def dangling_tool_calls(self) -> list[ToolCall]:
        """Tool calls on the branch that have no tool result on the branch, in order."""
        messages = _messages_of(self.path_to_leaf())
        answered = {m.tool_call_id for m in messages if isinstance(m, ToolResultMessage)}
        return [
            call
            for message in messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls()
            if call.id not in answered
        ]

    def has_entry(self, entry_id: str) -> bool:
        """Whether ``entry_id`` names a node of the tree (of any type)."""
        return entry_id in self._by_id

    # --- changes --------------------------------------------------------------------------

    def _insert(self, node: Node) -> None:
        """Add ``node`` (already written) as the newest node and make it the leaf."""
        self._nodes.append(node)
        if not isinstance(node, UnknownEntry):
            self._entries.append(node)
        if isinstance(node, HookEntry) and node.hook.decision == "block":
            self.hook_block_count += 1
        if node.id is None:
            return
        if node.id in self._by_id:
            self.tree_warnings.append(LoadWarning(None, f"entry id {node.id!r} is repeated"))
        self._by_id[node.id] = node
        if self._branch_leaf == node.parent_id and self._branch_leaf == self.leaf_id:
            self._branch.append(node)
            self._branch_leaf = node.id
        self.leaf_id = node.id

    def _branch_nodes(self, leaf_id: str | None = None) -> list[Node]:
        """Nodes root → ``leaf_id`` (default: the leaf), unknown types included."""
        target = self.leaf_id if leaf_id is None else leaf_id
        if target == self._branch_leaf:
            return self._branch
        chain: list[Node] = []
        seen: set[str] = set()
        current = target
        while current is not None and current not in seen:
            node = self._by_id.get(current)
            if node is None:
                break
            seen.add(current)
            chain.append(node)
            current = node.parent_id
        chain.reverse()
        if leaf_id is None:
            self._branch, self._branch_leaf = chain, target
        return chain

    def _adopt(self, node: Node) -> Node:
        """``node`` as loaded, or, when its parent is missing (a damaged line was skipped),
        a copy attached to the entry before it in file order (in memory only)."""
        if node.parent_id is None or node.parent_id in self._by_id:
            return node
        self.tree_warnings.append(
            LoadWarning(
                None,
                f"entry {node.id!r} refers to a missing parent {node.parent_id!r}; "
                "attached to the entry before it",
            )
        )
        return msgspec.structs.replace(node, parent_id=self.leaf_id)


def _last_compaction(path: list[Entry]) -> int | None:
    for index in range(len(path) - 1, -1, -1):
        if isinstance(path[index], CompactionEntry):
            return index
    return None


def _messages_of(entries: list[Entry]) -> list[Message]:
    return [entry.message for entry in entries if isinstance(entry, MessageEntry)]


def _paired(messages: list[Message]) -> list[Message]:
    """``messages`` without the tool results that answer no earlier tool call."""
    called: set[str] = set()
    kept: list[Message] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            called.update(call.id for call in message.tool_calls())
        elif isinstance(message, ToolResultMessage) and message.tool_call_id not in called:
            continue
        kept.append(message)
    return kept


def _assistant(entry: Entry) -> AssistantMessage | None:
    if isinstance(entry, MessageEntry) and isinstance(entry.message, AssistantMessage):
        return entry.message
    return None


def _summary_message(compaction: CompactionEntry) -> UserMessage:
    return UserMessage(
        id=compaction.id,
        content=[TextContent(text=compaction.summary)],
        timestamp=epoch_from_iso(compaction.timestamp),
    )

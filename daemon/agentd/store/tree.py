"""The entry tree of one session, in memory: branches, the current leaf, the model context.

Entries link to their parent by id, so one file holds many branches. The *leaf* is where
the next entry goes; the *branch* is the path root → leaf. Entries of unknown types (from a
newer format) are kept as :class:`UnknownEntry`; those with an id are pass-through nodes of
the tree: paths walk through them, and nothing is taken from them.

Message entries (the bulk of a file) are held as :class:`~agentd.store.refs.MessageRef`s and
decoded from the file when a query needs their bodies (:mod:`agentd.store.refs`); the other
entries are small and stay decoded. ``model``, ``usage``, ``plan``, ``title``, ``settings``,
``dangling_tool_calls`` and :meth:`SessionTree.outline` decode no message, or only the few
they return; :meth:`SessionTree.messages` decodes the model's context (from the latest
compaction on), :meth:`SessionTree.path_to_leaf` and :meth:`SessionTree.entries` everything
they return.
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
from agentd.store.refs import LineReader, MessageRef, ref_of


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


Node = Entry | UnknownEntry | MessageRef
Known = Entry | MessageRef
"""A node of a known type: a message entry as its reference, any other entry decoded."""


class SessionTree:
    """The entries of a session and its current leaf. Reads only; writing is SessionFile's.

    ``reader`` reads the bodies of the message entries given as references (``None``: a tree
    held in memory, whose message entries are all kept decoded).
    """

    def __init__(self, nodes: list[Node], reader: LineReader | None = None) -> None:
        self.leaf_id: str | None = None
        self._reader = reader
        self._held: dict[int, MessageEntry] = {}
        """The bodies of message entries that have no line (a tree held in memory)."""
        self._nodes: list[Node] = []
        self._entries: list[Known] = []
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
        """Every entry of a known type, in file order (all branches): every message decoded,
        so as costly as the file is big."""
        return self._decoded(self._entries)

    def entry_count(self) -> int:
        """How many entries of known types the tree holds (all branches)."""
        return len(self._entries)

    def get(self, entry_id: str) -> Entry | None:
        """The entry with id ``entry_id``, or ``None`` (also for entries of unknown types)."""
        node = self._by_id.get(entry_id)
        if node is None or isinstance(node, UnknownEntry):
            return None
        return self.body(node)

    def body(self, node: Known) -> Entry:
        """``node`` decoded: a message entry read back from the file (through the LRU)."""
        if not isinstance(node, MessageRef):
            return node
        held = self._held.get(id(node))
        if held is not None:
            return held
        assert self._reader is not None
        return self._reader.entry(node)

    def path_to_leaf(self) -> list[Entry]:
        """The entries on the current branch, root first (unknown types left out), every
        message decoded (see :meth:`outline` for the branch without the bodies)."""
        return self._decoded(self.outline())

    def outline(self, leaf_id: str | None = None) -> list[Known]:
        """The branch root → ``leaf_id`` (default: the leaf), unknown types left out, message
        entries as their references (:meth:`body` decodes one)."""
        nodes = list(self._branch_nodes(leaf_id))  # a copy: the owner may append meanwhile
        return [n for n in nodes if not isinstance(n, UnknownEntry)]

    def messages(self) -> list[Message]:
        """The model context on the current branch.

        Without compaction: every message on the branch. With one: the latest compaction on
        the branch wins, giving a user message whose text is its ``summary`` (as written),
        then the messages from its ``first_kept_entry_id`` up to the compaction, then the
        messages after it. A tool result whose call is not before it (the assistant message
        was on a damaged line) is left out: providers refuse unpaired results.
        """
        return self._context(self.outline())

    def messages_at(self, entry_id: str | None) -> list[Message]:
        """:meth:`messages` as they would be with the leaf at ``entry_id`` (``None``: before
        the first entry), the leaf left alone. Reads only, so it may run in a worker thread
        while the owner appends (the branch's bodies are decoded there, off the loop)."""
        return [] if entry_id is None else self._context(self.outline(entry_id))

    def _context(self, path: list[Known]) -> list[Message]:
        """The model context of the branch ``path`` (see :meth:`messages`)."""
        cut = _last_compaction(path)
        if cut is None:
            return _paired(self._messages_of(path))
        compaction = path[cut]
        assert isinstance(compaction, CompactionEntry)
        kept_from = next(
            (i for i in range(cut) if path[i].id == compaction.first_kept_entry_id), cut
        )
        kept = self._messages_of([*path[kept_from:cut], *path[cut + 1 :]])
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
        for entry in reversed(self.outline()):
            if isinstance(entry, PlanEntry):
                return list(entry.entries)
        return []

    def model(self) -> tuple[str, str] | None:
        """``(provider, model)`` in use on the branch: from the latest ``model_change`` entry
        or assistant message, whichever comes last."""
        for entry in reversed(self.outline()):
            if isinstance(entry, ModelChangeEntry):
                return entry.provider, entry.model
            if isinstance(entry, MessageRef) and entry.provider:
                return entry.provider, entry.model
        return None

    def usage(self) -> Usage:
        """Token counts and cost summed over the assistant messages on the branch."""
        total = Usage()
        for node in self.outline():
            if isinstance(node, MessageRef) and node.usage is not None:
                total = total.add(node.usage)
        return total

    def dangling_tool_calls(self) -> list[ToolCall]:
        """Tool calls on the branch that have no tool result on the branch, in order (only
        the replies that made them are decoded)."""
        refs = [node for node in self.outline() if isinstance(node, MessageRef)]
        answered = {ref.answers for ref in refs if ref.answers is not None}
        dangling: list[ToolCall] = []
        for ref in refs:
            if any(call_id not in answered for call_id in ref.call_ids):
                reply = self.body(ref)
                if isinstance(reply, MessageEntry) and isinstance(reply.message, AssistantMessage):
                    calls = reply.message.tool_calls()
                    dangling += [call for call in calls if call.id not in answered]
        return dangling

    def has_entry(self, entry_id: str) -> bool:
        """Whether ``entry_id`` names a node of the tree (of any type)."""
        return entry_id in self._by_id

    # --- changes --------------------------------------------------------------------------

    def _insert(self, node: Node, line: tuple[int, int] | None = None) -> None:
        """Add ``node`` (already written; its line's offset and length when given) as the
        newest node and make it the leaf. A message entry is kept as its reference."""
        if isinstance(node, MessageEntry):
            body = node
            node = ref_of(body, *(line or (-1, 0)))
            if line is None or self._reader is None:
                self._held[id(node)] = body
            else:
                self._reader.remember(node, body)
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

    def _copied(self, node: Node) -> Node:
        """``node`` decoded past the LRU (a copy reads each entry once; thread-safe)."""
        if not isinstance(node, MessageRef) or id(node) in self._held:
            return self.body(node) if isinstance(node, MessageRef) else node
        assert self._reader is not None
        return self._reader.entry(node, cache=False)

    def _decoded(self, nodes: list[Known]) -> list[Entry]:
        """``nodes`` with every message entry decoded (a bulk read, past the LRU)."""
        pending = [n for n in nodes if isinstance(n, MessageRef) and id(n) not in self._held]
        bodies: dict[int, Entry] = {}
        if pending:
            assert self._reader is not None
            bodies = dict(zip(map(id, pending), self._reader.entries(pending), strict=True))
        return [bodies.get(id(node)) or self.body(node) for node in nodes]

    def _messages_of(self, nodes: list[Known]) -> list[Message]:
        refs = [node for node in nodes if isinstance(node, MessageRef)]
        return _messages_of(self._decoded(list(refs)))


def _last_compaction(path: list[Known]) -> int | None:
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


def _summary_message(compaction: CompactionEntry) -> UserMessage:
    return UserMessage(
        id=compaction.id,
        content=[TextContent(text=compaction.summary)],
        timestamp=epoch_from_iso(compaction.timestamp),
    )

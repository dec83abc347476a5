/**
 * Subagents in a session list: each child session (one with `parentSessionId`) placed right
 * after its parent, one level deeper, so a task's sessions read as a tree in a flat list.
 */
import type { SessionSummary } from '../protocol';

/** A session of the list and how deep it sits under the sessions listed before it. */
export interface NestedSession {
  session: SessionSummary;
  depth: number;
}

/**
 * `sessions` in tree order: the top-level ones in their given order (newest first from
 * `session/list`), each followed by its children (in the list's order) and theirs. A child
 * whose parent is not in `sessions` (on another page, deleted) is shown at the top level, in
 * its own place; every session appears exactly once, even if parent links form a cycle.
 */
export function nestSessions(sessions: readonly SessionSummary[]): NestedSession[] {
  const listed = new Set(sessions.map((s) => s.sessionId));
  const children = new Map<string, SessionSummary[]>();
  for (const session of sessions) {
    const parent = session.parentSessionId;
    if (parent && listed.has(parent) && parent !== session.sessionId) {
      children.set(parent, [...(children.get(parent) ?? []), session]);
    }
  }
  const placed = new Set<string>();
  const ordered: NestedSession[] = [];
  const place = (session: SessionSummary, depth: number) => {
    if (placed.has(session.sessionId)) return;
    placed.add(session.sessionId);
    ordered.push({ session, depth });
    for (const child of children.get(session.sessionId) ?? []) place(child, depth + 1);
  };
  for (const session of sessions) {
    const parent = session.parentSessionId;
    if (!parent || !listed.has(parent) || parent === session.sessionId) place(session, 0);
  }
  for (const session of sessions) place(session, 0); // only what a cycle left out
  return ordered;
}

/**
 * Recover a file's text before an edit from its text after and the tool's unified diff
 * (`details.diff` of the write and edit tools), so "Open diff" can show before ↔ after even
 * when nobody read the file before the agent changed it.
 *
 * `reverseUnifiedDiff(after, diff)` returns the text before, or null when the diff does not
 * apply to `after` (the file changed since, or the diff was truncated).
 */

interface Hunk {
  /** 1-based first line of the hunk in the new text (0 for an empty new side). */
  newStart: number;
  oldLines: string[];
  newLines: string[];
}

const HUNK_HEADER = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

/** Lines of `text` with their LF kept (the last may lack one). */
function splitKeepingEnds(text: string): string[] {
  const lines = text.split('\n').map((line) => `${line}\n`);
  const last = lines.length - 1;
  lines[last] = lines[last].slice(0, -1);
  if (lines[last] === '') lines.pop();
  return lines;
}

function parseHunks(diff: string): Hunk[] | null {
  if (diff.includes('\n… [diff truncated]')) return null;
  const hunks: Hunk[] = [];
  let hunk: Hunk | null = null;
  let lastSides: string[][] = [];
  for (const line of splitKeepingEnds(diff)) {
    const header = HUNK_HEADER.exec(line);
    if (header) {
      hunk = { newStart: Number(header[1]), oldLines: [], newLines: [] };
      hunks.push(hunk);
    } else if (hunk && line.startsWith('\\')) {
      // "\ No newline at end of file": the line before has no LF in its file.
      for (const side of lastSides) side[side.length - 1] = side[side.length - 1].replace(/\n$/, '');
    } else if (hunk && (line[0] === ' ' || line[0] === '-' || line[0] === '+')) {
      lastSides = line[0] === ' ' ? [hunk.oldLines, hunk.newLines] : line[0] === '-' ? [hunk.oldLines] : [hunk.newLines];
      for (const side of lastSides) side.push(line.slice(1));
    }
  }
  return hunks;
}

/** The text before the change, or null when `diff` does not apply to `after`. */
export function reverseUnifiedDiff(after: string, diff: string): string | null {
  const hunks = parseHunks(diff);
  if (!hunks) return null;
  const lines = splitKeepingEnds(after);
  const out: string[] = [];
  let cursor = 0;
  for (const hunk of hunks) {
    const start = hunk.newLines.length === 0 ? hunk.newStart : hunk.newStart - 1;
    if (start < cursor || start + hunk.newLines.length > lines.length) return null;
    for (let i = 0; i < hunk.newLines.length; i++) {
      if (lines[start + i] !== hunk.newLines[i]) return null;
    }
    out.push(...lines.slice(cursor, start), ...hunk.oldLines);
    cursor = start + hunk.newLines.length;
  }
  out.push(...lines.slice(cursor));
  return out.join('');
}

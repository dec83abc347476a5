// @ts-check
// Where streaming Markdown can be cut: text before the cut is final and rendered once.
//
// A reply arrives as thousands of small deltas. Re-rendering the whole reply on every frame
// costs time proportional to its length, so the view renders settled blocks once and only
// re-renders the unsettled tail. A block is settled at a blank line outside a fenced code
// block: nothing after it can change how the text before it renders (reference-style link
// definitions aside, which replies rarely use).

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The end of the settled part of `text`, scanning from `start` (a previous result, which is
 * always outside a code fence). Returns `start` when no new block has settled.
 * @param {string} text
 * @param {number} [start]
 * @returns {number}
 */
export function settledLength(text, start = 0) {
  let fence = null;
  let settled = start;
  let lineStart = start;
  while (lineStart < text.length) {
    const newline = text.indexOf('\n', lineStart);
    if (newline < 0) break; // the last line is still growing
    const line = text.slice(lineStart, newline);
    const marker = FENCE.exec(line);
    if (fence === null && marker) fence = marker[1];
    else if (fence !== null && marker && marker[1][0] === fence[0] && marker[1].length >= fence.length && line.trim() === marker[1]) fence = null;
    else if (fence === null && line.trim() === '') settled = newline + 1;
    lineStart = newline + 1;
  }
  return settled;
}

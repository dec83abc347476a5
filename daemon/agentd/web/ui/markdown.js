// Markdown to sanitised HTML: `marked` parses, `DOMPurify` removes anything executable.
// Both are vendored (see ../README.md, "Vendored libraries"); nothing here touches the DOM
// except through DOMPurify.

import { Marked } from './vendor/marked.min.js';
import DOMPurify from './vendor/purify.min.js';

const parser = new Marked({ gfm: true, breaks: false });

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/**
 * Sanitised HTML for `text` (Markdown with GitHub extensions).
 * @param {string} text
 * @returns {string}
 */
export function renderMarkdown(text) {
  const html = /** @type {string} */ (parser.parse(text, { async: false }));
  return DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ['style', 'form', 'input'] });
}

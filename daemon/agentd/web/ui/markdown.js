// @ts-check
// Markdown to sanitised HTML: `marked` parses, `DOMPurify` removes anything executable.
// Both are vendored (see ../README.md, "Vendored libraries"); nothing here touches the DOM
// except through DOMPurify.
//
// The model writes this Markdown, so its HTML is hostile: beyond scripts, it must not be able
// to look like (or sit on top of) the page's own controls. Hence no `style` attributes (a
// `position: fixed` box over the Allow/Reject buttons), no `class` (a link styled as the
// page's own Allow button) except `language-*` on <code>, no `id`/`name` (DOM clobbering,
// anchors shadowing the page's elements), no form controls or buttons (their text is kept)
// and no remote images (a beacon telling a server the reply was read): only `data:` ones.

import { Marked } from './vendor/marked.min.js';
import DOMPurify from './vendor/purify.min.js';

const parser = new Marked({ gfm: true, breaks: false });

/** Code block languages as marked writes them (`language-js`, `language-c++`). */
const LANGUAGE_CLASS = /^language-[\w+#.-]{1,40}$/;

export const SANITIZE_CONFIG = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'select', 'option', 'textarea', 'dialog'],
  FORBID_ATTR: ['style', 'id', 'name'],
};

DOMPurify.addHook('uponSanitizeAttribute', (node, data) => {
  if (data.attrName === 'src' && !data.attrValue.trim().toLowerCase().startsWith('data:image/')) data.keepAttr = false;
  if (data.attrName === 'srcset') data.keepAttr = false;
  if (data.attrName !== 'class') return;
  const kept = node.tagName === 'CODE' ? data.attrValue.split(/\s+/).filter((name) => LANGUAGE_CLASS.test(name)) : [];
  if (kept.length) data.attrValue = kept.join(' ');
  else data.keepAttr = false;
});

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

/**
 * Sanitised HTML for `text` (Markdown with GitHub extensions): no scripts, no styles, no
 * classes but `language-*` on <code>, no ids or names, no form controls, no remote images.
 * @param {string} text
 * @returns {string}
 */
export function renderMarkdown(text) {
  const html = /** @type {string} */ (parser.parse(text, { async: false }));
  return DOMPurify.sanitize(html, SANITIZE_CONFIG);
}

// Record the session/event params of one run on a real daemon (the repo's venv, mock LLM):
//   node test/record.mjs PROMPT OUT.jsonl [auto|ask]
// In ask mode every approval is answered allow_once. Used by tests/vscode to feed the webview.
import { writeFileSync } from 'node:fs';
import { recordEvents, stdioClient, tempHome } from './helpers.mjs';

const [prompt, out, mode = 'auto'] = process.argv.slice(2);
const home = tempHome();
const agentd = stdioClient(home);
agentd.onPermission(async () => ({ outcome: 'allow_once' }));
try {
  const events = recordEvents(agentd);
  const info = await agentd.request('session/new', { cwd: home.project, provider: 'mock', permissionMode: mode });
  await agentd.request('session/prompt', { sessionId: info.sessionId, text: prompt });
  const lines = events.filter((e) => e.sessionId === info.sessionId).map((e) => JSON.stringify(e));
  writeFileSync(out, `${lines.join('\n')}\n`);
} finally {
  await agentd.dispose();
  home.cleanup();
}

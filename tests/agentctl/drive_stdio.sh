#!/usr/bin/env bash
# Drive a private daemon from bash, each request sent once the answer it depends on is in.
set -euo pipefail
coproc AGENTD { agentd serve --stdio; }
daemon_pid=$AGENTD_PID
exec 3<&"${AGENTD[0]}" 4>&"${AGENTD[1]}"    # plain fds: usable in $( ) subshells too
send() { printf '%s\n' "$1" >&4; }
until_answer() {                            # print lines up to the answer to request $1
  local line
  while IFS= read -r line <&3; do
    printf '%s\n' "$line"
    jq -e --argjson id "$1" 'select(.id == $id)' <<<"$line" >/dev/null && return
  done
}
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"sh"}}}'
until_answer 1 >/dev/null
send '{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"'"$PWD"'","provider":"mock"}}'
sid=$(until_answer 2 | jq -r 'select(.id == 2) | .result.sessionId')
send '{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"'"$sid"'","text":"how are you"}}'
exec 4>&- {AGENTD[1]}>&-                    # stdin EOF: the daemon still finishes the run
until_answer 3 | jq -c 'if .method then .params.event.type else .result.stopReason end'
wait "$daemon_pid"                          # exits 0 once everything is answered

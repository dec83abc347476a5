#!/usr/bin/env bash
# The step of the agentd GitHub Action: install agentd, run one prompt, report it.
#
# Inputs arrive as INPUT_* variables (see action.yml). Outputs go to $GITHUB_OUTPUT, the
# Markdown summary to $GITHUB_STEP_SUMMARY; the session file stays under $AGENTD_HOME.
# AGENTD_VENV names an existing virtual environment to use instead of installing one.
#
# The API key never stays in an environment: /proc/PID/environ is fixed when a process starts
# and readable by every same-uid process (and through sudo by any), so the commands the agent
# runs could read it there. The script first moves the provider variables onto a pipe (fd 3)
# and re-executes itself without INPUT_API_KEY (action.yml `exec`s it, so no shell of the step
# keeps it either); agentctl reads them with --provider-env-file /dev/fd/3 and hands them to
# its private daemon as providerEnv, in memory only.
#
# What the agent prints is fenced with ::stop-commands::TOKEN … ::TOKEN:: (TOKEN random, never
# in an environment), so the runner does not obey workflow commands (::error::, ::add-mask::,
# ::stop-commands::…) that model text or file names put at the start of a log line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="${RUNNER_TEMP:-${TMPDIR:-/tmp}}"
agentd_home="${AGENTD_HOME:-$work/agentd}"
venv="${AGENTD_VENV:-$agentd_home/venv}"

fail() { echo "::error::$*" >&2; exit 2; }

[ -n "${INPUT_PROMPT:-}" ] || fail "the prompt input is empty"

install_agentd() {
    local source
    if [ -n "${INPUT_VERSION:-}" ]; then
        source="agentd==${INPUT_VERSION}"
    else
        source="$(cd "$here/../.." && pwd)"
    fi
    echo "::group::Install agentd ($source)"
    "${INPUT_PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$source"
    echo "::endgroup::"
}

# The provider variables as NAME=VALUE lines: the key goes to the variable the chosen provider
# reads, paired with its base URL.
provider_variables() {
    local provider="${INPUT_PROVIDER:-}" url="${INPUT_BASE_URL:-}" key="${INPUT_API_KEY:-}"
    case "$provider" in
        anthropic)
            [ -z "$key" ] || printf 'ANTHROPIC_API_KEY=%s\n' "$key"
            [ -z "$url" ] || printf 'ANTHROPIC_BASE_URL=%s\n' "$url" ;;
        openai)
            [ -z "$key" ] || printf 'OPENAI_API_KEY=%s\n' "$key"
            [ -z "$url" ] || printf 'OPENAI_BASE_URL=%s\n' "$url" ;;
        "")
            if [ -n "$url" ]; then
                printf 'LLM_BASE_URL=%s\n' "$url"
                [ -z "$key" ] || printf 'LLM_AUTH_TOKEN=%s\n' "$key"
                [ -z "${INPUT_MODEL:-}" ] || printf 'LLM_DEFAULT_MODEL=%s\n' "$INPUT_MODEL"
            elif [ -n "$key" ]; then
                printf 'OPENAI_API_KEY=%s\n' "$key"
            fi ;;
    esac
}

if [ "${AGENTD_ACTION_STAGE:-}" != run ]; then
    case "${INPUT_API_KEY:-}" in *$'\n'* | *$'\r'*) fail "the api-key input has a line break" ;; esac
    exec 3< <(provider_variables)
    unset INPUT_API_KEY
    AGENTD_ACTION_STAGE=run exec "$BASH" "${BASH_SOURCE[0]}"
fi
[ -e /dev/fd/3 ] || fail "run.sh was started with AGENTD_ACTION_STAGE=run but no provider pipe on fd 3"

[ -x "$venv/bin/agentctl" ] || install_agentd 3<&-
mkdir -p "$agentd_home"
export XDG_DATA_HOME="$agentd_home/data" XDG_STATE_HOME="$agentd_home/state"

result_file="$agentd_home/result.json"
args=(send --stdio --result-file "$result_file" --cwd "${INPUT_WORKING_DIRECTORY:-.}")
args+=(--permission "${INPUT_PERMISSION_MODE:-read-only}" --provider-env-file /dev/fd/3)
args+=(--sandbox "${INPUT_SANDBOX:-workspace}")
[ -z "${INPUT_PROVIDER:-}" ] || args+=(--provider "$INPUT_PROVIDER")
[ -z "${INPUT_MODEL:-}" ] || args+=(--model "$INPUT_MODEL")
[ -z "${INPUT_BASE_URL:-}" ] || [ -z "${INPUT_PROVIDER:-}" ] || args+=(--base-url "$INPUT_BASE_URL")
[ -z "${INPUT_MAX_TURNS:-}" ] || args+=(--max-turns "$INPUT_MAX_TURNS")
[ -z "${INPUT_MAX_COST:-}" ] || args+=(--max-cost "$INPUT_MAX_COST")
[ -z "${INPUT_MAX_TOKENS:-}" ] || args+=(--max-tokens "$INPUT_MAX_TOKENS")
[ -z "${INPUT_TIMEOUT:-}" ] || args+=(--timeout "$INPUT_TIMEOUT")
[ -z "${GITHUB_STEP_SUMMARY:-}" ] || args+=(--summary-file "$GITHUB_STEP_SUMMARY")

token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
echo "::stop-commands::$token"
set +e
"$venv/bin/agentctl" "${args[@]}" -- "$INPUT_PROMPT" </dev/null 2>&1  # the prompt only, no stdin attached
code=$?
set -e
exec 3<&-
echo "::$token::"

"$venv/bin/python" - "$result_file" "$code" "${GITHUB_OUTPUT:-/dev/null}" <<'PY'
import json, sys
path, code, output = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    with open(path, encoding="utf-8") as f:
        result = json.load(f)
except (OSError, ValueError):
    result = {"stopReason": "error", "error": "agentctl wrote no result"}
values = {
    "stop-reason": result.get("stopReason", "error"),
    "exit-code": code,
    "cost": result.get("cost", 0),
    "turns": result.get("turns", 0),
    "session-id": result.get("sessionId") or "",
    "session-file": result.get("sessionFile") or "",
    "result-file": path,
}
with open(output, "a", encoding="utf-8") as out:
    for name, value in values.items():
        out.write(f"{name}={value}\n")
PY

if [ "$code" -ne 0 ] && [ "${INPUT_FAIL_ON_ERROR:-true}" = "true" ]; then
    echo "::error::agentd stopped with exit code $code (see the step summary)" >&2
    exit "$code"
fi
exit 0

" The agentd chat transcript (agentd://chat).
if exists('b:current_syntax')
  finish
endif

syntax match agentdRole /^▍\(You\|Agent\)$/
syntax match agentdToolRunning /^▸ ⋯ .*/
syntax match agentdToolDone /^▸ [✓•] .*/
syntax match agentdToolFailed /^▸ ✗ .*/
syntax match agentdThinkingHeader /^▸ thinking$/
syntax match agentdThinking /^┊ .*/
syntax match agentdOutput /^│ .*/
syntax match agentdPreview /^▏ .*/
syntax match agentdDiffAdd /^[│▏] +.*/
syntax match agentdDiffDelete /^[│▏] -.*/
syntax match agentdDiffHunk /^[│▏] @@ .*/
syntax match agentdApproval /^⚑ .*/
syntax match agentdError /^✗ .*/
syntax match agentdWarning /^[⚠↻] .*/
syntax match agentdRunEnd /^── .* ──$/
syntax match agentdHeader /\%1lagentd · .*/

highlight default link agentdRole Title
highlight default link agentdToolRunning Identifier
highlight default link agentdToolDone Function
highlight default link agentdToolFailed ErrorMsg
highlight default link agentdThinkingHeader Comment
highlight default link agentdThinking Comment
highlight default link agentdOutput String
highlight default link agentdPreview Normal
highlight default link agentdDiffAdd DiffAdd
highlight default link agentdDiffDelete DiffDelete
highlight default link agentdDiffHunk Comment
highlight default link agentdApproval WarningMsg
highlight default link agentdError ErrorMsg
highlight default link agentdWarning WarningMsg
highlight default link agentdRunEnd NonText
highlight default link agentdHeader Statement

let b:current_syntax = 'agentd'

;;; eglot_driver.el --- drive eglot against `agentd lsp' in emacs --batch  -*- lexical-binding: t -*-

;; Loaded after the README's eglot snippet (which defines `agentd-prompt').  The test calls
;; `agentd-test-run' with --eval; it writes what it saw as JSON to OUT and exits 0, or writes
;; {"error": ...} and exits 1.

(require 'eglot)
(require 'json)

(defun agentd-test--wait (what predicate timeout)
  "Process output until PREDICATE holds; signal an error naming WHAT after TIMEOUT s."
  (let ((deadline (+ (float-time) timeout)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out after %ss waiting for %s" timeout what))
      (accept-process-output nil 0.05))))

(defun agentd-test--bool (value)
  (if value t :false))

(defun agentd-test--write (out object)
  (with-temp-file out
    (set-buffer-multibyte nil)
    (insert (json-serialize object))))

(defun agentd-test--prompt-and-undo (prompt timeout)
  "Run `agentd-prompt' with PROMPT in this buffer (failing after TIMEOUT s), then undo
what changed since; return what was seen."
  (undo-boundary)                       ; what the command loop does before a command
  (let* ((answer (with-timeout (timeout (error "agentd-prompt did not answer in %ss" timeout))
                   (agentd-prompt prompt)))
         (edited (buffer-substring-no-properties (point-min) (point-max)))
         (modified (buffer-modified-p)))
    (undo-boundary)
    (when (seq-some #'identity buffer-undo-list) ; something to undo (not after a Reject)
      (undo))
    (list :answer answer
          :edited edited
          :modified (agentd-test--bool modified)
          :undone (buffer-substring-no-properties (point-min) (point-max))
          :modifiedAfterUndo (agentd-test--bool (buffer-modified-p)))))

(defun agentd-test--events ()
  "The end of eglot's events buffer (the JSON-RPC exchange), or \"\"."
  (let ((server (ignore-errors (eglot-current-server))))
    (if (not server)
        ""
      (with-current-buffer (jsonrpc-events-buffer server)
        (buffer-substring-no-properties (max (point-min) (- (point-max) 6000)) (point-max))))))

(defun agentd-test-run (file prompt out timeout &optional draft)
  "Visit FILE, connect eglot as `eglot-ensure' does, run PROMPT, write the result to OUT.
With DRAFT, first replace the buffer's text with it (unsaved)."
  (condition-case err
      (progn
        (find-file file)
        (run-hooks 'post-command-hook) ; `eglot-ensure' connects after the next command
        (agentd-test--wait "eglot to connect"
                           (lambda ()
                             (let ((server (eglot-current-server)))
                               (and server (eglot--server-capable :executeCommandProvider))))
                           timeout)
        (when draft
          (erase-buffer)
          (insert draft))
        (let* ((server (eglot-current-server))
               (info (eglot--server-info server))
               (seen (agentd-test--prompt-and-undo prompt timeout)))
          (eglot-shutdown server)
          (agentd-test--write out (append seen (list :serverName (plist-get info :name)
                                                     :serverAlive (agentd-test--bool
                                                                   (jsonrpc-running-p server)))))))
    (error
     (agentd-test--write out (list :error (error-message-string err)
                                   :events (agentd-test--events)))
     (kill-emacs 1)))
  (kill-emacs 0))

;;; eglot_driver.el ends here

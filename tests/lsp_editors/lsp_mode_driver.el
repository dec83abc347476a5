;;; lsp_mode_driver.el --- drive lsp-mode against `agentd lsp' in emacs --batch  -*- lexical-binding: t -*-

;; Loaded after the README's lsp-mode snippet (which registers the agentd client and, once
;; lsp-mode is loaded, defines `agentd-lsp-prompt').  The test calls `agentd-lsp-test-run'
;; with --eval; it writes what it saw as JSON to OUT and exits 0, or writes {"error": ...}
;; and exits 1.  Only the test's setup is here: no lsp-mode client but agentd's, the file's
;; folder as the workspace root (lsp-mode would ask for it), no session file in the home.

(require 'lsp-mode)
(require 'json)

(setq lsp-enabled-clients '(agentd)
      lsp-auto-guess-root nil
      lsp-restart 'ignore
      lsp-enable-file-watchers nil
      lsp-modeline-code-actions-enable nil
      lsp-headerline-breadcrumb-enable nil
      lsp-log-io t)

(defun agentd-lsp-test--wait (what predicate timeout)
  "Process output until PREDICATE holds; signal an error naming WHAT after TIMEOUT s."
  (let ((deadline (+ (float-time) timeout)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (error "Timed out after %ss waiting for %s" timeout what))
      (accept-process-output nil 0.05))))

(defun agentd-lsp-test--bool (value)
  (if value t :false))

(defun agentd-lsp-test--write (out object)
  (with-temp-file out
    (set-buffer-multibyte nil)
    (insert (json-serialize object))))

(defun agentd-lsp-test--ready ()
  "The buffer's agentd workspace once it is initialized, else nil."
  (seq-find (lambda (workspace) (eq (lsp--workspace-status workspace) 'initialized))
            (lsp-workspaces)))

(defun agentd-lsp-test--io-log ()
  "The end of lsp-mode's I/O log of the agentd workspace (the JSON-RPC exchange), or \"\"."
  (let ((buffer (seq-find (lambda (b) (string-prefix-p "*lsp-log: agentd" (buffer-name b)))
                          (buffer-list))))
    (if (not buffer)
        ""
      (with-current-buffer buffer
        (buffer-substring-no-properties (max (point-min) (- (point-max) 6000)) (point-max))))))

(defun agentd-lsp-test-run (file prompt out timeout)
  "Visit FILE, start lsp-mode in it, run PROMPT with `agentd-lsp-prompt', write to OUT what
the answer and the buffer showed (batch mode prints the snippet's message on stderr)."
  (condition-case err
      (progn
        (find-file file)
        (lsp-workspace-folders-add (directory-file-name (file-name-directory file)))
        (lsp)
        (agentd-lsp-test--wait "lsp-mode to start agentd" #'agentd-lsp-test--ready timeout)
        (undo-boundary)
        (let* ((answer (with-timeout (timeout (error "agentd-lsp-prompt did not answer"))
                         (agentd-lsp-prompt prompt)))
               (edited (buffer-substring-no-properties (point-min) (point-max)))
               (modified (buffer-modified-p))
               (workspace (agentd-lsp-test--ready)))
          (undo-boundary)
          (when (seq-some #'identity buffer-undo-list)
            (undo))
          (agentd-lsp-test--write
           out
           (list :answerType (symbol-name (type-of answer))
                 :stopReason (lsp-get answer :stopReason)
                 :text (lsp-get answer :text)
                 :edited edited
                 :modified (agentd-lsp-test--bool modified)
                 :undone (buffer-substring-no-properties (point-min) (point-max))
                 :serverName (lsp--workspace-print workspace)))
          (lsp-workspace-shutdown workspace)))
    (error
     (agentd-lsp-test--write out (list :error (error-message-string err)
                                       :events (agentd-lsp-test--io-log)))
     (kill-emacs 1)))
  (kill-emacs 0))

;;; lsp_mode_driver.el ends here

;;; driver.el --- scenarios for headless Emacs + eglot against echoes-lsp  -*- lexical-binding: t; -*-

;; Run by tests/emacs/harness.py as `emacs --batch -l driver.el' inside a fresh workspace.
;; It loads eglot (Debian's elpa-eglot, activated by the site start-up files) and
;; editors/emacs/echoes-lsp.el as the guide does, runs the scenario named by ECHOES_TEST_SCENARIO, and writes what it observed as JSON to
;; ECHOES_TEST_OUT.  Questions to the user (`completing-read', `yes-or-no-p') are answered from a
;; script and recorded; every `message' is recorded.

(require 'json)
(require 'cl-lib)
(require 'subr-x)
(require 'xref)

(defvar driver-report (make-hash-table :test #'equal) "What the scenario observed.")
(defvar driver-messages nil "Every message shown, newest first.")
(defvar driver-answers nil "Answers to the next questions, in order.")
(defvar driver-questions nil "Every question asked, newest first.")
(defvar driver-steps nil "The steps begun, newest first (to explain a failure).")
(defvar driver-workspace (expand-file-name default-directory) "The workspace the run started in.")

(defun driver-put (key value)
  (puthash key value driver-report))

(defun driver-bool (value)
  (if value t :json-false))

(defun driver-step (name)
  (push name driver-steps))

(advice-add 'message :around
            (lambda (original format-string &rest args)
              (when format-string
                (push (apply #'format-message format-string args) driver-messages))
              (apply original format-string args)))

(defun driver-answer (kind prompt choices)
  "The scripted answer to a question, recorded with it."
  (let ((answer (pop driver-answers)))
    (push `((kind . ,kind) (prompt . ,prompt) (choices . ,(vconcat choices))
            (answer . ,answer))
          driver-questions)
    (unless answer
      (error "unexpected question: %s" prompt))
    answer))

(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (driver-answer "completing-read" prompt
                             (mapcar (lambda (c) (if (consp c) (car c) c))
                                     (if (hash-table-p collection)
                                         (hash-table-keys collection)
                                       collection)))))

(advice-add 'yes-or-no-p :override
            (lambda (prompt) (equal (driver-answer "yes-or-no-p" prompt '("yes" "no")) "yes")))

(defun driver-idle ()
  "What Emacs does when the person pauses: idle timers do not run in batch mode, so send the
buffer's pending edits as eglot's idle timer would."
  (when (bound-and-true-p eglot--managed-mode)
    (eglot--signal-textDocument/didChange)))

(defun driver-wait (what predicate &optional seconds)
  "Let Emacs work (process output, timers) until PREDICATE holds, else fail naming WHAT."
  (let ((deadline (+ (float-time) (or seconds 60)))
        (value nil))
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      (driver-idle)
      (accept-process-output nil 0.05))
    (or value (error "timed out waiting for %s" what))))

(defun driver-codes ()
  "The codes of the current buffer's diagnostics, as flymake shows them."
  (flymake-start)
  (accept-process-output nil 0.05)
  (sort (delete-dups
         (mapcar (lambda (d)
                   (let ((text (flymake-diagnostic-text d)))
                     (if (string-match "\\[\\(EV[0-9]+\\)\\]" text) (match-string 1 text) text)))
                 (flymake-diagnostics)))
        #'string<))

(defun driver-wait-codes (what predicate)
  "Wait until the diagnostics' codes satisfy PREDICATE; return them."
  (let (codes)
    (driver-wait what (lambda () (funcall predicate (setq codes (driver-codes)))))
    codes))

(defun driver-page (name)
  (expand-file-name (concat "EchoesVault/pages/" name) driver-workspace))

(defun driver-read (file)
  (with-temp-buffer
    (insert-file-contents file)
    (buffer-string)))

(defun driver-open (name)
  "Visit page NAME as a person would, and wait until eglot manages it."
  (driver-step (concat "open " name))
  (find-file (driver-page name))
  ;; The command loop would run this after `find-file'; eglot-ensure connects from it.
  (run-hooks 'post-command-hook)
  (driver-wait "eglot to manage the buffer" (lambda () (bound-and-true-p eglot--managed-mode)))
  (current-buffer))

(defun driver-replace (old new)
  (goto-char (point-min))
  (unless (search-forward old nil t)
    (error "%S is not in the buffer" old))
  (replace-match new t t))

(defun driver-messages-matching (regexp)
  (vconcat (seq-filter (lambda (m) (string-match-p regexp m)) (reverse driver-messages))))

(defun driver-state (file)
  "The disk, the buffer, whether it is modified, and its diagnostics."
  `((disk . ,(driver-read file))
    (buffer . ,(buffer-substring-no-properties (point-min) (point-max)))
    (modified . ,(driver-bool (buffer-modified-p)))
    (diagnostics . ,(vconcat (driver-codes)))))

(defun driver-sha256 (file)
  "The SHA-256 of FILE's bytes, as the runtime's `hash' computes it."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally file)
    (secure-hash 'sha256 (current-buffer))))

(defun driver-runtime-upsert (name content)
  "Write page NAME through the project runtime, as another writer (an agent) would."
  (let ((payload (json-encode `((filename . ,name) (content . ,content)
                                 ,@(when (file-exists-p (driver-page name))
                                     `((expectedSha256 . ,(driver-sha256 (driver-page name))))))))
        (command (append (json-read-from-string (getenv "ECHOES_TEST_RUNTIME")) nil)))
    (with-temp-buffer
      (insert payload)
      (let ((status (apply #'call-process-region (point-min) (point-max) (car command) t t nil
                           (append (cdr command)
                                   (list "--workspace" driver-workspace
                                         "upsert" "--payload" "-")))))
        (unless (eql status 0)
          (error "runtime upsert failed: %s" (buffer-string)))))))

(defun driver-code-action (title)
  "Offer the code actions of the whole buffer, as `eglot-code-actions' does, and pick TITLE."
  (setq driver-answers (cons title driver-answers))
  (let ((last-nonmenu-event 13))
    (eglot-code-actions (point-min) (point-max) nil t)))

;;; Scenarios

(defun scenario-features ()
  "Diagnostics, `[[' completion, definition, hover and a code action on a page with defects."
  (driver-open "missing-fields.md")
  (driver-step "diagnostics")
  (driver-put "codes" (vconcat (driver-wait-codes "EV300" (lambda (c) (member "EV300" c)))))
  (driver-put "major_mode" (symbol-name major-mode))
  (driver-put "major_mode_parent" (symbol-name (symbol-function 'echoes-lsp--parent-mode)))
  (driver-put "server_class" (symbol-name (eieio-object-class (eglot-current-server))))
  (driver-put "root" (expand-file-name (project-root (eglot--project (eglot-current-server)))))
  (driver-step "status")
  (driver-put "mode_line" (driver-wait "the status notification"
                                       (lambda () (let ((text (echoes-lsp-mode-line)))
                                                    (and (not (string-empty-p text)) text)))))
  (with-current-buffer (echoes-lsp-status)
    (driver-put "status_card" (buffer-string)))
  (driver-step "completion")
  (goto-char (point-max))
  (insert "\nSee also [[sess")
  (let* ((capf (eglot-completion-at-point))
         (prefix (buffer-substring-no-properties (nth 0 capf) (nth 1 capf))))
    (driver-put "completion_prefix" prefix)
    (driver-put "completions" (vconcat (all-completions prefix (nth 2 capf)))))
  (delete-region (line-beginning-position) (point-max))
  (delete-char -1)
  (driver-step "definition")
  (goto-char (point-min))
  (search-forward "[[session-tok")
  (let* ((identifier (xref-backend-identifier-at-point 'eglot))
         (items (xref-backend-definitions 'eglot identifier)))
    (driver-put "definitions"
                (vconcat (mapcar (lambda (item)
                                   (let ((location (xref-item-location item)))
                                     `((file . ,(xref-location-group location))
                                       (line . ,(xref-location-line location)))))
                                 items))))
  (driver-step "hover")
  (let ((hover nil))
    (eglot-hover-eldoc-function (lambda (info &rest _) (setq hover (or info ""))))
    (driver-put "hover" (driver-wait "hover" (lambda () hover))))
  (driver-step "code action")
  (driver-code-action "Insert the missing frontmatter fields")
  (driver-put "after_action" (buffer-substring-no-properties (point-min) (point-max)))
  (driver-put "action_titles" (cdr (assq 'choices (car driver-questions))))
  (driver-put "codes_after_action"
              (vconcat (driver-wait-codes "the missing fields to be gone"
                                          (lambda (c) (and (member "EV300" c)
                                                           (not (member "EV104" c))))))))

(defun scenario-save ()
  "`echoes-lsp-save' of an edited page, then the code action's save."
  (let ((page (driver-page "session-tokens.md"))
        (index (expand-file-name "EchoesVault/index.md" driver-workspace)))
    (driver-open "session-tokens.md")
    (driver-put "index_before" (driver-read index))
    (driver-replace "Session storage, token lifetime and rotation."
                    "Session storage, token lifetime, rotation and revocation.")
    (goto-char (point-max))
    (insert "\n\nLogout revokes every token.")
    (driver-put "modified_before" (driver-bool (buffer-modified-p)))
    (driver-step "echoes-lsp-save")
    (driver-put "result" (echoes-lsp-save))
    (driver-put "saved" (driver-state page))
    (driver-put "index_after" (driver-read index))
    (driver-step "the code action's save")
    (goto-char (point-max))
    (insert "\n\nSaved by the code action.")
    (driver-code-action "Save through EchoesVault (hash-checked)")
    (driver-put "action_saved" (driver-state page))
    (driver-step "newer eglot's command path")
    (goto-char (point-max))
    (insert "\n\nSaved as newer eglot runs a command.")
    (eglot-execute (eglot-current-server)
                   (list :title "Save" :command "echoes.savePage"
                         :arguments (vector (list :uri (echoes-lsp--uri buffer-file-name)))))
    (driver-put "execute_saved" (driver-state page))
    (driver-put "save_messages" (driver-messages-matching "^EchoesVault: updated"))
    (driver-step "a page created by the runtime behind the editor")
    (goto-char (point-max))
    (insert "\n\nSee [[logout-flow]].")
    (echoes-lsp-save)
    (driver-put "file_watches" (hash-table-count (eglot--file-watches (eglot-current-server))))
    (driver-put "codes_before_create"
                (vconcat (driver-wait-codes "EV300" (lambda (c) (member "EV300" c)))))
    (driver-runtime-upsert "logout-flow.md" "---\ntype: runbook\nstack: [python]\nstatus: active
summary: How logout revokes every token.\n---\n\n# Logout flow\n")
    (driver-put "codes_after_create"
                (vconcat (driver-wait-codes "EV300 to go" (lambda (c) (not (member "EV300" c))))))))

(defun driver-go-stale (page)
  "Edit the open PAGE in the buffer, and change it on disk through the runtime behind it."
  (driver-replace "Refresh tokens rotate on every use." "Refresh tokens rotate hourly.")
  (goto-char (point-max))
  (insert "\n\nEdited in Emacs.")
  (driver-step "the runtime writes the page behind the editor")
  (let ((behind (replace-regexp-in-string
                 "Refresh tokens rotate on every use\\."
                 "Refresh tokens rotate daily (changed by another writer)."
                 (driver-read page) t t)))
    (driver-runtime-upsert (file-name-nondirectory page) behind)
    (driver-put "behind" (driver-read page))))

(defun scenario-stale ()
  "A save refused as stale (EV701): cancelled first, then overwritten on an explicit choice."
  (let ((page (driver-page "session-tokens.md")))
    (driver-open "session-tokens.md")
    (driver-go-stale page)
    (driver-step "save, then cancel")
    (setq driver-answers (list "Cancel (keep both as they are)"))
    (echoes-lsp-save)
    (driver-wait-codes "EV701" (lambda (c) (member "EV701" c)))
    (driver-put "refused" (driver-state page))
    (driver-put "ev701_messages" (driver-messages-matching "EV701"))
    (driver-step "save, then overwrite")
    (setq driver-answers (list "Overwrite the disk version with this buffer"))
    (driver-put "result" (echoes-lsp-save))
    (driver-put "overwritten" (driver-state page))))

(defun scenario-stale-reload ()
  "A save refused as stale: compare with the disk version, then reload it."
  (let ((page (driver-page "session-tokens.md")))
    (driver-open "session-tokens.md")
    (driver-go-stale page)
    (let ((buffer (current-buffer)))
      (driver-step "save, then compare")
      (setq driver-answers (list "Compare with the disk version (diff)"))
      (echoes-lsp-save)
      (let ((diff (get-buffer "*Diff*")))
        (driver-put "diff" (and diff (with-current-buffer diff
                                       (driver-wait "the diff" (lambda () (not (process-live-p
                                                                               (get-buffer-process diff)))))
                                       (buffer-string)))))
      (set-buffer buffer)
      (driver-put "compared" (driver-state page))
      (driver-step "save, then reload")
      (setq driver-answers (list "Reload the disk version (discard buffer changes)"))
      (echoes-lsp-save)
      (driver-put "reloaded" (driver-state page)))))

(defun scenario-stale-actions ()
  "EV701's code actions: open the disk version, then overwrite (asked by Emacs, not the server)."
  (let ((page (driver-page "session-tokens.md")))
    (driver-open "session-tokens.md")
    (driver-go-stale page)
    (setq driver-answers (list "Cancel (keep both as they are)"))
    (echoes-lsp-save)
    (driver-wait-codes "EV701" (lambda (c) (member "EV701" c)))
    (let ((buffer (current-buffer)))
      (driver-step "open the disk version")
      (driver-code-action "Open the disk version beside the buffer")
      (driver-put "action_titles" (cdr (assq 'choices (car driver-questions))))
      (let ((disk (seq-find (lambda (b) (string-prefix-p "disk-" (buffer-name b)))
                            (buffer-list))))
        (driver-put "disk_version"
                    (and disk (with-current-buffer disk
                                `((text . ,(buffer-string))
                                  (read_only . ,(driver-bool buffer-read-only)))))))
      (set-buffer buffer)
      (driver-step "overwrite, declined")
      (setq driver-answers (list "no"))
      (driver-code-action "Overwrite the disk version with this buffer (asks to confirm)")
      (driver-put "declined" (driver-state page))
      (driver-step "overwrite, confirmed")
      (setq driver-answers (list "yes"))
      (driver-code-action "Overwrite the disk version with this buffer (asks to confirm)")
      (driver-put "confirmed" (driver-state page)))))

(defun scenario-settings ()
  "The settings the integration sends: as initialization options, and as the answer to the
server's `workspace/configuration' request for section `echoes'."
  (driver-open "session-tokens.md")
  (let ((server (eglot-current-server)))
    (driver-put "initialization_options" (eglot-initialization-options server))
    (driver-put "configuration"
                (eglot-handle-request server 'workspace/configuration
                                      :items (vector '(:section "echoes"))))))

(defun scenario-snippet ()
  "The guide's init snippet, loaded as it is, then a page opened."
  (load (getenv "ECHOES_TEST_SNIPPET") nil t)
  (driver-put "loaded" (driver-bool (featurep 'echoes-lsp)))
  (driver-put "library" (locate-library "echoes-lsp"))
  (find-file (driver-page "missing-fields.md"))
  (run-hooks 'post-command-hook)
  (driver-put "major_mode" (symbol-name major-mode))
  (when (featurep 'echoes-lsp)
    (driver-wait "eglot to manage the buffer" (lambda () (bound-and-true-p eglot--managed-mode)))
    (driver-put "codes" (vconcat (driver-wait-codes "EV300" (lambda (c) (member "EV300" c)))))))

;;; Run

(defun driver-run ()
  (let ((scenario (getenv "ECHOES_TEST_SCENARIO")))
    (condition-case error
        (progn
          (unless (getenv "ECHOES_TEST_SNIPPET")
            (add-to-list 'load-path (getenv "ECHOES_TEST_PLUGIN"))
            (require 'echoes-lsp)
            (setq echoes-lsp-server-command
                  (append (json-read-from-string (getenv "ECHOES_TEST_CMD")) nil))
            (echoes-lsp-setup))
          (funcall (intern (concat "scenario-" scenario))))
      (error (driver-put "error" (error-message-string error))))
    (driver-put "steps" (vconcat (reverse driver-steps)))
    (driver-put "messages" (vconcat (reverse driver-messages)))
    (driver-put "questions" (vconcat (reverse driver-questions)))
    (with-temp-file (getenv "ECHOES_TEST_OUT")
      (insert (json-encode driver-report)))
    (ignore-errors (eglot-shutdown-all))
    (kill-emacs 0)))

(driver-run)

;;; driver.el ends here

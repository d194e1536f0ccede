;;; echoes-lsp.el --- EchoesVault pages through eglot and echoes-lsp  -*- lexical-binding: t; -*-

;; Package-Requires: ((emacs "28.1") (eglot "1.9"))
;; Keywords: languages, tools

;; This file is part of echoes-lsp (MIT licence).

;;; Commentary:

;; Markdown files under an `EchoesVault/' folder open in `echoes-lsp-page-mode' (markdown-mode
;; when it is installed, else text-mode), and eglot runs the language server `echoes-lsp serve'
;; for them, rooted at the folder that holds `EchoesVault/'.  Diagnostics, `[[' completion,
;; definition, hover and the code actions come from eglot itself; this file adds what eglot
;; cannot know:
;;
;;   M-x echoes-lsp-save     save through EchoesVault (the runtime's hash-checked upsert),
;;                           then revert the buffer so it is not left modified.  A page that
;;                           changed on disk since it was opened is refused (EV701) and
;;                           overwritten only after an explicit choice.
;;   M-x echoes-lsp-status   the vault's status card; the mode line shows the short status.
;;
;; Setup, in init.el:
;;
;;   (let ((dir (ignore-errors (car (process-lines "echoes-lsp" "editor-dir" "emacs")))))
;;     (when dir
;;       (add-to-list 'load-path dir)
;;       (require 'echoes-lsp)
;;       (echoes-lsp-setup)))
;;
;; Settings: `echoes-lsp-settings' (section `echoes' of the server's settings), sent as
;; initialization options and as eglot's workspace configuration.  A directory-local
;; `eglot-workspace-configuration' with an `:echoes' section takes precedence.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'eglot)
(require 'jsonrpc)

(defgroup echoes-lsp nil
  "EchoesVault pages through eglot and the echoes-lsp language server."
  :group 'eglot
  :prefix "echoes-lsp-")

(defcustom echoes-lsp-server-command '("echoes-lsp" "serve")
  "The command that starts the language server (stdio)."
  :type '(repeat string))

(defcustom echoes-lsp-settings
  '(:runtime (:timeout 30)
    :diagnostics (:debounce 150 :maxPerDocument 1000)
    :secrets (:enabled t)
    :exclude []
    :agent "echoes-lsp"
    :watch (:pollInterval 2)
    :index (:hydrateOnSave t)
    :inlayHints (:blockText t :deprecated t))
  "Section `echoes' of the server's settings, as a plist.
JSON false is `:json-false' and a list is a vector.  Also accepted:
`:runtime (:python \"python3\")' and `:diagnostics (:severity (:EV311 \"off\"))'.
Every key is in the echoes-lsp configuration reference."
  :type 'sexp)

(defcustom echoes-lsp-request-timeout 120
  "Seconds to wait for a server command that runs the project runtime."
  :type 'number)

(defconst echoes-lsp-vault-dir "EchoesVault"
  "The folder that holds a vault; its parent is the workspace.")

(defconst echoes-lsp-stale-choices
  '((overwrite . "Overwrite the disk version with this buffer")
    (diff . "Compare with the disk version (diff)")
    (reload . "Reload the disk version (discard buffer changes)")
    (cancel . "Cancel (keep both as they are)"))
  "What to do after a save refused with EV701, as offered to the user.")

;;; The major mode

(defalias 'echoes-lsp--parent-mode
  (if (require 'markdown-mode nil t) 'markdown-mode 'text-mode)
  "The mode pages build on: markdown-mode when it is installed, else text-mode.")

(defvar echoes-lsp--statuses (make-hash-table :test #'equal)
  "The latest `echoes/statusChanged' notification, by workspace URI.")

(defvar-local echoes-lsp--workspace-uri nil
  "The URI of the page's workspace, found once (the mode line reads it often).")

(define-derived-mode echoes-lsp-page-mode echoes-lsp--parent-mode
  '("Echoes" (:eval (echoes-lsp-mode-line)))
  "Major mode for Markdown files inside an EchoesVault, served by echoes-lsp."
  (let ((workspace (echoes-lsp-workspace buffer-file-name)))
    (setq echoes-lsp--workspace-uri
          (and workspace (echoes-lsp--uri (directory-file-name workspace))))))

(put 'echoes-lsp-page-mode 'eglot-language-id "markdown")

;;; Workspace

(defun echoes-lsp-workspace (file)
  "The folder holding the `EchoesVault/' that FILE is inside, or nil."
  (when file
    (let ((vault (locate-dominating-file
                  (expand-file-name file)
                  (lambda (dir)
                    (string= (file-name-nondirectory (directory-file-name dir))
                             echoes-lsp-vault-dir)))))
      (and vault (file-name-directory (directory-file-name vault))))))

(defun echoes-lsp--project (dir)
  "The project of a page in DIR, for eglot only: the vault's workspace.
The server is rooted where `EchoesVault/' is, whatever version control
says; other commands keep their own project."
  (when (and (bound-and-true-p eglot-lsp-context)
             (derived-mode-p 'echoes-lsp-page-mode))
    (let ((workspace (echoes-lsp-workspace (or buffer-file-name dir))))
      (and workspace (cons 'transient workspace)))))

;;; The server

(defclass echoes-lsp-server (eglot-lsp-server) ()
  :documentation "The echoes-lsp language server, as eglot talks to it.")

(defun echoes-lsp--settings (server)
  "Section `echoes' of SERVER's settings: a directory-local one, else ours."
  (let ((local (ignore-errors (eglot--workspace-configuration-plist server))))
    (or (plist-get local :echoes) echoes-lsp-settings)))

(cl-defmethod eglot-client-capabilities ((_server echoes-lsp-server))
  "Eglot's capabilities, without its file watcher.
Eglot 1.9's watcher misses a page replaced by rename, which is how the
runtime writes; without it, the server polls the vault instead, every
`echoes.watch.pollInterval' seconds."
  (let* ((capabilities (copy-tree (cl-call-next-method)))
         (workspace (plist-get capabilities :workspace)))
    (plist-put capabilities :workspace
               (plist-put workspace :didChangeWatchedFiles
                          (list :dynamicRegistration :json-false)))))

(cl-defmethod eglot-initialization-options ((server echoes-lsp-server))
  "The settings at start-up, for SERVER."
  (list :echoes (echoes-lsp--settings server)))

(cl-defmethod eglot-handle-request
  ((_server echoes-lsp-server) (_method (eql workspace/configuration)) &key items)
  "Answer ITEMS; section `echoes' is `echoes-lsp-settings' unless set locally."
  (let ((answers (cl-call-next-method)))
    (cl-loop for item across items
             for answer across answers
             collect (if (and (null answer) (equal (plist-get item :section) "echoes"))
                         echoes-lsp-settings
                       answer)
             into all
             finally return (vconcat all))))

(cl-defmethod eglot-handle-notification
  ((_server echoes-lsp-server) (_method (eql echoes/statusChanged)) &rest status
   &key workspace &allow-other-keys)
  "Keep the STATUS of WORKSPACE for the mode line."
  (puthash workspace status echoes-lsp--statuses)
  (force-mode-line-update t))

(defun echoes-lsp--uri (file)
  "The URI of FILE as eglot writes it."
  (if (fboundp 'eglot-path-to-uri)
      (funcall 'eglot-path-to-uri file)
    (eglot--path-to-uri file)))

(defun echoes-lsp--server ()
  "The echoes-lsp server of the current buffer, else a user error."
  (let ((server (eglot-current-server)))
    (unless (cl-typep server 'echoes-lsp-server)
      (user-error "EchoesVault: echoes-lsp is not running for this buffer; open a page inside \
EchoesVault/ (M-x eglot starts it; see M-x echoes-lsp-setup)"))
    server))

(defun echoes-lsp--execute (server command argument)
  "Run server COMMAND with one object ARGUMENT after sending the buffer's edits."
  (when (fboundp 'eglot--signal-textDocument/didChange)
    (eglot--signal-textDocument/didChange))
  (jsonrpc-request server :workspace/executeCommand
                   (list :command command :arguments (vector argument))
                   :timeout echoes-lsp-request-timeout))

(defun echoes-lsp--error-text (error)
  "The message of a jsonrpc ERROR (or any other error)."
  (or (alist-get 'jsonrpc-error-message (cdr error))
      (error-message-string error)))

(defun echoes-lsp--stale-p (error)
  "Whether ERROR is the runtime's refusal of a page changed on disk (EV701)."
  (let ((data (alist-get 'jsonrpc-error-data (cdr error))))
    (or (equal (plist-get data :code) "EV701")
        (string-match-p "EV701" (echoes-lsp--error-text error)))))

;;; Status

(defun echoes-lsp-mode-line ()
  "The vault's status for the mode line: \" healthy\", \" attention (3 issues)\"."
  (let ((status (and echoes-lsp--workspace-uri
                     (gethash echoes-lsp--workspace-uri echoes-lsp--statuses))))
    (if (null status)
        ""
      (let ((issues (or (plist-get status :issueCount) 0)))
        (concat " " (format "%s" (plist-get status :integrity))
                (if (> issues 0)
                    (format " (%d issue%s)" issues (if (= issues 1) "" "s"))
                  ""))))))

(defun echoes-lsp-status ()
  "Show the vault's status card in the *EchoesVault status* buffer."
  (interactive)
  (let* ((server (echoes-lsp--server))
         (argument (if echoes-lsp--workspace-uri
                       (list :format "card" :workspace echoes-lsp--workspace-uri)
                     (list :format "card")))
         (result (echoes-lsp--execute server "echoes.status" argument))
         (buffer (get-buffer-create "*EchoesVault status*")))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (or (plist-get result :markdown) (format "%S" result))))
      (goto-char (point-min))
      (special-mode))
    (display-buffer buffer)
    buffer))

;;; Save through EchoesVault

(defun echoes-lsp--saved (buffer tick result)
  "Revert BUFFER after a save that returned RESULT, unless edited since TICK."
  (with-current-buffer buffer
    (if (/= tick (buffer-chars-modified-tick))
        (message "EchoesVault: saved; the buffer changed meanwhile, so it was not reverted")
      (revert-buffer t t t))
    (message "EchoesVault: %s %s" (or (plist-get result :action) "saved")
             (file-name-nondirectory buffer-file-name))
    result))

(defun echoes-lsp--choose-after-refusal (buffer)
  "Ask what to do with BUFFER, whose save was refused as stale (EV701)."
  (let* ((name (file-name-nondirectory (buffer-file-name buffer)))
         (labels (mapcar #'cdr echoes-lsp-stale-choices))
         (label (completing-read
                 (format "EV701: %s changed on disk since it was opened. What now? " name)
                 labels nil t nil nil (alist-get 'cancel echoes-lsp-stale-choices)))
         (choice (car (rassoc label echoes-lsp-stale-choices))))
    (with-current-buffer buffer
      (pcase choice
        ('overwrite (echoes-lsp-save t))
        ('diff (diff-buffer-with-file buffer) nil)
        ('reload (revert-buffer t t t) nil)
        (_ (message "EchoesVault: save cancelled; %s on disk was not changed" name) nil)))))

(defun echoes-lsp-save (&optional confirm-overwrite)
  "Save the page through EchoesVault, then revert the buffer.
The runtime checks the page, writes it under the vault's lock and
refreshes the index; reverting leaves the buffer unmodified.  A page
changed on disk since it was opened is refused (EV701) and a choice
offered.  With CONFIRM-OVERWRITE (a prefix argument) the disk version
is knowingly replaced."
  (interactive "P")
  (let* ((server (echoes-lsp--server))
         (buffer (current-buffer))
         (tick (buffer-chars-modified-tick))
         (argument (list :uri (echoes-lsp--uri buffer-file-name))))
    (when confirm-overwrite
      (setq argument (plist-put argument :confirmOverwrite t)))
    (condition-case error
        (echoes-lsp--saved buffer tick (echoes-lsp--execute server "echoes.savePage" argument))
      (jsonrpc-error
       (if (and (echoes-lsp--stale-p error) (not confirm-overwrite))
           (echoes-lsp--choose-after-refusal buffer)
         (message "EchoesVault: save failed: %s" (echoes-lsp--error-text error))
         nil)))))

(defun echoes-lsp--argument-buffer (arguments)
  "The buffer of the page the first of ARGUMENTS names, else the current one."
  (let* ((uri (plist-get (and (> (length arguments) 0) (elt arguments 0)) :uri))
         (file (and (stringp uri) (eglot--uri-to-path uri))))
    (or (and file (find-buffer-visiting file)) (current-buffer))))

(cl-defmethod eglot-execute-command
  ((_server echoes-lsp-server) (_command (eql echoes.savePage)) arguments)
  "The code actions' save with ARGUMENTS: `echoes-lsp-save', and its revert.
An overwrite that asks to confirm is asked here: eglot declares no
`window/showMessageRequest'."
  (let ((confirm (plist-get (and (> (length arguments) 0) (elt arguments 0))
                            :confirmOverwrite)))
    (with-current-buffer (echoes-lsp--argument-buffer arguments)
      (cond ((eq confirm t) (echoes-lsp-save t))
            ((equal confirm "ask")
             (if (yes-or-no-p (format "%s changed on disk. Overwrite the disk version with \
your buffer? " (file-name-nondirectory buffer-file-name)))
                 (echoes-lsp-save t)
               (message "EchoesVault: save cancelled; the disk version was kept")
               nil))
            (t (echoes-lsp-save))))))

(cl-defmethod eglot-execute-command
  ((server echoes-lsp-server) (_command (eql echoes.showDiskVersion)) arguments)
  "Open the disk version (ARGUMENTS name the page) read-only, beside it."
  (let* ((result (jsonrpc-request server :workspace/executeCommand
                                  (list :command "echoes.showDiskVersion" :arguments arguments)
                                  :timeout echoes-lsp-request-timeout))
         (file (eglot--uri-to-path (plist-get result :uri))))
    (with-current-buffer (find-file-noselect file)
      (read-only-mode 1)
      (display-buffer (current-buffer))
      result)))

(cl-defmethod eglot-execute ((server echoes-lsp-server) action)
  "Run ACTION on SERVER as newer eglot does (its code actions call this).
The save and the disk version go through the methods above; the rest
as eglot does it.  Eglot 1.9 has no `eglot-execute' and never calls it."
  (let ((command (plist-get action :command)))
    (if (member command '("echoes.savePage" "echoes.showDiskVersion"))
        (eglot-execute-command server (intern command) (plist-get action :arguments))
      (cl-call-next-method))))

;;; Setup

;;;###autoload
(defun echoes-lsp-setup ()
  "Open Markdown under `EchoesVault/' in `echoes-lsp-page-mode', with echoes-lsp."
  (add-to-list 'auto-mode-alist
               (cons (concat "/" echoes-lsp-vault-dir "/.*\\.md\\'") 'echoes-lsp-page-mode))
  (add-to-list 'eglot-server-programs
               (cons 'echoes-lsp-page-mode
                     (lambda (&rest _) (cons 'echoes-lsp-server echoes-lsp-server-command))))
  (add-hook 'project-find-functions #'echoes-lsp--project)
  (add-hook 'echoes-lsp-page-mode-hook #'eglot-ensure))

(provide 'echoes-lsp)

;;; echoes-lsp.el ends here

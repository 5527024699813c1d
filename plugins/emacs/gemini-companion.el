;;; gemini-companion.el --- Gemini CLI's IDE mode: context and proposed edits -*- lexical-binding: t -*-

;; Copyright (C) 2026 The gemini-ide-companion authors

;; Author: The gemini-ide-companion authors
;; Maintainer: The gemini-ide-companion authors
;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, convenience, processes
;; URL: https://github.com/gemini-ide-companion/gemini-ide-companion

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: Apache-2.0

;;; Commentary:

;; Gemini CLI's `/ide' mode for Emacs.  With `gemini-companion-mode' on,
;; Gemini CLI sees the file you are in, your cursor and your selection,
;; and proposes edits that you review, edit, and accept (C-c C-c) or
;; reject (C-c C-k) in Emacs.
;;
;; The work is done by gemini-ide-companion, a small sidecar program
;; this package starts and talks to; it speaks MCP to Gemini CLI.
;;
;;   (gemini-companion-mode 1)
;;   M-x gemini-companion-cli       Gemini CLI in vterm, eat or ansi-term
;;   M-x gemini-companion-status    what the companion is doing
;;   M-x gemini-companion-doctor    why a Gemini CLI would not connect

;;; Code:

(require 'gemini-companion-link)
(require 'gemini-companion-context)
(require 'gemini-companion-diff)
(require 'gemini-companion-tools)
(require 'project)

(declare-function eat "ext:eat" (&optional program arg))
(declare-function term-mode "term" ())
(declare-function term-exec "term" (buffer name command startfile switches))
(declare-function term-char-mode "term" ())
(declare-function vterm-mode "ext:vterm" ())
(defvar vterm-shell)
(defvar vterm-min-window-width)
(defvar term-raw-map)
(defvar eat-buffer-name)

(defgroup gemini-companion nil
  "Gemini CLI's IDE mode in Emacs, through gemini-ide-companion."
  :group 'tools
  :prefix "gemini-companion-"
  :link '(url-link
          "https://github.com/gemini-ide-companion/gemini-ide-companion"))

(defcustom gemini-companion-cli-command '("gemini")
  "The Gemini CLI command and its arguments."
  :type '(repeat string)
  :group 'gemini-companion)

(defcustom gemini-companion-terminal 'auto
  "The terminal `gemini-companion-cli' runs Gemini CLI in.
`auto' takes vterm if installed, else eat, else `ansi-term'."
  :type '(choice (const auto) (const vterm) (const eat) (const ansi-term))
  :group 'gemini-companion)

(defcustom gemini-companion-workspace-function #'gemini-companion-workspace
  "Function returning the workspace folders (directories) for a new sidecar."
  :type 'function
  :group 'gemini-companion)

(defvar gemini-companion--status nil "The sidecar's last `status' params.")
(defvar gemini-companion--cli-buffer nil "The buffer running Gemini CLI.")

(defun gemini-companion-workspace ()
  "The current project's root, else `default-directory', as a list."
  (let* ((project (project-current nil))
         (root (if project (project-root project) default-directory)))
    (list (directory-file-name (file-truename (expand-file-name root))))))

(defun gemini-companion-status-text ()
  "The status text the sidecar composed, or what the companion is doing."
  (pcase (gemini-companion-link-state)
    ('running (or (plist-get gemini-companion--status :text)
                  ;; A sidecar older than editor link v2 sends no text.
                  (format "Gemini: %d CLI" (or (plist-get gemini-companion--status :connectedClients) 0))))
    ('starting "Gemini: starting")
    (_ "Gemini: off")))

(defvar gemini-companion--lighter nil
  "The last lighter: (STATE STATUS . TEXT).")

(defun gemini-companion--mode-line ()
  "The mode line lighter.
Each redisplay asks for it, so it is made again only when the link's
state or the sidecar's status changed (and, without `let', nothing is
allocated when it did not, even when this file is not byte-compiled)."
  (if (and gemini-companion--lighter
           (eq (car gemini-companion--lighter) (gemini-companion-link-state))
           (eq (cadr gemini-companion--lighter) gemini-companion--status))
      (cddr gemini-companion--lighter)
    (cddr (setq gemini-companion--lighter
                (cons (gemini-companion-link-state)
                      (cons gemini-companion--status
                            (concat " " (gemini-companion-status-text))))))))

(gemini-companion-link-on
 "status"
 (lambda (params)
   (setq gemini-companion--status params)
   (force-mode-line-update t)))

(gemini-companion-link-on
 "log"
 (lambda (params)
   (when (stringp (plist-get params :message))
     (gemini-companion-link-message (plist-get params :level) (plist-get params :message)))))

(defun gemini-companion--ready (up)
  "Take the status the sidecar started with (UP), or forget it (UP nil)."
  (setq gemini-companion--status
        (and up (plist-get (gemini-companion-link-info) :status))))

(defun gemini-companion--kill-emacs ()
  "Stop the CLI this package started and the sidecar before Emacs exits."
  (gemini-companion--stop-cli)
  (gemini-companion-link-stop t))

;;;###autoload
(define-minor-mode gemini-companion-mode
  "Gemini CLI's IDE mode: Gemini CLI sees your files and proposes edits here.
Starts the gemini-ide-companion sidecar; `gemini-companion-cli' opens
Gemini CLI connected to it."
  :global t
  :group 'gemini-companion
  :lighter (:eval (gemini-companion--mode-line))
  (gemini-companion-context-enable gemini-companion-mode)
  (if gemini-companion-mode
      (progn
        (setq gemini-companion-link-workspace-function gemini-companion-workspace-function)
        (add-hook 'gemini-companion-link-ready-functions #'gemini-companion--ready)
        (add-hook 'kill-emacs-hook #'gemini-companion--kill-emacs)
        (gemini-companion-link-start
         (lambda (err) (when err (gemini-companion-link-message "error" err)))))
    (remove-hook 'kill-emacs-hook #'gemini-companion--kill-emacs)
    (gemini-companion-link-stop)))

;;;###autoload
(defun gemini-companion-terminal-env (&optional timeout)
  "The environment that connects a Gemini CLI you start yourself to Emacs.
A list of \"NAME=VALUE\" strings (GEMINI_CLI_IDE_SERVER_PORT,
GEMINI_CLI_IDE_WORKSPACE_PATH, GEMINI_CLI_IDE_AUTH_TOKEN and
GEMINI_CLI_IDE_PID) for a terminal of your own choosing; Gemini CLI
passes them on to `gemini-ide-companion tools'.  Starts the sidecar if
needed and waits for it, at most TIMEOUT seconds (default 15); nil when
it cannot start.  For example:

  (let ((process-environment
         (append (gemini-companion-terminal-env) process-environment)))
    (vterm))"
  (let ((deadline (+ (float-time) (or timeout 15)))
        (done nil) (env nil))
    (unless (gemini-companion-link-running-p)
      (gemini-companion-link-start (lambda (_err) (setq done t)))
      (while (and (not done) (< (float-time) deadline))
        (accept-process-output nil 0.02)))
    (when (gemini-companion-link-running-p)
      (setq done nil)
      (gemini-companion-link-terminal-env (lambda (e) (setq done t env e)))
      (while (and (not done) (< (float-time) deadline))
        (accept-process-output nil 0.02)))
    env))

;;;###autoload
(defun gemini-companion-restart ()
  "Restart the gemini-ide-companion sidecar."
  (interactive)
  (unless gemini-companion-mode (gemini-companion-mode 1))
  (gemini-companion-link-restart
   (lambda (err) (message "%s" (or err "gemini-ide-companion restarted")))))

;;; The Gemini CLI in a terminal

(defun gemini-companion--terminal-backend ()
  "The terminal to use, per `gemini-companion-terminal'."
  (if (eq gemini-companion-terminal 'auto)
      (cond ((require 'vterm nil t) 'vterm)
            ((require 'eat nil t) 'eat)
            (t 'ansi-term))
    gemini-companion-terminal))

(defun gemini-companion--launch (env)
  "Start Gemini CLI in a terminal with ENV (\"NAME=VALUE\" strings) added.
The terminal's buffer is shown in its window first and the CLI started
there, so that it starts at the size of that window: the CLI draws its
screen for the size it starts with, and a resize right after the start
leaves it garbled.  Later resizes reach it the way each terminal passes
them on (Emacs calls the terminal's `window-adjust-process-window-size'
function for the windows showing it)."
  ;; ENV is the sidecar's whole answer (in a container it includes what
  ;; the CLI needs to dial 127.0.0.1).
  (let* ((process-environment (append env process-environment))
         (command gemini-companion-cli-command)
         (name "*gemini-cli*")
         (placeholder (generate-new-buffer name))
         (buffer
          (progn
            ;; The CLI's window, selected: every terminal below sizes its
            ;; pty from the selected window.
            (pop-to-buffer placeholder)
            (pcase (gemini-companion--terminal-backend)
              ('vterm
               (require 'vterm)
               ;; vterm starts its pty at the window's body width, one
               ;; column more than the window shows in a text terminal
               ;; (the last one is kept for the continuation glyph) and
               ;; than the size it resizes to at once: the command sets
               ;; the size that stays, before the CLI starts.
               (let ((vterm-shell
                      (format "/bin/sh -c %s"
                              (shell-quote-argument
                               (format "stty rows %d columns %d 2>/dev/null; exec %s"
                                       (window-body-height) (window-max-chars-per-line)
                                       (mapconcat #'shell-quote-argument command " ")))))
                     ;; vterm keeps a shell at least 80 columns wide, cut
                     ;; off in a narrower window; the CLI fits any width.
                     (vterm-min-window-width 1))
                 (with-current-buffer placeholder
                   (vterm-mode)
                   (setq-local vterm-min-window-width 1))
                 ;; vterm's own screen takes that size too once the new
                 ;; window is drawn (`window-configuration-change-hook').
                 placeholder))
              ('eat
               (require 'eat)
               ;; eat shows its buffer in the selected window, the CLI's.
               (let ((eat-buffer-name name))
                 (prog1 (eat (mapconcat #'shell-quote-argument command " ") t)
                   (kill-buffer placeholder))))
              (_
               (require 'term)
               (with-current-buffer placeholder
                 ;; `make-term' would size the terminal by whichever
                 ;; window is selected; here that is the CLI's own.
                 (term-mode)
                 ;; The CLI writes UTF-8, whatever the locale says.
                 (setq-local locale-coding-system 'utf-8-unix)
                 (term-exec placeholder "gemini-cli" (car command) nil (cdr command))
                 (gemini-companion--term-fixes (get-buffer-process placeholder))
                 (term-char-mode)
                 ;; C-x stays Emacs' prefix (C-x o, C-x b, C-x C-c), as in
                 ;; vterm; only in this buffer.  term.el is in char mode
                 ;; while its local map is `term-raw-map': that is this
                 ;; map here (else it would take the CLI's output for line
                 ;; mode's and insert rows where the CLI moves the cursor).
                 (let ((map (make-sparse-keymap)))
                   (set-keymap-parent map term-raw-map)
                   (define-key map (kbd "C-x") 'Control-X-prefix)
                   (setq-local term-raw-map map)
                   (use-local-map map)))
               placeholder)))))
    (let ((proc (get-buffer-process buffer)))
      ;; Quitting Emacs ends the CLI (see `gemini-companion--stop-cli'):
      ;; no "Active processes exist" question about it.
      (when proc (set-process-query-on-exit-flag proc nil)))
    (setq gemini-companion--cli-buffer buffer)
    buffer))

(defun gemini-companion--term-translate (filter proc string)
  "Call term's process FILTER for PROC with STRING, in words term.el knows.
term.el knows no OSC sequence (ESC ] ... BEL): it would print the window
titles Gemini CLI sets, so these are dropped.  It takes ESC [ 2 K, erase
the line, for ESC [ K, erase to its end, and would leave the start of
each line the CLI redraws with the cursor in its prompt: that becomes
ESC [ 1 K ESC [ K.  A sequence cut between two outputs is held until
the rest comes."
  (let ((s (concat (or (process-get proc 'gemini-companion-held) "") string))
        (held nil)
        (parts nil)
        (start 0))
    (while (and start (string-match "\e]" s start))
      (let ((b (match-beginning 0)))
        (push (substring s start b) parts)
        (if (string-match "\a\\|\e\\\\" s (+ b 2))
            (setq start (match-end 0))
          (setq held (substring s b)
                start nil))))
    (when start (push (substring s start) parts))
    (setq s (apply #'concat (nreverse parts)))
    (when (and (not held)
               (string-match "\e\\(?:\\[[\x30-\x3F]*[\x20-\x2F]*\\)?\\'" s))
      (setq held (substring s (match-beginning 0))
            s (substring s 0 (match-beginning 0))))
    (process-put proc 'gemini-companion-held held)
    (funcall filter proc (replace-regexp-in-string "\e\\[2K" "\e[1K\e[K" s t t))))

(defun gemini-companion--term-fixes (proc)
  "Make the term of PROC draw Gemini CLI as a terminal does.
No window titles printed as text, and whole lines erased."
  (add-function :around (process-filter proc) #'gemini-companion--term-translate))

;;;###autoload
(defun gemini-companion-cli ()
  "Open Gemini CLI in a terminal, connected to this Emacs.
Starts the sidecar first when needed; shows the running CLI if there is one."
  (interactive)
  (unless gemini-companion-mode (gemini-companion-mode 1))
  (if (and (buffer-live-p gemini-companion--cli-buffer)
           (get-buffer-process gemini-companion--cli-buffer))
      (pop-to-buffer gemini-companion--cli-buffer)
    (unless (executable-find (car gemini-companion-cli-command))
      (user-error "Cannot find %s: install Gemini CLI (npm install -g @google/gemini-cli) or set `gemini-companion-cli-command'"
                  (car gemini-companion-cli-command)))
    ;; The project of the buffer the command was given in, taken now: the
    ;; callbacks below run wherever the sidecar's answers are read.
    (let* ((folders (funcall gemini-companion-workspace-function))
           (dir (file-name-as-directory (car folders)))
           (launch (lambda (env)
                     (let ((default-directory dir))
                       (gemini-companion--launch env)))))
      (gemini-companion-link-start
       (lambda (err)
         (if err
             (progn
               (gemini-companion-link-message
                "error" (format "The sidecar could not start (%s); Gemini CLI runs without IDE integration.  M-x gemini-companion-doctor says more" err))
               (funcall launch nil))
           ;; A CLI started in another project needs that project as the
           ;; workspace, or it refuses to connect.
           (unless (equal folders gemini-companion-link-folders)
             (gemini-companion-link-set-folders folders))
           (gemini-companion-link-terminal-env launch)))))))

(defun gemini-companion--stop-cli ()
  "End the Gemini CLI this package started and every process it started."
  (let ((proc (and (buffer-live-p gemini-companion--cli-buffer)
                   (get-buffer-process gemini-companion--cli-buffer))))
    (when (process-live-p proc)
      ;; The CLI re-runs itself as a child node process in its process
      ;; group, and outlives the hangup Emacs sends on exit.
      (ignore-errors (signal-process (- (process-id proc)) 'SIGTERM))
      (ignore-errors (signal-process proc 'SIGTERM))
      (set-process-query-on-exit-flag proc nil))))

;;; Status and doctor

(defun gemini-companion--status-lines ()
  "The lines that `gemini-companion-status' displays."
  (let* ((info (gemini-companion-link-info))
         (st (and (gemini-companion-link-running-p)
                  (ignore-errors (gemini-companion-link-request-sync "status/get" nil 2))))
         (lines nil))
    (cl-flet ((add (fmt &rest args) (push (apply #'format fmt args) lines)))
      (add "%s" (gemini-companion-status-text))
      (add "sidecar: %s%s" (gemini-companion-link-state)
           (if gemini-companion-link--proc
               (format " (pid %s, %s)" (process-id gemini-companion-link--proc)
                       (car (process-command gemini-companion-link--proc)))
             ""))
      (when gemini-companion-link-last-error (add "last error: %s" gemini-companion-link-last-error))
      (when info
        (add "version: %s" (or (plist-get st :serverVersion) (plist-get info :serverVersion)))
        (add "port: %s" (or (plist-get st :port) (plist-get info :port)))
        (add "discovery file: %s" (let ((f (plist-get info :discoveryFile)))
                                    (if (and f (> (length f) 0)) f "(none)")))
        (add "workspace: %s" (mapconcat #'identity (append (or (plist-get st :workspaceFolders)
                                                                gemini-companion-link-folders)
                                                            nil)
                                        ", "))
        (add "connected Gemini CLI sessions: %s"
             (or (plist-get st :connectedClients) (plist-get gemini-companion--status :connectedClients) 0)))
      (add "open proposals: %s" (let ((views (gemini-companion-diff-views)))
                                  (if views (mapconcat #'identity views ", ") "none")))
      (add "Gemini CLI terminal: %s" (if (and (buffer-live-p gemini-companion--cli-buffer)
                                              (get-buffer-process gemini-companion--cli-buffer))
                                         "running" "not running")))
    (nreverse lines)))

;;;###autoload
(defun gemini-companion-status ()
  "Show what the Gemini companion is doing."
  (interactive)
  (message "%s" (mapconcat #'identity (gemini-companion--status-lines) "\n")))

(defun gemini-companion--code-state ()
  "Return how the package's code is loaded: native-compiled, compiled or source.
Loaded from source, every command costs Emacs more time and garbage."
  (let* ((f (indirect-function 'gemini-companion-context-command))
         (lib (locate-library "gemini-companion-context"))
         (stale (and lib (string-suffix-p ".elc" lib)
                     (file-newer-than-file-p (substring lib 0 -1) lib))))
    (cond
     (stale (format "compiled, but %s is older than its source: compile the package again (see its README)"
                    (file-name-nondirectory lib)))
     ((and (fboundp 'subr-native-elisp-p) (subr-native-elisp-p f)) "native-compiled")
     ((byte-code-function-p f) "byte-compiled")
     (t "not compiled: running from the .el files costs more on every key; compile the package (see its README)"))))

;;;###autoload
(defun gemini-companion-doctor ()
  "Check the setup and say whether a Gemini CLI started here would connect.
Shows the sidecar, its discovery file and the sidecar's own doctor
report, run with the environment `gemini-companion-cli' gives the CLI."
  (interactive)
  (let ((program (gemini-companion-link-program))
        (buffer (get-buffer-create "*gemini-companion doctor*"))
        (env (and (gemini-companion-link-running-p)
                  (let (out)
                    (gemini-companion-link-terminal-env (lambda (e) (setq out (or e '("GEMINI_COMPANION_ENV=none")))))
                    (let ((deadline (+ (float-time) 3)))
                      (while (and (not out) (< (float-time) deadline)) (accept-process-output nil 0.02)))
                    (remove "GEMINI_COMPANION_ENV=none" out)))))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (format "Emacs %s\n" emacs-version))
        (insert (format "package: %s\n" (gemini-companion--code-state)))
        (dolist (l (gemini-companion--status-lines)) (insert l "\n"))
        (insert (format "Gemini CLI: %s\n" (or (executable-find (car gemini-companion-cli-command))
                                               (format "%s is not on exec-path" (car gemini-companion-cli-command)))))
        (insert (format "terminal: %s\n\n" (gemini-companion--terminal-backend)))
        (if (not program)
            (insert (format "gemini-ide-companion: not found (%s); set `gemini-companion-sidecar-program'\n"
                            gemini-companion-sidecar-program))
          (insert (format "gemini-ide-companion doctor (%s), with the environment a CLI opened here gets:\n\n" program))
          (let ((process-environment (append env process-environment)))
            (call-process program nil t nil "doctor" "--workspace"
                          (car (or gemini-companion-link-folders (funcall gemini-companion-workspace-function))))))
        (goto-char (point-min))
        (special-mode)))
    (display-buffer buffer)
    buffer))

(add-hook 'gemini-companion-link-ready-functions #'gemini-companion--ready)

(provide 'gemini-companion)
;;; gemini-companion.el ends here

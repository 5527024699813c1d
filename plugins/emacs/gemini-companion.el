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
(require 'project)

(declare-function vterm "ext:vterm" (&optional arg))
(declare-function eat "ext:eat" (&optional program arg))
(declare-function term-mode "term" ())
(declare-function term-char-mode "term" ())
(defvar vterm-shell)
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

(defun gemini-companion--mode-line ()
  "The mode line lighter."
  (concat " " (gemini-companion-status-text)))

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
  "Start Gemini CLI in a terminal with ENV (\"NAME=VALUE\" strings) added."
  ;; ENV is the sidecar's whole answer (in a container it includes what
  ;; the CLI needs to dial 127.0.0.1).
  (let* ((process-environment (append env process-environment))
         (command gemini-companion-cli-command)
         (name "*gemini-cli*")
         (buffer
          (pcase (gemini-companion--terminal-backend)
            ('vterm
             (require 'vterm)
             (let ((vterm-shell (mapconcat #'shell-quote-argument command " ")))
               (pop-to-buffer (save-window-excursion (vterm name)))))
            ('eat
             (require 'eat)
             (let ((eat-buffer-name name))
               (pop-to-buffer
                (save-window-excursion (eat (mapconcat #'shell-quote-argument command " ") t)))))
            (_
             (require 'term)
             (let ((b (apply #'make-term "gemini-cli" (car command) nil (cdr command))))
               (with-current-buffer b
                 (term-mode)
                 (term-char-mode)
                 ;; C-x stays Emacs' prefix (C-x o, C-x b, C-x C-c), as in
                 ;; vterm; only in this buffer.
                 (let ((map (make-sparse-keymap)))
                   (set-keymap-parent map (current-local-map))
                   (define-key map (kbd "C-x") 'Control-X-prefix)
                   (use-local-map map)))
               (pop-to-buffer b)
               b)))))
    (setq gemini-companion--cli-buffer buffer)
    buffer))

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
      (add "open proposals: %s" (or (mapconcat #'identity (gemini-companion-diff-views) ", ") "none"))
      (add "Gemini CLI terminal: %s" (if (and (buffer-live-p gemini-companion--cli-buffer)
                                              (get-buffer-process gemini-companion--cli-buffer))
                                         "running" "not running")))
    (nreverse lines)))

;;;###autoload
(defun gemini-companion-status ()
  "Show what the Gemini companion is doing."
  (interactive)
  (message "%s" (mapconcat #'identity (gemini-companion--status-lines) "\n")))

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

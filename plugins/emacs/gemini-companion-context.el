;;; gemini-companion-context.el --- What the user looks at, for Gemini CLI -*- lexical-binding: t -*-

;; Copyright (C) 2026 The gemini-ide-companion authors

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: Apache-2.0

;;; Commentary:

;; Reports the focused file, the cursor and the selection to the sidecar,
;; and files closed or renamed.  `post-command-hook' and the window change
;; hooks only arm a short timer; the report is built when it fires, and
;; only what changed is sent.  The sidecar keeps the list of files, the
;; timestamps and the limits.

;;; Code:

(require 'gemini-companion-link)

(defcustom gemini-companion-context-delay 0.05
  "Seconds to wait after a command before reporting the cursor and selection."
  :type 'number
  :group 'gemini-companion)

(defvar gemini-companion-context--timer nil "The armed report timer, or nil.")
(defvar gemini-companion-context--last nil
  "What was last sent about the active file: (PATH LINE CHARACTER SELECTION).")
(defvar gemini-companion-context--reported (make-hash-table :test #'eq :weakness 'key)
  "Buffer -> (VISITED-NAME . PATH) of the files the sidecar knows.")

(defun gemini-companion-context-file (buffer)
  "The absolute true name of the local file BUFFER visits, or nil."
  (let ((name (buffer-file-name buffer)))
    (when (and name (not (file-remote-p name)) (file-regular-p name))
      (file-truename name))))

(defun gemini-companion-context--path (buffer)
  "The path the sidecar knows BUFFER by, reporting a rename; or nil."
  (let ((known (gethash buffer gemini-companion-context--reported))
        (name (buffer-file-name buffer)))
    (if (and known (equal (car known) name))
        (cdr known)
      (let ((path (gemini-companion-context-file buffer)))
        (cond
         ((and known path (not (equal (cdr known) path)))
          (gemini-companion-link-notify "context/fileRenamed"
                                        (list :oldPath (cdr known) :newPath path))
          (when (equal (car gemini-companion-context--last) (cdr known))
            (setcar gemini-companion-context--last path)))
         ((and known (not path))
          (gemini-companion-context--closed buffer)))
        (if path
            (puthash buffer (cons name path) gemini-companion-context--reported)
          (remhash buffer gemini-companion-context--reported))
        path))))

(defun gemini-companion-context-utf16-column (text)
  "The length of TEXT in UTF-16 code units."
  (let ((n (length text)))
    (dotimes (i (length text))
      (when (> (aref text i) #xFFFF) (setq n (1+ n))))
    n))

(defun gemini-companion-context-clip (text max-bytes)
  "TEXT cut to at most MAX-BYTES bytes of UTF-8, at a character boundary."
  (if (<= (string-bytes text) max-bytes)
      text
    (let* ((head (substring text 0 (min (length text) max-bytes)))
           (bytes (encode-coding-string head 'utf-8-unix t)))
      (if (<= (length bytes) max-bytes)
          head
        (let ((cut (decode-coding-string (substring bytes 0 max-bytes) 'utf-8-unix t)))
          ;; A character cut in two decodes to raw bytes: drop them.
          (while (and (> (length cut) 0) (> (aref cut (1- (length cut))) #x3FFF7F))
            (setq cut (substring cut 0 -1)))
          cut)))))

(defun gemini-companion-context--selection ()
  "The selected text of the current buffer, clipped per the policy, or nil."
  (when (use-region-p)
    (let* ((max (or (gemini-companion-link-limit :maxSelectionBytes) 65552))
           (beg (region-beginning))
           (end (min (region-end) (+ beg max))))
      (gemini-companion-context-clip (buffer-substring-no-properties beg end) max))))

(defun gemini-companion-context-flush ()
  "Send what changed in the selected window since the last report."
  (setq gemini-companion-context--timer nil)
  (when (and (gemini-companion-link-running-p) (not (minibufferp (window-buffer))))
    (with-current-buffer (window-buffer)
      (let ((path (gemini-companion-context--path (current-buffer))))
        ;; Not a file (the CLI's terminal, a diff): keep the last file,
        ;; cursor and selection, as an editor does when focus moves away.
        (when path
          (let* ((line (line-number-at-pos))
                 (character (1+ (gemini-companion-context-utf16-column
                                 (buffer-substring-no-properties (line-beginning-position) (point)))))
                 (selection (gemini-companion-context--selection))
                 (now (list path line character selection))
                 (params (append (list :path path :cursor (list :line line :character character))
                                 (and selection (list :selectedText selection)))))
            (cond ((not (equal path (car gemini-companion-context--last)))
                   (gemini-companion-link-notify "context/fileFocused" params))
                  ((not (equal now gemini-companion-context--last))
                   (gemini-companion-link-notify "context/selectionChanged" params)))
            (setq gemini-companion-context--last now)))))))

(defun gemini-companion-context-schedule (&rest _)
  "Arm the report timer unless it is armed.
This is cheap, as it has to be: it is called after every command."
  (unless gemini-companion-context--timer
    (setq gemini-companion-context--timer
          (run-with-timer gemini-companion-context-delay nil #'gemini-companion-context-flush))))

(defun gemini-companion-context--closed (&optional buffer)
  "Report that BUFFER (default: the current one), a file the sidecar knows, closed."
  (let* ((buffer (or buffer (current-buffer)))
         (known (gethash buffer gemini-companion-context--reported)))
    (when known
      (remhash buffer gemini-companion-context--reported)
      (gemini-companion-link-notify "context/fileClosed" (list :path (cdr known)))
      (when (equal (car gemini-companion-context--last) (cdr known))
        (setq gemini-companion-context--last nil))
      (gemini-companion-context-schedule))))

(defun gemini-companion-context-resync (up)
  "After the sidecar started (UP non-nil): report the open files, oldest first."
  (clrhash gemini-companion-context--reported)
  (setq gemini-companion-context--last nil)
  (when up
    ;; The most recently used ones the sidecar keeps, oldest first.
    (let ((current (window-buffer))
          (room (or (gemini-companion-link-limit :maxOpenFiles) 10))
          (paths nil))
      (dolist (buffer (buffer-list))
        (unless (or (eq buffer current) (>= (length paths) room))
          (let ((path (gemini-companion-context--path buffer)))
            (when path (push path paths)))))
      (dolist (path paths)
        (gemini-companion-link-notify "context/fileFocused" (list :path path))))
    (gemini-companion-context-flush)))

(defun gemini-companion-context-enable (on)
  "Install the context hooks when ON is non-nil, else remove them."
  (let ((fn (if on #'add-hook #'remove-hook)))
    (funcall fn 'post-command-hook #'gemini-companion-context-schedule)
    (funcall fn 'window-selection-change-functions #'gemini-companion-context-schedule)
    (funcall fn 'window-buffer-change-functions #'gemini-companion-context-schedule)
    (funcall fn 'after-save-hook #'gemini-companion-context-schedule)
    (funcall fn 'kill-buffer-hook #'gemini-companion-context--closed)
    (funcall fn 'gemini-companion-link-ready-functions #'gemini-companion-context-resync)))

(provide 'gemini-companion-context)
;;; gemini-companion-context.el ends here

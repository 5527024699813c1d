;;; gemini-companion-context.el --- What the user looks at, for Gemini CLI -*- lexical-binding: t -*-

;; Copyright (C) 2026 The gemini-ide-companion authors

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: Apache-2.0

;;; Commentary:

;; Reports the focused file, the cursor and the selection to the sidecar,
;; and files closed or renamed, at most once per
;; `gemini-companion-context-delay'.  After a command, `post-command-hook'
;; reads the clock: the first command after a pause reports at once, and
;; while the cursor keeps moving an idle timer reports once Emacs has been
;; idle for that delay (and a command, every four delays), so Emacs is
;; not woken up for it while the user types.  Only what changed is sent.
;; The sidecar keeps the list of files, the timestamps and the limits.

;;; Code:

(require 'gemini-companion-link)

(defcustom gemini-companion-context-delay 0.05
  "At most one report of the cursor and selection per this many seconds.
The first change after a pause is reported at once, the last one within
this time.  0 reports every change."
  :type 'number
  :group 'gemini-companion)

(defvar gemini-companion-context--timer nil "The armed report timer, or nil.")
(defvar gemini-companion-context--due 0.0
  "The `float-time' from which on the cursor may be reported again.")
(defvar gemini-companion-context--late 0.0
  "The `float-time' from which on a command reports while others follow.
Four delays after the first command not reported.")
(defvar gemini-companion-context--paused 0.0
  "The `float-time' from which on the command loop counts as paused.")
(defvar gemini-companion-context--now 0.0 "The time of the last command.")
(defvar gemini-companion-context--last nil
  "What was last sent about the active file: (PATH LINE CHARACTER REGION).
REGION is the selection as `gemini-companion-context--region' gives it.")
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

(defun gemini-companion-context--region ()
  "The selection of the current buffer, (BEG END TICK), or nil.
END is clipped to `maxSelectionBytes' characters past BEG; TICK is
`buffer-chars-modified-tick': the same list means the same text."
  (when (use-region-p)
    (let* ((max (or (gemini-companion-link-limit :maxSelectionBytes) 65552))
           (beg (region-beginning)))
      (list beg (min (region-end) (+ beg max)) (buffer-chars-modified-tick)))))

(defun gemini-companion-context--insert-selection (buffer region)
  "Insert the text of REGION of BUFFER as a JSON string, clipped per the policy.
REGION is what `gemini-companion-context--region' returned there.  The
text is cut to `maxSelectionBytes' bytes of UTF-8 at a character
boundary, as `gemini-companion-context-clip' cuts it."
  (insert "\"")
  (let ((from (point))
        (max (or (gemini-companion-link-limit :maxSelectionBytes) 65552)))
    (insert-buffer-substring-no-properties buffer (car region) (nth 1 region))
    (when (> (- (position-bytes (point)) (position-bytes from)) max)
      ;; The character that holds the byte past the limit goes, and all after it.
      (delete-region (byte-to-position (+ (position-bytes from) max)) (point)))
    (gemini-companion-link-escape from))
  (insert "\""))

(defvar gemini-companion-context--path-json nil
  "(PATH . JSON): the last path reported and its JSON string literal.")

(defun gemini-companion-context--column ()
  "The UTF-16 code units between the start of the line and point."
  (let* ((bol (line-beginning-position))
         (n (- (point) bol)))
    (if (= (- (position-bytes (point)) (position-bytes bol)) n)
        n                               ; ASCII: no string needed
      (let ((pos bol))
        (while (< pos (point))
          (when (> (char-after pos) #xFFFF) (setq n (1+ n)))
          (setq pos (1+ pos)))
        n))))

(defun gemini-companion-context-flush ()
  "Send what changed in the selected window since the last report."
  ;; A report made otherwise than by the idle timer (a buffer switch, the
  ;; sidecar starting) makes the timer's report needless.
  (when (timerp gemini-companion-context--timer)
    (cancel-timer gemini-companion-context--timer))
  (setq gemini-companion-context--timer nil)
  (when (and (gemini-companion-link-running-p) (not (minibufferp (window-buffer))))
    (with-current-buffer (window-buffer)
      (let ((path (gemini-companion-context--path (current-buffer)))
            (last gemini-companion-context--last))
        ;; Not a file (the CLI's terminal, a diff): keep the last file,
        ;; cursor and selection, as an editor does when focus moves away.
        (when path
          (let ((line (line-number-at-pos))
                (character (1+ (gemini-companion-context--column)))
                (region (gemini-companion-context--region))
                (buffer (current-buffer)))
            ;; Built in a buffer: this runs while the user moves the
            ;; cursor and selects, and strings for the encoder, above all
            ;; the selected text, would be garbage at once.
            (unless (and (equal path (car last)) (eql line (nth 1 last))
                         (eql character (nth 2 last)) (equal region (nth 3 last)))
              (unless (equal path (car gemini-companion-context--path-json))
                (setq gemini-companion-context--path-json
                      (cons path (gemini-companion-link-json-string path))))
              (gemini-companion-link-notify-built
               (if (equal path (car last)) "context/selectionChanged" "context/fileFocused")
               (lambda ()
                 (let ((out (current-buffer)))
                   (insert "{\"path\":" (cdr gemini-companion-context--path-json)
                           ",\"cursor\":{\"line\":")
                   (princ line out)
                   (insert ",\"character\":")
                   (princ character out)
                   (insert "}")
                   (when region
                     (insert ",\"selectedText\":")
                     (gemini-companion-context--insert-selection buffer region))
                   (insert "}"))))
              (setq gemini-companion-context--due (+ (float-time) gemini-companion-context-delay)
                    gemini-companion-context--last (list path line character region)))))))))

(defun gemini-companion-context-schedule (&rest _)
  "Report soon, unless a report is on its way.
At once (from a timer) when nothing was reported for
`gemini-companion-context-delay', else when that time has passed since
the last report."
  (unless gemini-companion-context--timer
    (setq gemini-companion-context--late (+ (float-time) (* 4 gemini-companion-context-delay))
          gemini-companion-context--timer
          (run-with-timer (max 0 (- gemini-companion-context--due (float-time)))
                          nil #'gemini-companion-context-flush))))

(defun gemini-companion-context-command ()
  "Report the cursor after a command, at most once per delay.
This runs after every command, so it only reads the clock unless a
report is due: the first command after a pause (none for
`gemini-companion-context-delay') reports at once, if nothing was
reported within that delay; while commands keep coming, one reports
when the first command not reported is four delays old (the sidecar's
own longest wait); otherwise an idle timer reports once Emacs has been
idle for the delay, that is, once the cursor stopped."
  (when (gemini-companion-link-running-p)
    (setq gemini-companion-context--now (float-time))
    (if (or (and (>= gemini-companion-context--now gemini-companion-context--paused)
                 (>= gemini-companion-context--now gemini-companion-context--due))
            (and gemini-companion-context--timer
                 (>= gemini-companion-context--now gemini-companion-context--late)))
        (progn
          (when gemini-companion-context--timer
            (cancel-timer gemini-companion-context--timer))
          ;; An error in `post-command-hook' would remove the function from it.
          (condition-case err
              (gemini-companion-context-flush)
            (error (message "gemini-companion: cannot report the cursor: %s"
                            (error-message-string err)))))
      (unless gemini-companion-context--timer
        (setq gemini-companion-context--late
              (+ gemini-companion-context--now (* 4 gemini-companion-context-delay))
              gemini-companion-context--timer
              (run-with-idle-timer gemini-companion-context-delay nil
                                   #'gemini-companion-context-flush))))
    (setq gemini-companion-context--paused
          (+ gemini-companion-context--now gemini-companion-context-delay))))

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
    (funcall fn 'post-command-hook #'gemini-companion-context-command)
    (funcall fn 'window-selection-change-functions #'gemini-companion-context-schedule)
    (funcall fn 'window-buffer-change-functions #'gemini-companion-context-schedule)
    (funcall fn 'after-save-hook #'gemini-companion-context-schedule)
    (funcall fn 'kill-buffer-hook #'gemini-companion-context--closed)
    (funcall fn 'gemini-companion-link-ready-functions #'gemini-companion-context-resync)))

(provide 'gemini-companion-context)
;;; gemini-companion-context.el ends here

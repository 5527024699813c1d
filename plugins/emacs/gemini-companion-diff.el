;;; gemini-companion-diff.el --- Gemini CLI's proposed edits, reviewed with smerge -*- lexical-binding: t -*-

;; Copyright (C) 2026 The gemini-ide-companion authors

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: Apache-2.0

;;; Commentary:

;; A proposal from Gemini CLI opens in a buffer of its own, in the file's
;; major mode, with each changed hunk as an `smerge-mode' conflict: the
;; file as it is above, Gemini's version below.  Edit anything, keep either
;; side of a hunk with smerge's keys (C-c ^ u, C-c ^ l, C-c ^ n ...), then
;; C-c C-c accepts the buffer (hunks left unresolved take Gemini's side)
;; and C-c C-k rejects.  Killing the buffer rejects too.  Gemini CLI, not
;; Emacs, writes an accepted file; its buffer is reverted once written.

;;; Code:

(require 'gemini-companion-link)

;; smerge-mode (and diff-mode, which it loads) is needed only once a
;; proposal opens: loaded then, it is not part of every garbage collection
;; of a session that never sees one.
(defvar smerge-begin-re)
(defvar smerge-mode-map)
(declare-function smerge-mode "smerge-mode" (&optional arg))
(declare-function smerge-match-conflict "smerge-mode" ())
(declare-function smerge-keep-lower "smerge-mode" ())

(defcustom gemini-companion-diff-select-window t
  "When non-nil, select the proposal's window when it opens."
  :type 'boolean
  :group 'gemini-companion)

(defvar gemini-companion-diff--views (make-hash-table :test #'equal)
  "File path -> the proposal buffer open for it.")
(defvar gemini-companion-diff--sent (make-hash-table :test #'equal)
  "File path -> (DIFF-ID . CONTENT) of accepts not yet taken by the sidecar.")

(defvar-local gemini-companion-diff--view nil
  "The proposal shown in this buffer, a plist.
Keys: :path :diff-id :origin :owner :queued :disk :orphaned :outside
:confirmed :new-file :no-final-newline :done.")

(defvar gemini-companion-proposal-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "C-c C-c") #'gemini-companion-accept)
    (define-key map (kbd "C-c C-k") #'gemini-companion-reject)
    map)
  "Keys of a Gemini proposal buffer.")

(define-minor-mode gemini-companion-proposal-mode
  "A change proposed by Gemini CLI.
\\<gemini-companion-proposal-mode-map>\\[gemini-companion-accept] accepts the buffer as shown (hunks left unresolved take Gemini's side);
\\[gemini-companion-reject] rejects.  Resolve hunks with `smerge-mode' keys."
  :lighter " Gemini-proposal"
  :keymap gemini-companion-proposal-mode-map)

(defun gemini-companion-diff--get (key)
  "KEY of the current buffer's view."
  (plist-get gemini-companion-diff--view key))

(defun gemini-companion-diff--set (key value)
  "Set KEY of the current buffer's view to VALUE."
  (setq gemini-companion-diff--view (plist-put gemini-companion-diff--view key value)))

(defun gemini-companion-diff-views ()
  "The paths with an open proposal."
  (hash-table-keys gemini-companion-diff--views))

(defun gemini-companion-diff-buffer (path)
  "The live proposal buffer for PATH, or nil."
  (let ((buffer (gethash path gemini-companion-diff--views)))
    (and (buffer-live-p buffer) buffer)))

(defun gemini-companion-diff--lines (text)
  "TEXT split into lines that keep their newline."
  (let ((start 0) (out nil))
    (while (< start (length text))
      (let ((nl (string-search "\n" text start)))
        (push (substring text start (if nl (1+ nl) nil)) out)
        (setq start (if nl (1+ nl) (length text)))))
    (nreverse out)))

(defun gemini-companion-diff-merge-text (original unified label)
  "ORIGINAL with each hunk of the UNIFIED diff as an smerge conflict.
LABEL names the upper side.  Nil when UNIFIED does not fit ORIGINAL."
  (let ((old (vconcat (gemini-companion-diff--lines original)))
        (pos 0) (out nil) (minus nil) (plus nil) (ok t))
    (cl-labels ((line (s) (if (string-suffix-p "\n" s) s (concat s "\n")))
                (flush ()
                  (when (or minus plus)
                    (push (concat "<<<<<<< " label "\n"
                                  (mapconcat #'line (nreverse minus) "")
                                  "=======\n"
                                  (mapconcat #'line (nreverse plus) "")
                                  ">>>>>>> proposed by Gemini\n")
                          out)
                    (setq minus nil plus nil))))
      (dolist (l (gemini-companion-diff--lines unified))
        (when ok
          (cond
           ((string-match "\\`@@ -\\([0-9]+\\)\\(?:,\\([0-9]+\\)\\)? " l)
            (flush)
            (let* ((start (string-to-number (match-string 1 l)))
                   (count (if (match-string 2 l) (string-to-number (match-string 2 l)) 1))
                   (to (if (= count 0) start (1- start))))
              (if (or (< to pos) (> to (length old)))
                  (setq ok nil)
                (while (< pos to) (push (aref old pos) out) (setq pos (1+ pos))))))
           ((string-prefix-p " " l)
            (flush)
            (when (< pos (length old)) (push (aref old pos) out))
            (setq pos (1+ pos)))
           ((string-prefix-p "-" l)
            (unless (string-prefix-p "--- " l)
              (push (aref old (min pos (1- (length old)))) minus)
              (setq pos (1+ pos))))
           ((string-prefix-p "+" l)
            (unless (string-prefix-p "+++ " l)
              (push (substring l 1) plus)))
           ((string-prefix-p "\\" l)
            ;; "\ No newline at end of file": the previous line lacks it.
            (let ((cell (if plus plus (if minus minus out))))
              (when (and cell (string-suffix-p "\n" (car cell)))
                (setcar cell (substring (car cell) 0 -1))))))))
      (flush)
      (when ok
        (while (< pos (length old)) (push (aref old pos) out) (setq pos (1+ pos)))
        (apply #'concat (nreverse out))))))

(defun gemini-companion-diff--mode-for (path)
  "Turn on the major mode for PATH in the current buffer."
  (let ((mode (assoc-default path auto-mode-alist #'string-match)))
    (when (and (consp mode) (null (car mode))) (setq mode (cadr mode)))
    (when (and mode (symbolp mode) (fboundp mode))
      (with-demoted-errors "gemini-companion: %S" (funcall mode)))))

(defun gemini-companion-diff--fill (proposed original unified)
  "Fill the current proposal buffer with PROPOSED against ORIGINAL (UNIFIED diff)."
  (let* ((inhibit-read-only t)
         (merged (and original unified (> (length unified) 0)
                      (gemini-companion-diff-merge-text
                       original unified (if (gemini-companion-diff--get :disk) "on disk now" "current")))))
    ;; Show hunks only when taking every proposed side gives the proposal.
    (unless (and merged (equal (gemini-companion-diff--resolve
                                  merged (not (string-suffix-p "\n" proposed)))
                                 proposed))
      (setq merged nil))
    (erase-buffer)
    (insert (or merged proposed))
    (goto-char (point-min))
    (when merged
      (require 'smerge-mode)
      (smerge-mode 1)
      ;; At the first hunk (not with `smerge-next': it refines the hunk
      ;; word by word, slow on a large one).
      (when (re-search-forward smerge-begin-re nil t)
        (goto-char (match-beginning 0))))
    (set-buffer-modified-p nil)))

(defun gemini-companion-diff--label ()
  "Update the header line of the current proposal buffer."
  (require 'smerge-mode)                ; its keys are shown
  (let* ((parts nil)
         (v gemini-companion-diff--view)
         (queued (or (plist-get v :queued) 0)))
    (when (plist-get v :outside) (push "outside the workspace" parts))
    (when (plist-get v :orphaned) (push "ORPHANED: its Gemini CLI is gone, accepting writes nothing" parts))
    (pcase (plist-get v :disk)
      ("changedOnDisk" (push "CHANGED ON DISK" parts))
      ("deletedOnDisk" (push "DELETED ON DISK" parts)))
    (when (> queued 0) (push (format "%d more queued" queued) parts))
    (when (plist-get v :new-file) (push "new file" parts))
    (setq header-line-format
          (concat (propertize (format " Gemini proposes %s" (file-name-nondirectory (plist-get v :path)))
                              'face 'bold)
                  (if (plist-get v :owner) (format " (CLI %s)" (plist-get v :owner)) "")
                  (mapconcat (lambda (p) (propertize (format " [%s]" p) 'face 'warning)) (nreverse parts) "")
                  (substitute-command-keys
                   "  \\<gemini-companion-proposal-mode-map>\\[gemini-companion-accept] accept  \\[gemini-companion-reject] reject  \\<smerge-mode-map>\\[smerge-next] next hunk  \\[smerge-keep-upper] keep current  \\[smerge-keep-lower] keep proposed")))
    (force-mode-line-update)))

(defun gemini-companion-diff--open (params)
  "Show the proposal of a `diff/open' request's PARAMS; return its buffer."
  (let* ((path (plist-get params :filePath))
         (old (gemini-companion-diff-buffer path))
         (origin (selected-window))
         (buffer (generate-new-buffer (format "*Gemini proposal: %s*" (file-name-nondirectory path)))))
    (when old (gemini-companion-diff--teardown old))
    (with-current-buffer buffer
      (gemini-companion-diff--mode-for path)
      (setq gemini-companion-diff--view
            (list :path path :diff-id (plist-get params :diffId) :origin origin
                  :owner (plist-get params :owner) :queued (plist-get params :queued)
                  :outside (eq (plist-get params :outsideWorkspace) t)
                  :new-file (null (plist-get params :originalContent))
                  :no-final-newline (not (string-suffix-p "\n" (plist-get params :newContent)))))
      (gemini-companion-diff--fill (plist-get params :newContent)
                                   (plist-get params :originalContent)
                                   (plist-get params :unifiedDiff))
      (gemini-companion-proposal-mode 1)
      (add-hook 'kill-buffer-hook #'gemini-companion-diff--killed nil t)
      (gemini-companion-diff--label))
    (puthash path buffer gemini-companion-diff--views)
    (let ((window (display-buffer buffer '(nil (inhibit-same-window . t)))))
      (when (and window gemini-companion-diff-select-window)
        (select-window window)))
    (when (stringp (plist-get params :notice))
      (gemini-companion-link-message "warn" (plist-get params :notice)))
    (message "%s" (substitute-command-keys
                   (format "Gemini proposes a change to %s: \\<gemini-companion-proposal-mode-map>\\[gemini-companion-accept] accepts (with your edits), \\[gemini-companion-reject] rejects"
                           (file-name-nondirectory path))))
    buffer))

(defun gemini-companion-diff--teardown (buffer)
  "Close the proposal BUFFER without telling the sidecar."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (gemini-companion-diff--set :done t)
      (let ((path (gemini-companion-diff--get :path)))
        (when (eq (gethash path gemini-companion-diff--views) buffer)
          (remhash path gemini-companion-diff--views))))
    (let ((origin (buffer-local-value 'gemini-companion-diff--view buffer))
          (was-here (eq (window-buffer (selected-window)) buffer)))
      (setq origin (plist-get origin :origin))
      (dolist (window (get-buffer-window-list buffer nil t))
        (ignore-errors (quit-window nil window)))
      ;; Back to where the user was, e.g. Gemini CLI's terminal.
      (when (and was-here (window-live-p origin))
        (select-window origin)))
    (let ((kill-buffer-query-functions nil))
      (kill-buffer buffer))))

(defun gemini-companion-diff--resolve (text &optional no-final-newline)
  "TEXT with every smerge conflict resolved to its lower (Gemini's) side.
With NO-FINAL-NEWLINE, drop the final newline the markers needed."
  (require 'smerge-mode)
  (with-temp-buffer
    (insert text)
    (goto-char (point-min))
    (while (re-search-forward smerge-begin-re nil t)
      (smerge-match-conflict)
      (smerge-keep-lower))
    (when (and no-final-newline (eq (char-before (point-max)) ?\n))
      (delete-region (1- (point-max)) (point-max)))
    (buffer-string)))

(defun gemini-companion-diff-content (&optional buffer)
  "The accepted text of proposal BUFFER: unresolved hunks take Gemini's side."
  (with-current-buffer (or buffer (current-buffer))
    (gemini-companion-diff--resolve
     (buffer-substring-no-properties (point-min) (point-max))
     (plist-get gemini-companion-diff--view :no-final-newline))))

(defun gemini-companion-diff--reload-when-written (path)
  "Revert the unmodified buffers of PATH as Gemini CLI writes it.
Watches for 30 seconds, and for 3 seconds after the last change (a
write may come in several steps: truncate, then write)."
  (let* ((stamp (lambda () (let ((a (file-attributes path)))
                              (list (file-attribute-modification-time a) (file-attribute-size a)))))
         (previous (funcall stamp))
         (start previous)
         (deadline (+ (float-time) 30))
         (warned nil)
         (changed nil)
         (timer nil))
    (setq timer
          (run-with-timer
           0.05 0.05
           (lambda ()
             (let ((now (funcall stamp)))
               ;; The same on two looks in a row: this write is over.
               (when (and (equal now previous) (not (equal now start)))
                 (dolist (b (buffer-list))
                   (when (and (buffer-file-name b)
                              (equal (ignore-errors (file-truename (buffer-file-name b))) path)
                              (not (verify-visited-file-modtime b)))
                     (with-current-buffer b
                       (cond ((not (buffer-modified-p)) (revert-buffer t t t))
                             ((not warned)
                              (setq warned t)
                              (message "%s was changed by Gemini CLI but has unsaved changes here"
                                       (file-name-nondirectory path))))))))
               (unless (equal now previous) (setq changed (float-time)))
               (setq previous now)
               (when (or (> (float-time) deadline)
                         (and changed (> (- (float-time) changed) 3)))
                 (cancel-timer timer))))))))

(defun gemini-companion-diff--decide (buffer accepted)
  "Send the user's decision on proposal BUFFER (ACCEPTED or not) and close it."
  (with-current-buffer buffer
    (let ((path (gemini-companion-diff--get :path))
          (id (gemini-companion-diff--get :diff-id))
          (disk (gemini-companion-diff--get :disk)))
      (cond
       ((gemini-companion-diff--get :done) nil)
       ((not (gemini-companion-link-running-p))
        ;; Nothing could take the decision: keep the proposal as it is.
        (user-error "The Gemini companion is not running: nothing was sent"))
       ((and accepted (member disk '("changedOnDisk" "deletedOnDisk"))
             (not (gemini-companion-diff--get :confirmed)))
        (gemini-companion-diff--set :confirmed t)
        (message "%s %s on disk since Gemini proposed this change; accept again to overwrite it, or reject"
                 (file-name-nondirectory path)
                 (if (equal disk "deletedOnDisk") "was deleted" "changed")))
       (accepted
        (let ((content (gemini-companion-diff-content)))
          (gemini-companion-diff--set :done t)
          (puthash path (cons id content) gemini-companion-diff--sent)
          (gemini-companion-diff--reload-when-written path)
          (gemini-companion-link-notify
           "diff/accepted"
           (append (list :filePath path :content content)
                   (and id (list :diffId id))
                   (and (gemini-companion-diff--get :confirmed) (list :overDiskChange t))))
          (gemini-companion-diff--teardown buffer)))
       (t
        (gemini-companion-diff--set :done t)
        (gemini-companion-link-notify "diff/rejected"
                                      (append (list :filePath path) (and id (list :diffId id))))
        (gemini-companion-diff--teardown buffer))))))

(defun gemini-companion-diff--killed ()
  "A proposal buffer is being killed: reject it unless it was decided."
  (unless (or (gemini-companion-diff--get :done) (not (gemini-companion-link-running-p)))
    (gemini-companion-diff--decide (current-buffer) nil)))

(defun gemini-companion-diff--target ()
  "The proposal buffer of the current buffer, else the most recent one."
  (or (and gemini-companion-diff--view (current-buffer))
      (car (cl-remove-if-not (lambda (b) (buffer-local-value 'gemini-companion-diff--view b))
                             (buffer-list)))
      (user-error "No Gemini proposal is open")))

;;;###autoload
(defun gemini-companion-accept ()
  "Accept Gemini's proposal as shown here, with your edits.
Hunks left unresolved take Gemini's side."
  (interactive)
  (gemini-companion-diff--decide (gemini-companion-diff--target) t))

;;;###autoload
(defun gemini-companion-reject ()
  "Reject Gemini's proposal."
  (interactive)
  (gemini-companion-diff--decide (gemini-companion-diff--target) nil))

(defun gemini-companion-diff--keep-text (path content)
  "Show CONTENT, accepted for PATH but not written, in a buffer to save by hand."
  (let ((buffer (generate-new-buffer (format "*Gemini unwritten: %s*" (file-name-nondirectory path)))))
    (with-current-buffer buffer
      (insert content)
      (gemini-companion-diff--mode-for path)
      (setq header-line-format
            (propertize (format " Not written by Gemini CLI: %s (C-x C-w saves it)" path) 'face 'warning)))
    (display-buffer buffer)
    buffer))

(defun gemini-companion-diff-state (params)
  "Handle a `diff/state' notification's PARAMS."
  (let* ((path (plist-get params :filePath))
         (state (plist-get params :state))
         (id (plist-get params :diffId))
         (buffer (gemini-companion-diff-buffer path))
         (content (plist-get params :content))
         (level "warn"))
    (when (and buffer id (not (equal state "queued"))
               (let ((mine (buffer-local-value 'gemini-companion-diff--view buffer)))
                 (and (plist-get mine :diff-id) (not (equal (plist-get mine :diff-id) id)))))
      (setq buffer nil))
    (pcase state
      ("queued"
       (setq level "info")
       (when buffer
         (with-current-buffer buffer (gemini-companion-diff--set :queued (or (plist-get params :queued) 0)))))
      ("orphaned" (when buffer (with-current-buffer buffer (gemini-companion-diff--set :orphaned t))))
      ((or "changedOnDisk" "deletedOnDisk" "unchangedOnDisk")
       (when (equal state "unchangedOnDisk") (setq level "info"))
       (when buffer
         (with-current-buffer buffer
           (gemini-companion-diff--set :disk state)
           (gemini-companion-diff--set :confirmed nil)
           ;; Show the file as it is now, unless the user has edited here.
           (unless (buffer-modified-p)
             (gemini-companion-diff--fill (gemini-companion-diff-content)
                                          (or (plist-get params :diskContent) "")
                                          (plist-get params :unifiedDiff))))))
      ("needsConfirmation"
       (let ((last (gethash path gemini-companion-diff--sent)))
         (when (and (not buffer) last (or (null (car last)) (equal (car last) id)))
           (remhash path gemini-companion-diff--sent)
           (setq buffer (gemini-companion-diff--open
                         (list :filePath path :newContent (cdr last) :diffId id
                               :originalContent (and (file-readable-p path)
                                                     (with-temp-buffer
                                                       (insert-file-contents path)
                                                       (buffer-string)))))))
         (when buffer
           (with-current-buffer buffer
             (unless (gemini-companion-diff--get :disk) (gemini-companion-diff--set :disk "changedOnDisk"))
             (gemini-companion-diff--set :confirmed t)))))
      ((or "expired" "undelivered")
       (remhash path gemini-companion-diff--sent)
       (when (stringp content) (gemini-companion-diff--keep-text path content))))
    (when buffer (with-current-buffer buffer (gemini-companion-diff--label)))
    (let ((msg (plist-get params :message)))
      (when (and (stringp msg) (> (length msg) 0))
        (gemini-companion-link-message level msg)))))

(defun gemini-companion-diff--check-path (params)
  "Signal a JSON-RPC error unless PARAMS has an absolute :filePath."
  (let ((path (plist-get params :filePath)))
    (unless (and (stringp path) (file-name-absolute-p path))
      (jsonrpc-error :code -32602 :message "filePath must be an absolute path"))))

(gemini-companion-link-on
 "diff/open"
 (lambda (params)
   (gemini-companion-diff--check-path params)
   (unless (stringp (plist-get params :newContent))
     (jsonrpc-error :code -32602 :message "newContent must be a string"))
   (let ((original (plist-get params :originalContent)))
     (unless (or (null original) (stringp original))
       (jsonrpc-error :code -32602 :message "originalContent must be a string or null")))
   (condition-case err
       (gemini-companion-diff--open params)
     (error (jsonrpc-error :code -32603
                           :message (format "cannot open the diff view: %s" (error-message-string err)))))
   (make-hash-table :size 1)))

(gemini-companion-link-on
 "diff/close"
 (lambda (params)
   (gemini-companion-diff--check-path params)
   (let ((buffer (gemini-companion-diff-buffer (plist-get params :filePath))))
     (if (not buffer)
         (list :content nil)
       (prog1 (list :content (gemini-companion-diff-content buffer))
         (gemini-companion-diff--teardown buffer))))))

(gemini-companion-link-on
 "diff/state"
 (lambda (params)
   (when (stringp (plist-get params :filePath))
     (gemini-companion-diff-state params))))

(defun gemini-companion-diff-close-all (up)
  "When the sidecar stopped (UP is nil), close every proposal."
  (unless up
    (let ((buffers (mapcar #'gemini-companion-diff-buffer (gemini-companion-diff-views))))
      (when (delq nil buffers)
        (mapc #'gemini-companion-diff--teardown (delq nil buffers))
        (message "The open Gemini proposals were closed: the sidecar stopped")))))

(add-hook 'gemini-companion-link-ready-functions #'gemini-companion-diff-close-all)

(provide 'gemini-companion-diff)
;;; gemini-companion-diff.el ends here

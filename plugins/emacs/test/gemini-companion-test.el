;;; gemini-companion-test.el --- ERT tests for gemini-companion -*- lexical-binding: t -*-

;; This file is not part of GNU Emacs.

;;; Commentary:

;; Run from the repository root:
;;
;;   GIC_BINARY=$PWD/bin/gemini-ide-companion-test-race \
;;   GEMINI_COMPANION_TRANSCRIPTS=link/protocol/transcripts:tests/emacs/transcripts \
;;   emacs -Q --batch -L plugins/emacs -l plugins/emacs/test/gemini-companion-test.el \
;;     -f ert-run-tests-batch-and-exit
;;
;; Tests that need the sidecar (GIC_BINARY) are skipped without it.  The
;; transcript replay plays the sidecar inside Emacs: it feeds the
;; package the sidecar's messages, performs the user's actions through
;; the package's own commands, and checks every message the package sends.

;;; Code:

(require 'ert)
(require 'json)
(require 'gemini-companion)

(defconst gemini-companion-test-timeout 20 "Seconds to wait for anything.")

(defun gemini-companion-test-wait (what pred &optional timeout)
  "Wait until PRED returns non-nil (describing WHAT) and return its value."
  (let ((deadline (+ (float-time) (or timeout gemini-companion-test-timeout)))
        (value nil))
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (or value (ert-fail (format "waited %ss for %s" (or timeout gemini-companion-test-timeout) what)))))

(defmacro gemini-companion-test-with-dir (var &rest body)
  "Bind VAR to a new temporary directory (true name) around BODY."
  (declare (indent 1))
  `(let ((,var (file-name-as-directory (file-truename (make-temp-file "gct" t)))))
     (unwind-protect (progn ,@body)
       (delete-directory ,var t))))

;;; Pure functions

(ert-deftest gemini-companion-test-merge-text ()
  "Hunks of a unified diff become smerge conflicts; accepting takes Gemini's side."
  (let* ((orig "a\nb\nc\nd\n")
         (unified "--- a/x\n+++ b/x\n@@ -1,4 +1,4 @@\n a\n-b\n+B\n c\n d\n")
         (merged (gemini-companion-diff-merge-text orig unified "current")))
    (should (equal merged "a\n<<<<<<< current\nb\n=======\nB\n>>>>>>> proposed by Gemini\nc\nd\n"))
    (with-temp-buffer
      (insert merged)
      (should (equal (gemini-companion-diff-content) "a\nB\nc\nd\n"))))
  ;; Additions at the end, a file without a final newline, hunks far apart.
  (let* ((orig "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12")
         (unified (concat "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-1\n+one\n 2\n 3\n"
                          "@@ -10,3 +10,4 @@\n 10\n 11\n-12\n\\ No newline at end of file\n+12\n+13\n"))
         (merged (gemini-companion-diff-merge-text orig unified "current")))
    (with-temp-buffer
      (insert merged)
      (should (equal (gemini-companion-diff-content)
                     "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n"))))
  ;; A diff that does not fit the text is refused, not misapplied.
  (should-not (gemini-companion-diff-merge-text "a\n" "@@ -5,1 +5,1 @@\n-x\n+y\n" "current")))

(ert-deftest gemini-companion-test-proposal-buffer ()
  "A proposal shows hunks when its diff rebuilds it, else the proposal whole."
  (let ((open (gethash 'diff/open gemini-companion-link--handlers))
        (gemini-companion-diff-select-window nil))
    (dolist (case '(("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n" t)
                    ("x" nil)
                    ("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+Z\n b\n" nil)))
      (funcall open (list :filePath "/tmp/gct-none/f.txt" :newContent "A\nb\n"
                          :originalContent "a\nb\n" :unifiedDiff (car case) :diffId 1))
      (let ((buffer (gemini-companion-diff-buffer "/tmp/gct-none/f.txt")))
        (unwind-protect
            (with-current-buffer buffer
              (should (eq (and (string-match-p "^<<<<<<< " (buffer-string)) t) (cadr case)))
              (should (equal (gemini-companion-diff-content) "A\nb\n"))
              (should (string-match-p "C-c C-c accept" header-line-format)))
          (gemini-companion-diff--teardown buffer))))))

(ert-deftest gemini-companion-test-clip-and-columns ()
  "Selections are cut at a UTF-8 character boundary; columns count UTF-16 units."
  (should (equal (gemini-companion-context-clip "héllo" 3) "hé"))
  (should (equal (gemini-companion-context-clip "h😀" 3) "h"))
  (should (equal (gemini-companion-context-clip "abc" 10) "abc"))
  (should (= (gemini-companion-context-utf16-column "a😀b") 4)))

;;; Cursor reports as they reach the sidecar's pipe

(defun gemini-companion-test--reports (text select limit &optional raw)
  "The params of the reports `gemini-companion-context-flush' writes.
A file holds TEXT; SELECT is nil or (BEG . END), the region to select;
LIMIT is the policy's maxSelectionBytes.  The reports go to `cat',
which echoes them, and are read back from its output, as the sidecar
reads them: Content-Length bytes after the header.  With RAW non-nil,
return the body's bytes instead, with what follows them."
  (gemini-companion-test-with-dir dir
    (let* ((file (expand-file-name "sel.txt" dir))
           (out "")
           ;; Written as to the sidecar (`gemini-companion-link-start').
           (proc (make-process :name "gct-cat" :command '("cat") :connection-type 'pipe
                               :coding '(binary . utf-8-emacs-unix) :noquery t
                               :filter (lambda (_p chunk) (setq out (concat out chunk)))))
           (gemini-companion-link--state 'running)
           (gemini-companion-link--conn 'pipe)
           (gemini-companion-link--proc proc)
           (gemini-companion-log-events nil)
           (gemini-companion-link--policy (list :limits (list :maxSelectionBytes limit)))
           (gemini-companion-context--last nil)
           (transient-mark-mode t)
           (reports nil))
      (unwind-protect
          (progn
            ;; UTF-8, and raw bytes as they are (never a prompt for a coding).
            (let ((coding-system-for-write 'utf-8-emacs-unix)) (with-temp-file file (insert text)))
            (switch-to-buffer (let ((coding-system-for-read 'utf-8-unix)) (find-file-noselect file)))
            (deactivate-mark)
            (goto-char (point-min))
            (when select
              (goto-char (car select)) (set-mark (point)) (goto-char (cdr select)) (activate-mark))
            (gemini-companion-context-flush)
            (gemini-companion-test-wait
             "the report echoed" (lambda () (string-match "\\`Content-Length: \\([0-9]+\\)\r\n\r\n" out)))
            (let ((size (string-to-number (match-string 1 out))))
              (gemini-companion-test-wait "the whole body" (lambda () (>= (- (length out) (match-end 0)) size)))
              (setq reports (if raw
                                (cons (substring out (match-end 0) (+ (match-end 0) size))
                                      (substring out (+ (match-end 0) size)))
                              (json-parse-string (decode-coding-string (substring out (match-end 0) (+ (match-end 0) size)) 'utf-8)
                                                 :object-type 'alist)))))
        (kill-buffer (find-buffer-visiting file))
        (delete-process proc))
      reports)))

(ert-deftest gemini-companion-test-selection-report ()
  "The selected text reaches the pipe as JSON, whole or cut at a UTF-8 character."
  (let* ((text "say \"hi\"\\ to\n\ttab\x01 é😀 end\n")
         (all (gemini-companion-test--reports text (cons 1 (1+ (length text))) 65552)))
    (should (equal (alist-get 'method all) "context/fileFocused"))
    (should (equal (alist-get 'selectedText (alist-get 'params all)) text))
    (should (equal (alist-get 'line (alist-get 'cursor (alist-get 'params all))) 3)))
  ;; The emoji is bytes 16-19: a cut at 18 bytes drops it whole, at 19 keeps it.
  (let ((cut (gemini-companion-test--reports "say \"hi\"\\ to é😀 end" (cons 1 20) 18)))
    (should (equal (alist-get 'selectedText (alist-get 'params cut)) "say \"hi\"\\ to é")))
  (let ((cut (gemini-companion-test--reports "say \"hi\"\\ to é😀 end" (cons 1 20) 19)))
    (should (equal (alist-get 'selectedText (alist-get 'params cut)) "say \"hi\"\\ to é😀")))
  ;; A file that is not valid UTF-8: its raw bytes go out as they are, one
  ;; byte each, and Content-Length counts them so.
  (let* ((text (concat "é" (unibyte-string #xC8 #xFF) "z"))
         (got (gemini-companion-test--reports text (cons 1 5) 65552 t)))
    (should (string-suffix-p (concat "\"selectedText\":\"\303\251" (unibyte-string #xC8 #xFF) "z\"}}")
                             (car got)))
    (should (equal (cdr got) "")))
  (let ((none (gemini-companion-test--reports "abc\n" nil 65552)))
    (should-not (assq 'selectedText (alist-get 'params none)))
    (should (equal (alist-get 'character (alist-get 'cursor (alist-get 'params none))) 1))))

(ert-deftest gemini-companion-test-report-skips-modification-hooks ()
  "Writing a report runs no modification hook: nothing watches the work buffer.
Each change there would otherwise go through the hooks' machinery, and
a report makes a dozen changes while the cursor moves."
  (let* ((seen nil)
         (record (lambda (&rest _)
                   (when (equal (buffer-name) " *gemini-companion out*")
                     (push (buffer-name) seen))))
         (before-change-functions (list record))
         (after-change-functions (list record))
         (got (gemini-companion-test--reports "abc\nde\n" (cons 1 6) 65552)))
    (should (equal (alist-get 'selectedText (alist-get 'params got)) "abc\nd"))
    (should-not seen)))

(ert-deftest gemini-companion-test-flush-cancels-the-idle-report ()
  "A report made otherwise than by the idle timer cancels the timer's report."
  (let ((gemini-companion-context--timer nil)
        (gemini-companion-context--paused 0)
        (gemini-companion-context--due 0)
        (gemini-companion-context--late 0)
        (idle (length timer-idle-list)))
    (cl-letf (((symbol-function 'gemini-companion-link-running-p) (lambda () t)))
      ;; A command schedules the idle report (the cursor still moving) ...
      (setq gemini-companion-context--paused (+ (float-time) 60))
      (gemini-companion-context-command)
      (should (timerp gemini-companion-context--timer))
      (should (= (length timer-idle-list) (1+ idle)))
      ;; ... and a report made meanwhile (a buffer switch) takes it back.
      (gemini-companion-context-flush)
      (should-not gemini-companion-context--timer)
      (should (= (length timer-idle-list) idle)))))

;;; Transcript replay: this package against the sidecar's side of a transcript

(defclass gemini-companion-test-conn (gemini-companion-link-replies-later jsonrpc-connection)
  ((sent :initform nil :accessor gemini-companion-test-sent))
  "A connection whose other end is the replayer.")

(cl-defmethod jsonrpc-connection-send ((conn gemini-companion-test-conn) &rest args)
  "Record the message ARGS the package sends on CONN, as JSON text."
  (let ((method (plist-get args :method)))
    (when (and method (symbolp method))
      (setq args (plist-put args :method (symbol-name method)))))
  (let ((json (json-serialize (append '(:jsonrpc "2.0") args) :null-object nil :false-object :json-false)))
    (setf (gemini-companion-test-sent conn)
          (append (gemini-companion-test-sent conn) (list json)))))

(cl-defmethod jsonrpc-running-p ((_conn gemini-companion-test-conn)) t)

(defvar gemini-companion-test--conn nil "The replay's connection.")
(defvar gemini-companion-test--on-shutdown nil)

(defun gemini-companion-test--parse (json)
  "JSON text as alists, with :null and :false kept."
  (json-parse-string json :object-type 'alist :array-type 'array :null-object :null :false-object :false))

(defvar gemini-companion-test--captures nil
  "Key -> value last matched by a placeholder (alist), for lines sent later.")

(defun gemini-companion-test--placeholder-p (v)
  "Non-nil when V is a transcript placeholder."
  (member v '("<any>" "<string>" "<number>" "<id>")))

(defun gemini-companion-test--match (want got &optional key caps)
  "Whether GOT matches transcript value WANT (under KEY).
CAPS is a cons whose car collects (KEY . VALUE) of matched placeholders."
  (cond
   ((gemini-companion-test--placeholder-p want)
    (and (pcase want
           ("<any>" t)
           ("<string>" (stringp got))
           ("<number>" (numberp got))
           ("<id>" (or (numberp got) (stringp got))))
         (progn (when (and caps key) (push (cons key got) (car caps))) t)))
   ((and (consp want) (consp (car want)) (symbolp (caar want)))
    (and (listp got)
         (cl-every (lambda (kv)
                     (let ((cell (assq (car kv) got)))
                       (and cell (gemini-companion-test--match (cdr kv) (cdr cell) (car kv) caps))))
                   want)))
   ((null want) (listp got))            ; {} matches any object
   ((and (vectorp want) (vectorp got))
    (and (= (length want) (length got))
         (cl-every (lambda (pair) (gemini-companion-test--match (car pair) (cdr pair) key caps))
                   (cl-mapcar #'cons want got))))
   (t (equal want got))))

(defun gemini-companion-test--fill (value &optional key)
  "VALUE (a sidecar line) with its placeholders filled in, under KEY."
  (cond
   ((gemini-companion-test--placeholder-p value)
    (let ((cap (assq key gemini-companion-test--captures)))
      (cond (cap (cdr cap))
            ((equal value "<number>") 1)
            ((equal value "<string>") "x")
            (t :null))))
   ((and (consp value) (consp (car value)) (symbolp (caar value)))
    (mapcar (lambda (kv) (cons (car kv) (gemini-companion-test--fill (cdr kv) (car kv)))) value))
   ((vectorp value) (vconcat (mapcar (lambda (v) (gemini-companion-test--fill v key)) value)))
   (t value)))

(defun gemini-companion-test--subst (text vars)
  "TEXT with each ${NAME} of VARS (alist of NAME . PATH) replaced, JSON-escaped."
  (dolist (v vars text)
    (let ((escaped (substring (json-serialize (cdr v)) 1 -1)))
      (setq text (string-replace (format "${%s}" (car v)) escaped text)))))

(defun gemini-companion-test--prod (msg vars)
  "Make the package send plugin message MSG (an alist) through its own code."
  (let* ((method (alist-get 'method msg))
         (params (alist-get 'params msg))
         (path (and (listp params) (alist-get 'path params))))
    (pcase method
      ((or "context/fileFocused" "context/selectionChanged")
       (when (stringp path)
         (unless (file-exists-p path) (write-region "line one\nline two\nline three\n" nil path))
         (switch-to-buffer (find-file-noselect path))
         (deactivate-mark)
         (let ((cursor (alist-get 'cursor params)))
           (when (listp cursor)
             (goto-char (point-min))
             (forward-line (1- (or (alist-get 'line cursor) 1)))
             (forward-char (min (1- (or (alist-get 'character cursor) 1))
                                (- (line-end-position) (point))))))
         (let ((sel (alist-get 'selectedText params)))
           (when (and (stringp sel) (search-backward sel nil t))
             (set-mark (point)) (goto-char (+ (point) (length sel))) (activate-mark)))
         (gemini-companion-context-flush)))
      ("context/fileClosed"
       (let ((b (find-buffer-visiting path))) (when b (kill-buffer b))))
      ("terminal/env" (gemini-companion-link-terminal-env #'ignore))
      ((guard (and (stringp method) (alist-get 'id msg)))
       (gemini-companion-link-request method (gemini-companion-test--to-plist params vars) #'ignore))
      ((guard (stringp method))
       (gemini-companion-link-notify method (gemini-companion-test--to-plist params vars))))))

(defun gemini-companion-test--to-plist (value _vars)
  "VALUE (parsed alists) as the plists jsonrpc uses."
  (if (or (null value) (eq value :null))
      nil
    (json-parse-string (json-serialize value :null-object :null :false-object :false)
                       :object-type 'plist :null-object nil :false-object :json-false)))

(defun gemini-companion-test--user (action)
  "Perform the user's ACTION (an alist) through the package's commands."
  (let* ((what (alist-get 'action action))
         (buffer (or (car (delq nil (mapcar #'gemini-companion-diff-buffer (gemini-companion-diff-views))))
                     (ert-fail (format "user %s: no proposal is open" what)))))
    (with-current-buffer buffer
      (pcase what
        ("accept" (gemini-companion-accept))
        ("reject" (gemini-companion-reject))
        ("edit" (let ((inhibit-read-only t))
                  (erase-buffer) (insert (alist-get 'content action))))
        ("close" (kill-buffer buffer))
        ("acceptOverDiskChange" (gemini-companion-accept)
         (when (buffer-live-p buffer) (gemini-companion-accept)))
        (_ (ert-fail (format "unknown user action %s" what)))))))

(defun gemini-companion-test--connect (_name _command)
  "Make the replay's connection (replaces `gemini-companion-link--connect')."
  (setq gemini-companion-test--conn
        (gemini-companion-test-conn
         :name "replay"
         :events-buffer-scrollback-size 0
         :request-dispatcher (gemini-companion-link--dispatch 'request)
         :notification-dispatcher (gemini-companion-link--dispatch 'notification)))
  (setq gemini-companion-link--proc nil)
  gemini-companion-test--conn)

(defun gemini-companion-test-replay (file)
  "Replay transcript FILE against the package; fail on the first mismatch."
  (gemini-companion-test-with-dir dir
    (let* ((vars `(("workspace" . ,(directory-file-name dir))
                   ("file" . ,(concat dir "file.txt"))
                   ("file2" . ,(concat dir "file2.txt"))
                   ("file3" . ,(concat dir "file3.txt"))))
           (gemini-companion-link-connect-function #'gemini-companion-test--connect)
           ;; Never run: the connection above stands in for the process.
           (gemini-companion-sidecar-program (executable-find "true"))
           (gemini-companion-link-workspace-function (lambda () (list (directory-file-name dir))))
           (gemini-companion-context-delay 3600)
           (default-directory dir)
           (ids nil) (consumed nil) (next-id 9000) (n 0) (done-early nil)
           (plugin-pending nil) (sidecar-pending nil)
           (gemini-companion-test--captures nil)
           (lines (with-temp-buffer
                    (insert-file-contents file)
                    (split-string (buffer-string) "\n" t "[ \t\r]+"))))
      (write-region "one\ntwo\nthree\n" nil (cdr (assoc "file" vars)))
      (gemini-companion-context-enable t)
      (unwind-protect
          (dolist (line lines)
            (setq n (1+ n))
            (let* ((entry (gemini-companion-test--parse (gemini-companion-test--subst line vars)))
                   (who (if (memq n done-early) 'comment (caar entry))) (msg (cdar entry))
                   (where (format "%s line %d" (file-name-nondirectory file) n)))
              ;; A diff/close answered with null content while the view is
              ;; still open records a race: the user's decision (a later
              ;; `user' line before the next `sidecar' line) came first.
              (when (and (eq who 'sidecar) (equal (alist-get 'method msg) "diff/close"))
                (let ((later (nthcdr n lines)) (k n) (null-reply nil) (users nil))
                  (while (and later (not (eq (caar (gemini-companion-test--parse (car later))) 'sidecar)))
                    (setq k (1+ k))
                    (let* ((e (gemini-companion-test--parse (gemini-companion-test--subst (car later) vars)))
                           (m (cdar e)))
                      (pcase (caar e)
                        ('plugin (when (and (listp m) (alist-get 'id m) (not (alist-get 'method m))
                                            (eq (alist-get 'content (alist-get 'result m)) :null))
                                   (setq null-reply t)))
                        ('user (push (cons k m) users))))
                    (setq later (cdr later)))
                  (when (and null-reply users
                             (gemini-companion-diff-buffer (alist-get 'filePath (alist-get 'params msg))))
                    (dolist (u (nreverse users))
                      (push (car u) done-early)
                      (gemini-companion-test--user (cdr u))))))
              (pcase who
                ('comment nil)
                ('cli nil)
                ('plugin
                 ;; Prod the package unless it sends this message by itself
                 ;; (replies, decisions, initialize, shutdown).
                 (let ((method (alist-get 'method msg)))
                   (cond ((and (null method) (alist-get 'id msg)) nil)
                         ((member method '("initialize" "diff/accepted" "diff/rejected")) nil)
                         ((equal method "shutdown") (gemini-companion-link-stop))
                         (t (gemini-companion-test--prod msg vars))))
                 (when (equal (alist-get 'method msg) "initialize")
                   ;; The first one; after a restart the package starts
                   ;; the sidecar itself, after the policy's delay.
                   (unless (or gemini-companion-test--conn (timerp gemini-companion-link--timer))
                     (gemini-companion-link-start)))
                 (let* ((want-id (alist-get 'id msg))
                        (request (alist-get 'method msg))
                        ;; A reply carries the id of the earliest unanswered
                        ;; request of the replayer (or the one a literal id names).
                        (expect-id (and want-id (not request)
                                        (if (equal want-id "<id>") (car sidecar-pending)
                                          (cdr (assoc want-id ids)))))
                        (body (assq-delete-all 'id (copy-sequence msg)))
                        (found
                         (gemini-companion-test-wait
                          (format "%s: the package to send %s; it sent %S (matched %S)" where line
                                  (and gemini-companion-test--conn
                                       (gemini-companion-test-sent gemini-companion-test--conn))
                                  (reverse consumed))
                          (lambda ()
                            (let ((sent (and gemini-companion-test--conn
                                             (gemini-companion-test-sent gemini-companion-test--conn)))
                                  (i 0) (hit nil))
                              (while (and (not hit) (< i (length sent)))
                                (let ((got (gemini-companion-test--parse (nth i sent)))
                                      (caps (list nil)))
                                  (when (and (not (memq i consumed))
                                             (eq (null want-id) (null (assq 'id got)))
                                             (or (not expect-id) (equal expect-id (alist-get 'id got)))
                                             (gemini-companion-test--match body got nil caps))
                                    (setq gemini-companion-test--captures
                                          (append (car caps) gemini-companion-test--captures))
                                    (setq hit (cons i got))))
                                (setq i (1+ i)))
                              hit))
                          5))
                        (got-id (alist-get 'id (cdr found))))
                   (push (car found) consumed)
                   (cond (request
                          (when want-id
                            (setq plugin-pending (append plugin-pending (list got-id)))
                            (unless (equal want-id "<id>") (push (cons want-id got-id) ids))))
                         (want-id (setq sidecar-pending (delete got-id sidecar-pending))))))
                ('sidecar
                 (let* ((id (alist-get 'id msg))
                        (real (cond ((null id) nil)
                                    ((alist-get 'method msg)
                                     (let ((mine (cl-incf next-id)))
                                       (setq sidecar-pending (append sidecar-pending (list mine)))
                                       (unless (equal id "<id>") (push (cons id mine) ids))
                                       mine))
                                    ((and (not (equal id "<id>")) (assoc id ids)) (cdr (assoc id ids)))
                                    (t (pop plugin-pending))))
                        (filled (gemini-companion-test--fill (assq-delete-all 'id (copy-sequence msg))))
                        (out (if real (cons (cons 'id real) filled) filled)))
                   (with-temp-buffer
                     (jsonrpc-connection-receive
                      gemini-companion-test--conn
                      (gemini-companion-test--to-plist out vars)))))
                ('user (gemini-companion-test--user msg))
                ('restart
                 (let ((conn gemini-companion-test--conn))
                   (setq gemini-companion-test--conn nil consumed nil plugin-pending nil sidecar-pending nil)
                   (gemini-companion-link--on-exit conn)))
                (_ (ert-fail (format "%s: unknown actor %s" where who))))))
        (gemini-companion-context-enable nil)
        (when (and gemini-companion-test--conn
                   (eq gemini-companion-test--conn gemini-companion-link--conn))
          (setq gemini-companion-link--state 'stopping)
          (gemini-companion-link--on-exit gemini-companion-test--conn))
        (setq gemini-companion-test--conn nil)
        (dolist (b (buffer-list))
          (when (or (buffer-local-value 'gemini-companion-diff--view b)
                    (string-prefix-p dir (or (buffer-file-name b) "")))
            (with-current-buffer b (set-buffer-modified-p nil))
            (let ((kill-buffer-hook nil)) (kill-buffer b))))
        (clrhash gemini-companion-diff--views)))))

(defun gemini-companion-test-transcripts ()
  "The transcript files named by GEMINI_COMPANION_TRANSCRIPTS (folders)."
  (let ((dirs (split-string (or (getenv "GEMINI_COMPANION_TRANSCRIPTS") "") path-separator t)))
    (cl-loop for d in dirs
             when (file-directory-p d)
             append (cl-remove-if
                     (lambda (f) (string-prefix-p "sidecar-" (file-name-nondirectory f)))
                     (directory-files d t "\\.jsonl\\'")))))

(ert-deftest gemini-companion-test-replay-transcripts ()
  "Every transcript replays: the package sends what a plugin must send."
  (let ((files (gemini-companion-test-transcripts)))
    (unless files (ert-skip "GEMINI_COMPANION_TRANSCRIPTS names no transcripts"))
    (dolist (f files)
      (message "replaying %s" f)
      (gemini-companion-test-replay f))))

;;; Answers given later (the editor tools that wait for a language server)

(defvar eglot-advertise-cancellation)

(defmacro gemini-companion-test-with-later (spec &rest body)
  "Run BODY with a replay connection as the link's and a later handler.
SPEC is (CONN METHOD HANDLER): CONN is bound to the connection, METHOD
\(a string) is answered by HANDLER with `gemini-companion-link-on-later'."
  (declare (indent 1))
  (let ((conn (nth 0 spec)) (method (nth 1 spec)) (handler (nth 2 spec)))
    `(let* ((,conn (gemini-companion-test-conn :name "later" :events-buffer-scrollback-size 0
                                                :request-dispatcher (gemini-companion-link--dispatch 'request)
                                                :notification-dispatcher (gemini-companion-link--dispatch 'notification)))
            (gemini-companion-link--conn ,conn)
            (gemini-companion-link--later-handlers (make-hash-table :test #'eq)))
       (gemini-companion-link-on-later ,method ,handler)
       ,@body)))

(defun gemini-companion-test--sidecar-asks (conn id method)
  "Make CONN receive request METHOD with ID from the sidecar."
  (with-temp-buffer
    (jsonrpc-connection-receive conn (list :jsonrpc "2.0" :id id :method method :params '(:path "/x")))))

(defun gemini-companion-test--replies (conn id)
  "The replies to request ID that the package sent on CONN, parsed."
  (cl-remove-if-not (lambda (m) (and (equal (alist-get 'id m) id) (or (assq 'result m) (assq 'error m))))
                    (mapcar #'gemini-companion-test--parse (gemini-companion-test-sent conn))))

(ert-deftest gemini-companion-test-later-reply-once ()
  "A request answered later gets one reply, with its id, when the handler is done."
  (let ((reply nil))
    (gemini-companion-test-with-later (conn "test/later" (lambda (_params r) (setq reply r)))
      (gemini-companion-test--sidecar-asks conn 7 "test/later")
      (should (functionp reply))
      ;; Nothing is sent while the handler works, not even a placeholder.
      (should (null (gemini-companion-test-sent conn)))
      (funcall reply nil '(:answer 42))
      (funcall reply '(:code -32603 :message "too late") nil)
      (let ((replies (gemini-companion-test--replies conn 7)))
        (should (= (length replies) 1))
        (should (equal (alist-get 'answer (alist-get 'result (car replies))) 42))
        (should-not (assq 'error (car replies))))))
  ;; A handler that answers before it returns is answered once, too.
  (gemini-companion-test-with-later (conn "test/now" (lambda (_params r) (funcall r nil '(:n 1)) (funcall r nil '(:n 2))))
    (gemini-companion-test--sidecar-asks conn 8 "test/now")
    (let ((replies (gemini-companion-test--replies conn 8)))
      (should (= (length replies) 1))
      (should (equal (alist-get 'n (alist-get 'result (car replies))) 1))))
  ;; One that signals before it returns answers with its error at once,
  ;; and the link's guard adds nothing after it.
  (let ((gemini-companion-link--policy '(:limits (:editorRequestTimeoutMs 600))))
    (gemini-companion-test-with-later (conn "test/bad" (lambda (_params _r) (jsonrpc-error :code -32602 :message "line must be 1 or more")))
      (gemini-companion-test--sidecar-asks conn 9 "test/bad")
      (let ((replies (gemini-companion-test--replies conn 9)))
        (should (= (length replies) 1))
        (should (equal (alist-get 'error (car replies)) '((code . -32602) (message . "line must be 1 or more")))))
      (sleep-for 0.7)
      (should (= (length (gemini-companion-test--replies conn 9)) 1)))))

(ert-deftest gemini-companion-test-later-guard ()
  "A handler that never answers: the link answers before the sidecar's deadline."
  (let ((gemini-companion-link--policy '(:limits (:editorRequestTimeoutMs 600)))
        (reply nil))
    (gemini-companion-test-with-later (conn "test/never" (lambda (_params r) (setq reply r)))
      (gemini-companion-test--sidecar-asks conn 5 "test/never")
      (should (null (gemini-companion-test--replies conn 5)))
      (gemini-companion-test-wait "the guard's answer" (lambda () (gemini-companion-test--replies conn 5)) 5)
      (funcall reply nil '(:late t))
      (let ((replies (gemini-companion-test--replies conn 5)))
        (should (= (length replies) 1))
        (should (equal (alist-get 'error (car replies))
                       '((code . -32011) (message . "Emacs did not finish test/never in time"))))))))

(defclass gemini-companion-test-server (jsonrpc-connection)
  ((sent :initform nil :accessor gemini-companion-test-server-sent))
  "A language server played by the test: it keeps what it is sent.")

(cl-defmethod jsonrpc-connection-send ((conn gemini-companion-test-server) &rest args)
  "Keep ARGS, a message to the language server CONN."
  (setf (gemini-companion-test-server-sent conn) (append (gemini-companion-test-server-sent conn) (list args))))

(defmacro gemini-companion-test-with-stuck-server (spec &rest body)
  "Run BODY with a language server that reads everything and never answers.
SPEC is (SERVER LOG PROC): SERVER is bound to its connection, named
\"stuck\", LOG to the file of all it was sent, PROC to its process."
  (declare (indent 1))
  (let ((server (nth 0 spec)) (log (nth 1 spec)) (proc (nth 2 spec)))
    `(gemini-companion-test-with-dir dir
       (let* ((,log (expand-file-name "received" dir))
              (,proc nil)
              (,server (jsonrpc-process-connection
                        :name "stuck" :events-buffer-scrollback-size 0
                        :process (lambda ()
                                   (setq ,proc (make-process
                                                :name "stuck" :connection-type 'pipe :noquery t
                                                :command (list "sh" "-c" (concat "exec cat >" (shell-quote-argument ,log)))))))))
         (ignore ,proc)
         (unwind-protect (progn ,@body)
           (ignore-errors (jsonrpc-shutdown ,server t)))))))

(defun gemini-companion-test--ask (server method)
  "Ask SERVER METHOD as the editor tools do; return a cell the answers gather in."
  (let ((answers (list nil)))
    (gemini-companion-tools--ask server method '(:textDocument (:uri "file:///x"))
                                 (lambda (err result) (push (list err result) (car answers)))
                                 (lambda (result) (list :got result)))
    answers))

(ert-deftest gemini-companion-test-tools-ask-answers ()
  "A language server's answer, converted, or its error, reaches REPLY once."
  (let* ((server (gemini-companion-test-server :name "ls" :events-buffer-scrollback-size 0))
         (ok (gemini-companion-test--ask server :textDocument/hover))
         (bad (gemini-companion-test--ask server :textDocument/definition))
         (sent (gemini-companion-test-server-sent server)))
    (should (equal (mapcar (lambda (m) (plist-get m :method)) sent) '(:textDocument/hover :textDocument/definition)))
    ;; Nothing is answered before the server does.
    (should (equal (car ok) nil))
    (jsonrpc-connection-receive server (list :id (plist-get (nth 0 sent) :id) :result '(:contents "doc")))
    (jsonrpc-connection-receive server (list :id (plist-get (nth 1 sent) :id) :error '(:code -32800 :message "busy")))
    (should (equal (car ok) '((nil (:got (:contents "doc"))))))
    (should (equal (car bad) '(((:code -32603 :message "ls: busy") nil))))
    ;; A conversion that fails is an error too, not silence.
    (let ((broken (list nil)))
      (gemini-companion-tools--ask server :textDocument/hover nil
                                   (lambda (err result) (push (list err result) (car broken)))
                                   (lambda (_result) (error "No such file")))
      (jsonrpc-connection-receive server (list :id (plist-get (car (last (gemini-companion-test-server-sent server))) :id)
                                               :result nil))
      (should (equal (car broken) '(((:code -32603 :message "No such file") nil)))))))

(ert-deftest gemini-companion-test-tools-ask-server-died ()
  "A language server that exits while Emacs waits: a clear error, once."
  (let ((gemini-companion-link--policy '(:limits (:editorRequestTimeoutMs 30000))))
    (gemini-companion-test-with-stuck-server (server log proc)
      (let ((answers (gemini-companion-test--ask server :textDocument/definition)))
        (gemini-companion-test-wait "the request to reach the server"
                                    (lambda () (and (file-exists-p log)
                                                    (with-temp-buffer (insert-file-contents log)
                                                                      (search-forward "textDocument/definition" nil t)))))
        (should (null (car answers)))
        (kill-process proc)
        (gemini-companion-test-wait "the answer" (lambda () (car answers)))
        (sleep-for 0.2)
        (should (equal (car answers)
                       '(((:code -32603 :message "stuck exited before it answered textDocument/definition") nil))))))))

(ert-deftest gemini-companion-test-tools-ask-deadline ()
  "A language server that does not answer in the budget: the deadline error, once.
Where jsonrpc tells the request's id (1.0.25 and later) and eglot
advertises cancellation, the server is told to cancel it, as eglot does."
  (let ((gemini-companion-link--policy '(:limits (:editorRequestTimeoutMs 1700)))
        (eglot-advertise-cancellation t))
    (gemini-companion-test-with-stuck-server (server log _proc)
      (let* ((probe-id (car-safe (jsonrpc-async-request server :probe nil :timeout 30)))
             (started (float-time))
             (answers (gemini-companion-test--ask server :textDocument/definition)))
        (gemini-companion-test-wait "the answer" (lambda () (car answers)) 10)
        (should (>= (- (float-time) started) 0.19))
        (should (equal (car answers)
                       '(((:code -32011 :message "stuck did not answer textDocument/definition in time; it may still be loading the workspace: try again") nil))))
        (if (not probe-id)
            (progn (sleep-for 0.2)
                   (should-not (with-temp-buffer (insert-file-contents log) (search-forward "cancelRequest" nil t))))
          (gemini-companion-test-wait "$/cancelRequest for it"
                                      (lambda () (with-temp-buffer
                                                   (insert-file-contents log)
                                                   (search-forward (format "\"$/cancelRequest\",\"params\":{\"id\":%d}" (1+ probe-id)) nil t)))))
        (sleep-for 0.2)
        (should (= (length (car answers)) 1))))))

;; `gemini-companion-tools--server' is called where eglot would say
;; which server manages the buffer; the tests give theirs.
(ert-deftest gemini-companion-test-tools-buffer-killed ()
  "A definition asked of a buffer killed before the server answered still gets its answer."
  (gemini-companion-test-with-dir dir
    (let* ((path (expand-file-name "notes.txt" dir))
           (server (gemini-companion-test-server :name "ls" :events-buffer-scrollback-size 0))
           (answers nil))
      (write-region "alpha\nbeta\ngamma\n" nil path)
      (cl-letf (((symbol-function 'gemini-companion-tools--server) (lambda () server)))
        (gemini-companion-tools-get-definition (list :path path :line 1 :character 1)
                                               (lambda (err result) (push (list err result) answers))))
      (should (null answers))
      (let ((request (car (gemini-companion-test-server-sent server))))
        (should (eq (plist-get request :method) :textDocument/definition))
        (kill-buffer (find-buffer-visiting path))
        (jsonrpc-connection-receive
         server (list :id (plist-get request :id)
                      :result (vector (list :uri (gemini-companion-tools--uri path)
                                            :range '(:start (:line 2 :character 0) :end (:line 2 :character 5)))))))
      (should (equal answers
                     `((nil (:locations [(:path ,path :range (:start (:line 3 :character 1) :end (:line 3 :character 6))
                                                :text "gamma")]))))))))

;;; Against the real sidecar

(defun gemini-companion-test-binary ()
  "The sidecar binary under test, or skip."
  (let ((bin (getenv "GIC_BINARY")))
    (unless (and bin (file-executable-p bin)) (ert-skip "GIC_BINARY is not set"))
    bin))

(defmacro gemini-companion-test-with-sidecar (dir &rest body)
  "Run BODY with the package on, its sidecar started in temporary DIR."
  (declare (indent 1))
  `(gemini-companion-test-with-dir ,dir
     (let* ((gemini-companion-sidecar-program (gemini-companion-test-binary))
            (process-environment (cons (concat "TMPDIR=" ,dir) process-environment))
            (gemini-companion-workspace-function (lambda () (list (directory-file-name ,dir))))
            (default-directory ,dir)
            (warning-minimum-log-level :emergency))
       (unwind-protect
           (progn
             (gemini-companion-mode 1)
             (gemini-companion-test-wait "the sidecar to start" #'gemini-companion-link-running-p)
             ,@body)
         (gemini-companion-mode -1)
         (gemini-companion-link-stop t)))))

(ert-deftest gemini-companion-test-sidecar-v2-handshake ()
  "The package speaks editor link v2 with LSP framing to the real sidecar."
  (gemini-companion-test-with-sidecar dir
    (let ((info (gemini-companion-link-info)))
      (should (equal (plist-get info :protocolVersion) 2))
      (should (file-exists-p (plist-get info :discoveryFile)))
      (should (plist-get (plist-get info :policy) :restart))
      (let ((st (gemini-companion-link-request-sync "status/get" nil 5)))
        (should (equal (append (plist-get st :workspaceFolders) nil) (list (directory-file-name dir))))))
    (let ((env nil))
      (gemini-companion-link-terminal-env (lambda (e) (setq env (or e '("none")))))
      (gemini-companion-test-wait "terminal/env" (lambda () env))
      (should (member (format "GEMINI_CLI_IDE_SERVER_PORT=%s" (plist-get (gemini-companion-link-info) :port)) env)))
    (should (string-match-p "\\`Gemini: " (gemini-companion-status-text)))))

(ert-deftest gemini-companion-test-sidecar-folders-change ()
  "A new workspace reaches the sidecar; terminals opened after it get its env."
  (gemini-companion-test-with-sidecar dir
    (let ((other (directory-file-name (expand-file-name "other" dir)))
          (env nil))
      (make-directory other)
      (gemini-companion-link-set-folders (list other))
      (gemini-companion-link-terminal-env (lambda (e) (setq env (or e '("none")))))
      (gemini-companion-test-wait "terminal/env" (lambda () env))
      (should (member (concat "GEMINI_CLI_IDE_WORKSPACE_PATH=" other) env))
      (gemini-companion-test-wait
       "workspace/envChanged"
       (lambda () (equal (plist-get (plist-get (gemini-companion-link-info) :env) :GEMINI_CLI_IDE_WORKSPACE_PATH)
                         other))))))

(defun gemini-companion-test--cli-env (backend)
  "Open the CLI in BACKEND; check its environment and that stopping ends it."
  (gemini-companion-test-with-sidecar dir
    (let* ((out (expand-file-name "env.txt" dir))
           (gemini-companion-terminal backend)
           ;; A stand-in CLI that starts a child and writes what it got.
           (gemini-companion-cli-command
            (list "sh" "-c" (format "sleep 300 & echo \"$GEMINI_CLI_IDE_SERVER_PORT $GEMINI_CLI_IDE_WORKSPACE_PATH $(pwd -P)\" > %s.tmp; mv %s.tmp %s; wait"
                                    out out out))))
      (unwind-protect
          (progn
            ;; Given in a buffer of the project; answers are read elsewhere.
            (with-temp-buffer
              (setq default-directory dir)
              (gemini-companion-cli))
            (gemini-companion-test-wait "the CLI's output" (lambda () (file-exists-p out)))
            (should (equal (with-temp-buffer (insert-file-contents out) (buffer-string))
                           (format "%s %s %s\n" (plist-get (gemini-companion-link-info) :port)
                                   (directory-file-name dir) (directory-file-name dir))))
            (let* ((proc (get-buffer-process gemini-companion--cli-buffer))
                   (pid (process-id proc))
                   ;; The child is forked before the output is written, but
                   ;; may not have become `sleep' yet.
                   (child (gemini-companion-test-wait
                           "the CLI's child"
                           (lambda ()
                             (let ((n (string-to-number
                                       (shell-command-to-string (format "pgrep -P %d sleep" pid)))))
                               (and (> n 0) n))))))
              (gemini-companion--stop-cli)
              ;; The shell and the child it started are both gone.
              (gemini-companion-test-wait "the CLI and its child to end"
                                          (lambda () (and (not (process-live-p proc))
                                                          (not (file-exists-p (format "/proc/%d" child))))))))
        ;; A failure above must not leave this CLI to the next test, which
        ;; would find it running and show it instead of starting its own.
        (when (buffer-live-p gemini-companion--cli-buffer)
          (let ((kill-buffer-query-functions nil))
            (kill-buffer gemini-companion--cli-buffer)))))))

(ert-deftest gemini-companion-test-cli-in-term ()
  "`gemini-companion-cli' in `term' gets the link's environment; stopping ends it all."
  (gemini-companion-test--cli-env 'ansi-term))

(ert-deftest gemini-companion-test-cli-in-vterm ()
  "The same in vterm, when installed."
  (unless (require 'vterm nil t) (ert-skip "vterm is not installed"))
  (gemini-companion-test--cli-env 'vterm))

(ert-deftest gemini-companion-test-sidecar-shutdown-removes-discovery ()
  "Turning the mode off stops the sidecar, which removes its discovery file."
  (gemini-companion-test-with-sidecar _dir
    (let ((file (plist-get (gemini-companion-link-info) :discoveryFile))
          (proc gemini-companion-link--proc))
      (gemini-companion-mode -1)
      (gemini-companion-test-wait "the sidecar to exit"
                                  (lambda () (and (not (process-live-p proc))
                                                  (eq (gemini-companion-link-state) 'stopped))))
      ;; Nothing of it is left in Emacs either.
      (should-not (cl-some (lambda (p) (string-prefix-p "gemini-companion" (process-name p)))
                           (process-list)))
      (should-not (file-exists-p file)))))

(ert-deftest gemini-companion-test-sidecar-restarts-per-policy ()
  "A sidecar that dies is restarted after the policy's delay, with the texts it sent."
  (gemini-companion-test-with-sidecar _dir
    (let ((first gemini-companion-link--proc)
          (messages nil))
      (cl-letf (((symbol-function 'gemini-companion-link-message)
                 (lambda (_level text) (push text messages))))
        (signal-process first 'SIGKILL)
        (gemini-companion-test-wait "a restart"
                                    (lambda () (and (gemini-companion-link-running-p)
                                                    (not (eq gemini-companion-link--proc first)))))
        (gemini-companion-test-wait "the restarted message"
                                    (lambda () (cl-some (lambda (m) (string-match-p "restarted" m)) messages))))
      (should (cl-some (lambda (m) (string-match-p "exited (.*); restarting it" m)) messages))
      (should (file-exists-p (plist-get (gemini-companion-link-info) :discoveryFile))))))

(ert-deftest gemini-companion-test-sidecar-fails-to-start ()
  "A sidecar that exits at once is reported with its last stderr line; no restart."
  (gemini-companion-test-with-dir dir
    (let* ((script (expand-file-name "broken-sidecar" dir))
           (gemini-companion-sidecar-program script)
           (messages nil) (err nil))
      (write-region "#!/bin/sh\necho 'boom: bad flag' >&2\nexit 2\n" nil script)
      (set-file-modes script #o755)
      (cl-letf (((symbol-function 'gemini-companion-link-message)
                 (lambda (_level text) (push text messages))))
        (gemini-companion-link-start (lambda (e) (setq err e)))
        (gemini-companion-test-wait "the failure" (lambda () err)))
      (should (string-match-p "failed to start (boom: bad flag)" err))
      (should (equal messages (list err)))
      (should (eq (gemini-companion-link-state) 'stopped))
      (should-not (timerp gemini-companion-link--timer)))))

(ert-deftest gemini-companion-test-sidecar-dead-before-initialize ()
  "A sidecar gone before `initialize' is written is reported as failing to start."
  (gemini-companion-test-with-dir dir
    (let* ((script (expand-file-name "broken-sidecar" dir))
           (gemini-companion-sidecar-program script)
           (send (symbol-function 'jsonrpc-async-request))
           (messages nil) (err nil))
      (write-region "#!/bin/sh\necho 'boom: bad flag' >&2\nexit 2\n" nil script)
      (set-file-modes script #o755)
      (cl-letf (((symbol-function 'gemini-companion-link-message)
                 (lambda (_level text) (push text messages)))
                ;; As on a loaded machine: the process has exited by the
                ;; time the request is written to it.
                ((symbol-function 'jsonrpc-async-request)
                 (lambda (&rest args)
                   ;; Spin without reading output, so that no sentinel runs
                   ;; before the write fails.
                   (let ((deadline (+ (float-time) 10)))
                     (while (and (process-live-p gemini-companion-link--proc)
                                 (< (float-time) deadline))))
                   (apply send args))))
        (gemini-companion-link-start (lambda (e) (setq err e)))
        (gemini-companion-test-wait "the failure" (lambda () err)))
      (should (string-match-p "failed to start (boom: bad flag)" err))
      (should (equal messages (list err)))
      (should (eq (gemini-companion-link-state) 'stopped)))))

(ert-deftest gemini-companion-test-restart-policy ()
  "Restarts follow the policy's delays and limit; the texts are the policy's."
  (let ((gemini-companion-link--policy
         '(:restart (:delaysMs [100 700] :windowMs 60000 :maxRestarts 3)
           :messages (:restarting "R({reason})" :gaveUp "G({count},{reason})")))
        (gemini-companion-link--restarts nil)
        (gemini-companion-link--state 'stopped)
        (gemini-companion-link--timer nil)
        (gemini-companion-link--restarting nil)
        (gemini-companion-link-last-error nil)
        (messages nil) (delays nil))
    (cl-letf (((symbol-function 'gemini-companion-link-message)
               (lambda (_level text) (push text messages)))
              ((symbol-function 'run-with-timer)
               (lambda (secs _repeat _fn) (push secs delays) 'timer)))
      (dotimes (_ 4) (gemini-companion-link--schedule-restart "signal 9")))
    (should (equal (reverse delays) '(0.1 0.7 0.7)))
    (should (equal (reverse messages) '("R(signal 9)" "R(signal 9)" "R(signal 9)" "G(4,signal 9)")))
    (should (equal gemini-companion-link-last-error "G(4,signal 9)"))))

(ert-deftest gemini-companion-test-finds-the-binary ()
  "A binary built into the package's bin/ wins over PATH; an absolute name is taken as is."
  (gemini-companion-test-with-dir dir
    (let ((built (expand-file-name "bin/gemini-ide-companion" dir))
          (gemini-companion-sidecar-program "gemini-ide-companion"))
      (cl-letf (((symbol-value 'gemini-companion-link--dir) dir))
        (should-not (equal (gemini-companion-link-program) built))
        (make-directory (file-name-directory built))
        (write-region "#!/bin/sh\n" nil built)
        (set-file-modes built #o755)
        (should (equal (gemini-companion-link-program) built))
        (let ((gemini-companion-sidecar-program "/nonexistent/x"))
          (should-not (gemini-companion-link-program)))))))

(ert-deftest gemini-companion-test-sidecar-missing ()
  "A sidecar that cannot be found is reported, and nothing runs."
  (let ((gemini-companion-sidecar-program "/nonexistent/gemini-ide-companion")
        (err nil))
    (gemini-companion-link-start (lambda (e) (setq err e)))
    (should (string-match-p "cannot find /nonexistent/gemini-ide-companion" err))
    (should (eq (gemini-companion-link-state) 'stopped))))

;; `gemini-companion--code-state' runs on every doctor report; loaded from
;; source the package costs every key more (docs/performance.md).
(ert-deftest gemini-companion-test-doctor-says-how-the-package-is-loaded ()
  "From source, byte-compiled, or from .elc files older than their source."
  (gemini-companion-test-with-dir dir
    (let ((load-path (cons dir load-path))
          (el (expand-file-name "gemini-companion-context.el" dir))
          (elc (expand-file-name "gemini-companion-context.elc" dir)))
      (write-region ";; source\n" nil el)
      (cl-letf (((symbol-function 'gemini-companion-context-command)
                 (eval '(lambda () (ignore)) t)))
        (should (string-prefix-p "not compiled" (gemini-companion--code-state))))
      (cl-letf (((symbol-function 'gemini-companion-context-command)
                 (byte-compile '(lambda () (ignore)))))
        (should (equal (gemini-companion--code-state) "byte-compiled"))
        ;; An .elc older than its source, as after a `git pull'.
        (write-region ";; compiled\n" nil elc)
        (set-file-times elc (time-subtract (current-time) 60))
        (should (string-match-p "gemini-companion-context.elc is older than its source"
                                (gemini-companion--code-state)))
        (set-file-times elc (time-add (current-time) 60))
        (should (equal (gemini-companion--code-state) "byte-compiled"))))))

(provide 'gemini-companion-test)
;;; gemini-companion-test.el ends here

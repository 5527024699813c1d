;;; gemini-companion-link.el --- Editor link to gemini-ide-companion -*- lexical-binding: t -*-

;; Copyright (C) 2026 The gemini-ide-companion authors

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: Apache-2.0

;;; Commentary:

;; The one module that talks to the sidecar: it starts
;; `gemini-ide-companion --stdio --framing=lsp' and speaks JSON-RPC to it
;; with `jsonrpc-process-connection' (Content-Length framing), does the
;; editor link v2 handshake, restarts the sidecar per the policy it sent,
;; and stops it.  The rest of the package uses only
;; `gemini-companion-link-request', `gemini-companion-link-notify',
;; `gemini-companion-link-on' and the functions below.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)

(defcustom gemini-companion-sidecar-program "gemini-ide-companion"
  "The gemini-ide-companion executable to run.
A name looked up in variable `exec-path', or an absolute file name.
When it is the bare default name and a binary was built into this
package's bin/ folder, that one is used."
  :type 'string :group 'gemini-companion)

(defcustom gemini-companion-sidecar-args nil
  "Extra command-line arguments for the sidecar.
For example (\"--log-file\" \"/tmp/gic.log\")."
  :type '(repeat string) :group 'gemini-companion)

(defcustom gemini-companion-log-events nil
  "When non-nil, keep every JSON-RPC message in *gemini-companion events*."
  :type 'boolean :group 'gemini-companion)

(defvar gemini-companion-link-ready-functions nil
  "Abnormal hook run with one argument when the link changes.
The argument is t once the sidecar is ready, nil when it stopped.")

(defconst gemini-companion-link-default-policy
  '(:restart (:delaysMs [100 500 1000 2000 5000] :windowMs 60000 :maxRestarts 5)
    :limits (:maxSelectionBytes 65552 :maxOpenFiles 10
             :maxSelectedTextUtf16 16384 :maxMessageBytes 268435456)
    :messages
    (:restarting "gemini-ide-companion exited ({reason}); restarting it. Gemini CLI sessions reconnect with /ide enable."
     :gaveUp "gemini-ide-companion exited {count} times in a minute ({reason}); not restarting it. Run M-x gemini-companion-restart to try again."
     :restarted "gemini-ide-companion restarted; Gemini CLI sessions reconnect with /ide enable."))
  "The policy used until the sidecar sends its own (editor link v2).")

(defvar gemini-companion-link-capabilities-function nil
  "A function returning more capabilities for `initialize' (a plist), or nil.
The editor tools set it to declare the features they answer.")

(defvar gemini-companion-link--conn nil "The live connection to the sidecar, or nil.")
(defvar gemini-companion-link--proc nil "The sidecar process, or nil.")
(defvar gemini-companion-link--state 'stopped
  "One of `stopped', `starting', `running', `stopping'.")
(defvar gemini-companion-link--info nil "The sidecar's `initialize' result (a plist).")
(defvar gemini-companion-link--policy gemini-companion-link-default-policy)
(defvar gemini-companion-link--handlers (make-hash-table :test #'eq)
  "Method symbol -> handler for the sidecar's notifications and requests.")
(defvar gemini-companion-link--restarts nil "`float-time's of recent restarts.")
(defvar gemini-companion-link--restarting nil "Non-nil while a restart is under way.")
(defvar gemini-companion-link--timer nil "Pending restart timer.")
(defvar gemini-companion-link--stderr nil "Last lines the sidecar wrote to stderr.")
(defvar gemini-companion-link--waiters nil "Callbacks waiting for the start to finish.")
(defvar gemini-companion-link-last-error nil "Why the last start failed, or nil.")
(defvar gemini-companion-link-folders nil "The workspace folders last sent.")
(defvar gemini-companion-link-workspace-function nil
  "Function returning the workspace folders (a list of directories) at start.")
(defvar gemini-companion-link-connect-function #'gemini-companion-link--connect
  "Function (NAME COMMAND) making the connection; tests replace it.")

(defconst gemini-companion-link--dir
  (file-name-directory (or load-file-name buffer-file-name default-directory))
  "The folder this package was loaded from.")

(defun gemini-companion-link--empty () "An empty JSON object." (make-hash-table :size 1))

(defun gemini-companion-link-program ()
  "The sidecar binary to run, or nil when there is none."
  (let ((built (expand-file-name "bin/gemini-ide-companion" gemini-companion-link--dir)))
    (cond ((file-name-absolute-p gemini-companion-sidecar-program)
           (and (file-executable-p gemini-companion-sidecar-program)
                gemini-companion-sidecar-program))
          ((and (equal gemini-companion-sidecar-program "gemini-ide-companion")
                (file-executable-p built))
           built)
          (t (executable-find gemini-companion-sidecar-program)))))

(defun gemini-companion-link-running-p ()
  "Return non-nil when the sidecar has answered `initialize' and is running."
  (eq gemini-companion-link--state 'running))

(defun gemini-companion-link-state () "The link's state symbol." gemini-companion-link--state)
(defun gemini-companion-link-info () "The `initialize' result, a plist." gemini-companion-link--info)

(defun gemini-companion-link-limit (name)
  "The policy limit NAME (a keyword) in force."
  (plist-get (plist-get gemini-companion-link--policy :limits) name))

(defun gemini-companion-link-text (name &rest subst)
  "The policy message NAME with SUBST (pairs of \"{key}\" and value) replaced."
  (let ((text (or (plist-get (plist-get gemini-companion-link--policy :messages) name)
                  (plist-get (plist-get gemini-companion-link-default-policy :messages) name))))
    (while subst
      (setq text (string-replace (pop subst) (format "%s" (pop subst)) text)))
    text))

(defun gemini-companion-link-message (level text)
  "Show TEXT from the sidecar at LEVEL (a string: info, warn, error)."
  (if (member level '("warn" "error"))
      (display-warning 'gemini-companion text (if (equal level "error") :error :warning))
    (message "%s" text)))

(defun gemini-companion-link-on (method handler)
  "Call HANDLER with the params of each METHOD message from the sidecar.
METHOD is a string.  For a request, HANDLER's value is the result; it
signals `jsonrpc-error' (see `jsonrpc-error') to answer with an error."
  (puthash (intern method) handler gemini-companion-link--handlers))

(defvar gemini-companion-link--later-handlers (make-hash-table :test #'eq)
  "Method symbol -> handler of the sidecar's requests answered later.")

(defun gemini-companion-link-on-later (method handler)
  "Answer the sidecar's METHOD requests with HANDLER, when it is done.
METHOD is a string.  HANDLER is called with the params and a function
REPLY, and returns at once; it calls REPLY once, later, from a timer
or a process's callback, with (nil RESULT) or (ERROR nil), ERROR a
plist (:code :message).  Until then Emacs goes on running the user's
commands.  A HANDLER that signals `jsonrpc-error' before it returns
answers with that error at once.  A request still unanswered when the
sidecar's deadline for it is near gets an error, so that every request
is answered exactly once."
  (puthash (intern method) handler gemini-companion-link--later-handlers))

(defun gemini-companion-link-notify (method params)
  "Send notification METHOD (a string) with PARAMS; nil if not running."
  (when (and gemini-companion-link--conn (gemini-companion-link-running-p))
    (condition-case err
        (progn (jsonrpc-notify gemini-companion-link--conn (intern method)
                               (or params (gemini-companion-link--empty)))
               t)
      (error (message "gemini-companion: cannot send %s: %s" method (error-message-string err))
             nil))))

(defconst gemini-companion-link--native-json
  (and (fboundp 'json-serialize) (fboundp 'json-available-p) (json-available-p))
  "Non-nil when Emacs has its native JSON encoder and parser.")

(declare-function json-encode-string "json" (string))
(declare-function json-read-from-string "json" (string))
(defvar json-object-type)
(defvar json-false)
(defvar json-null)

(defun gemini-companion-link-json-string (string)
  "STRING as a JSON string literal."
  (or (and gemini-companion-link--native-json
           ;; It refuses text that is not Unicode (raw bytes).
           (ignore-errors (substring (json-serialize (vector string)) 1 -1)))
      (progn (require 'json) (json-encode-string string))))

(defconst gemini-companion-link--notify-head "{\"jsonrpc\":\"2.0\",\"method\":\"")
(defconst gemini-companion-link--notify-mid "\",\"params\":")
(defconst gemini-companion-link--notify-frame
  (concat "Content-Length: %d\r\n\r\n" gemini-companion-link--notify-head "%s"
          gemini-companion-link--notify-mid "%s}"))

(defun gemini-companion-link-notify-json (method params)
  "Send notification METHOD (a string) with PARAMS, a JSON object as text.
Return nil if not running.  Unlike `gemini-companion-link-notify', it
writes one string to the sidecar's pipe and allocates little else:
cursor reports come this way while the user types, and every byte
allocated then costs Emacs's garbage collector.  With
`gemini-companion-log-events' on, it goes through jsonrpc, which logs
it."
  (when (and gemini-companion-link--conn (gemini-companion-link-running-p))
    (condition-case err
        (progn
          (if (and gemini-companion-link--proc (not gemini-companion-log-events))
              (process-send-string
               gemini-companion-link--proc
               (format gemini-companion-link--notify-frame
                       (+ (string-bytes gemini-companion-link--notify-head) (string-bytes method)
                          (string-bytes gemini-companion-link--notify-mid) (string-bytes params) 1)
                       method params))
            (jsonrpc-notify gemini-companion-link--conn (intern method)
                            (if gemini-companion-link--native-json
                                (json-parse-string params :object-type 'plist
                                                   :null-object nil :false-object :json-false)
                              (require 'json)
                              (let ((json-object-type 'plist) (json-false :json-false) (json-null nil))
                                (json-read-from-string params)))))
          t)
      (error (message "gemini-companion: cannot send %s: %s" method (error-message-string err))
             nil))))

;; Cursor reports are assembled in a buffer and written to the pipe from
;; there: a selection of 60 KB taken as a string, escaped, framed and
;; encoded would be copied about eight times per report, and all of it
;; is garbage the collector then has to go through.
(defvar gemini-companion-link--out nil
  "The buffer notifications are assembled in, or nil before the first.")

(defconst gemini-companion-link--escapes
  (let ((table (make-char-table 'translation-table)))
    (dotimes (c 32) (aset table c (vconcat (format "\\u%04x" c))))
    (dolist (e '((?\b . ?b) (?\t . ?t) (?\n . ?n) (?\f . ?f) (?\r . ?r) (?\" . ?\") (?\\ . ?\\)))
      (aset table (car e) (vector ?\\ (cdr e))))
    table)
  "The JSON escape of each character that needs one, for `translate-region'.")

(defun gemini-companion-link-escape (from)
  "Escape the text from FROM to point for a JSON string, in place.
Point ends after the escaped text.  The work is done by
`translate-region', in C: this runs on every selection report."
  (let ((tail (- (point-max) (point))))
    (translate-region from (point) gemini-companion-link--escapes)
    (goto-char (- (point-max) tail))))

(defun gemini-companion-link-notify-built (method build)
  "Send notification METHOD with params that BUILD writes as JSON text.
BUILD is called with no arguments in an empty buffer of this package's
and inserts the params object at point; it may take text from other
buffers with `insert-buffer-substring' and escape it with
`gemini-companion-link-escape'.  The message is framed and written from
that buffer, so a large selection is never copied into strings.  Return
nil if not running.  With `gemini-companion-log-events' on, it goes
through jsonrpc, which logs it."
  (when (and gemini-companion-link--conn (gemini-companion-link-running-p))
    (condition-case err
        (with-current-buffer (if (buffer-live-p gemini-companion-link--out)
                                 gemini-companion-link--out
                               (setq gemini-companion-link--out
                                     (get-buffer-create " *gemini-companion out*")))
          ;; Nothing watches this buffer's changes, and each change would
          ;; otherwise go through the modification hooks' machinery, even
          ;; with no hook: that was 60% of a cursor report's time, and half
          ;; of what it allocated (scripts/bench/emacs-report.el).
          (let ((inhibit-modification-hooks t))
            (erase-buffer)
            (set-buffer-multibyte t)
            (funcall build)
            (if (or (not gemini-companion-link--proc) gemini-companion-log-events)
                (gemini-companion-link-notify-json method (buffer-string))
              ;; As unibyte, the buffer holds the text's UTF-8 bytes: they
              ;; are counted, and the process sends them, as they are.
              (set-buffer-multibyte nil)
              (let ((size (+ (buffer-size) (length gemini-companion-link--notify-head)
                             (length method) (length gemini-companion-link--notify-mid) 1)))
                (goto-char (point-min))
                (insert "Content-Length: ")
                (princ size (current-buffer))
                (insert "\r\n\r\n" gemini-companion-link--notify-head method
                        gemini-companion-link--notify-mid)
                (goto-char (point-max))
                (insert "}"))
              (process-send-region gemini-companion-link--proc (point-min) (point-max))
              t)))
      (error (message "gemini-companion: cannot send %s: %s" method (error-message-string err))
             nil))))

(defun gemini-companion-link--send-request (method params callback &optional timeout)
  "Send request METHOD with PARAMS; CALLBACK gets (ERROR RESULT).  TIMEOUT in s."
  (let ((cb (or callback #'ignore)))
    (condition-case err
        (jsonrpc-async-request
         gemini-companion-link--conn (intern method) (or params (gemini-companion-link--empty))
         :success-fn (lambda (result) (funcall cb nil result))
         :error-fn (lambda (e) (funcall cb e nil))
         :timeout-fn (lambda () (funcall cb (list :code -32000 :message (concat method " got no answer in time")) nil))
         :timeout (or timeout 10))
      (error (funcall cb (list :code -32000 :message (error-message-string err)) nil)))))

(defun gemini-companion-link-request (method params callback)
  "Send request METHOD with PARAMS; CALLBACK gets (ERROR RESULT) later.
ERROR is nil or a plist (:code :message)."
  (if (and gemini-companion-link--conn (gemini-companion-link-running-p))
      (gemini-companion-link--send-request method params callback)
    (funcall (or callback #'ignore) (list :code -32000 :message "the sidecar is not running") nil)))

(defun gemini-companion-link-request-sync (method params &optional timeout)
  "Send request METHOD with PARAMS and wait (TIMEOUT seconds) for its result.
Signal an error when it fails."
  (let ((done nil) (err nil) (result nil)
        (deadline (+ (float-time) (or timeout 3))))
    (gemini-companion-link-request method params
                                   (lambda (e r) (setq done t err e result r)))
    (while (and (not done) (< (float-time) deadline))
      (accept-process-output nil 0.02))
    (cond ((not done) (error "%s got no answer in time" method))
          (err (error "%s failed: %s" method (plist-get err :message)))
          (t result))))

(defun gemini-companion-link--dispatch (kind)
  "A jsonrpc dispatcher for KIND (`request' or `notification')."
  (lambda (conn method params)
    (when (eq conn gemini-companion-link--conn)
      (let ((handler (gethash method gemini-companion-link--handlers))
            (later (and (eq kind 'request) (gethash method gemini-companion-link--later-handlers))))
        (if (eq kind 'request)
            (cond (later (gemini-companion-link--start-later conn method later params))
                  (handler (funcall handler params))
                  (t (jsonrpc-error :code -32601 :message (format "method not found: %s" method))))
          (when handler
            (condition-case err
                (funcall handler params)
              (error (message "gemini-companion: error handling %s: %s"
                              method (error-message-string err))))))))))

;;; Answers given later
;;
;; jsonrpc.el answers a request with what its dispatcher returns, from
;; the process filter that read it; a dispatcher waiting there for a
;; language server would keep Emacs from running the user's commands.
;; So a handler registered with `gemini-companion-link-on-later' makes
;; the dispatcher return a `gemini-companion-link--later' record at
;; once.  jsonrpc then sends it as the result with
;; `jsonrpc-connection-send', a generic function of its public API: the
;; method below, on connections of this package, takes the record
;; instead of sending it, notes the request's id in it, and the reply
;; goes out when the handler calls REPLY.  This works the same with
;; Emacs 28's jsonrpc (1.0.14) and later ones.

(cl-defstruct (gemini-companion-link--later
               (:constructor gemini-companion-link--later-make (conn method))
               (:copier nil))
  "A request of the sidecar that a handler answers later."
  conn method
  (id nil :documentation "The request's id, once jsonrpc has passed it on.")
  (early nil :documentation "(ERROR RESULT) of a handler that replied before that.")
  (answered nil :documentation "Non-nil once the reply was sent (or given up).")
  (timer nil :documentation "The guard that answers when the handler never does."))

(defclass gemini-companion-link-replies-later ()
  ()
  :abstract t
  :documentation "A jsonrpc connection on which handlers may answer later.
See `gemini-companion-link-on-later'.")

(cl-defmethod jsonrpc-connection-send :around
  ((conn gemini-companion-link-replies-later) &rest args &key id result &allow-other-keys)
  "Send ARGS on CONN, unless RESULT is to come later: then note its ID."
  (if (not (gemini-companion-link--later-p result))
      (apply #'cl-call-next-method conn args)
    (setf (gemini-companion-link--later-id result) id)
    (when (gemini-companion-link--later-early result)
      (apply #'gemini-companion-link--answer result (gemini-companion-link--later-early result)))))

(defclass gemini-companion-link-connection (gemini-companion-link-replies-later
                                            jsonrpc-process-connection)
  ()
  :documentation "The connection to the sidecar.")

(defun gemini-companion-link--answer (later err result)
  "Answer the request LATER stands for with ERR or RESULT, once.
ERR is nil or a plist (:code :message)."
  (cond
   ((gemini-companion-link--later-answered later) nil)
   ((not (gemini-companion-link--later-id later))
    (unless (gemini-companion-link--later-early later)
      (setf (gemini-companion-link--later-early later) (list err result))))
   (t
    (setf (gemini-companion-link--later-answered later) t)
    (when (timerp (gemini-companion-link--later-timer later))
      (cancel-timer (gemini-companion-link--later-timer later)))
    (let ((conn (gemini-companion-link--later-conn later))
          (id (gemini-companion-link--later-id later)))
      ;; A sidecar that exited meanwhile has nobody left to answer.
      (when (ignore-errors (jsonrpc-running-p conn))
        (condition-case e
            (if err
                (jsonrpc-connection-send conn :id id :error err)
              (jsonrpc-connection-send conn :id id :result result))
          (error (message "gemini-companion: cannot answer %s: %s"
                          (gemini-companion-link--later-method later)
                          (error-message-string e)))))))))

(defun gemini-companion-link--later-guard ()
  "Seconds after which an unanswered request gets an error from the link.
Half a second before the sidecar's own deadline for the editor tools."
  (/ (max (- (or (gemini-companion-link-limit :editorRequestTimeoutMs) 10000) 500) 500) 1000.0))

(defun gemini-companion-link--start-later (conn method handler params)
  "Run HANDLER on PARAMS for request METHOD of CONN; return the pending reply."
  (let* ((later (gemini-companion-link--later-make conn method))
         (reply (lambda (err result) (gemini-companion-link--answer later err result))))
    (setf (gemini-companion-link--later-timer later)
          (run-with-timer (gemini-companion-link--later-guard) nil
                          (lambda ()
                            (gemini-companion-link--answer
                             later (list :code -32011 :message (format "Emacs did not finish %s in time" method))
                             nil))))
    (condition-case err
        (funcall handler params reply)
      (error
       ;; Answered by jsonrpc, now, with the error.
       (setf (gemini-companion-link--later-answered later) t)
       (cancel-timer (gemini-companion-link--later-timer later))
       (signal (car err) (cdr err))))
    later))

(defun gemini-companion-link--connect (name command)
  "Start COMMAND and return a process connection called NAME."
  (let ((stderr (make-pipe-process
                 :name (concat name " stderr") :noquery t
                 :filter (lambda (_proc text)
                           (setq gemini-companion-link--stderr
                                 (last (append gemini-companion-link--stderr
                                               (split-string text "\n" t))
                                       5))))))
    (gemini-companion-link-connection
     :name name
     :events-buffer-scrollback-size (if gemini-companion-log-events nil 0)
     :process (lambda ()
                (setq gemini-companion-link--proc
                      (make-process :name name :command command :connection-type 'pipe
                                    :coding 'utf-8-emacs-unix :noquery t :stderr stderr))
                (process-put gemini-companion-link--proc 'stderr stderr)
                gemini-companion-link--proc)
     :request-dispatcher (gemini-companion-link--dispatch 'request)
     :notification-dispatcher (gemini-companion-link--dispatch 'notification)
     :on-shutdown #'gemini-companion-link--on-exit)))

(defun gemini-companion-link--finish (err)
  "Run the start waiters with ERR (nil on success)."
  (let ((waiters (nreverse gemini-companion-link--waiters)))
    (setq gemini-companion-link--waiters nil)
    (dolist (w waiters) (ignore-errors (funcall w err)))))

(defun gemini-companion-link--initialize-params ()
  "The v2 `initialize' params."
  (list :protocolVersion 2
        :ide '(:name "emacs" :displayName "Emacs" :restartCommand "M-x gemini-companion-restart")
        :processId (emacs-pid)
        :workspaceFolders (vconcat gemini-companion-link-folders)
        :capabilities (let ((caps (list :diff t :diffStates t :selection t :terminal t
                                        :diagnostics :json-false :agent :json-false)))
                        (cl-loop for (k v) on (and gemini-companion-link-capabilities-function
                                                   (funcall gemini-companion-link-capabilities-function))
                                 by #'cddr
                                 do (setq caps (plist-put caps k v)))
                        caps)))

(defun gemini-companion-link--spawn (program)
  "Run PROGRAM and send it `initialize'."
  (setq gemini-companion-link--stderr nil
        gemini-companion-link-folders
        (or (and gemini-companion-link--restarting gemini-companion-link-folders)
            (and gemini-companion-link-workspace-function
                 (funcall gemini-companion-link-workspace-function))
            (list (expand-file-name default-directory))))
  (let* ((conn (funcall gemini-companion-link-connect-function "gemini-companion"
                        (append (list program "--stdio" "--framing=lsp")
                                gemini-companion-sidecar-args))))
    (setq gemini-companion-link--conn conn)
    (gemini-companion-link--send-request
     "initialize" (gemini-companion-link--initialize-params)
     (lambda (err result)
       (when (and (eq conn gemini-companion-link--conn)
                  (eq gemini-companion-link--state 'starting))
         (if err
             ;; A sidecar that died (even before `initialize' could be
             ;; written to it) is reported by --on-exit, with its last words.
             (unless (or (equal (plist-get err :code) -1)
                         (and gemini-companion-link--proc
                              (not (process-live-p gemini-companion-link--proc))))
               (setq gemini-companion-link-last-error
                     (format "gemini-ide-companion refused initialize: %s" (plist-get err :message)))
               (gemini-companion-link-stop)
               (gemini-companion-link--finish gemini-companion-link-last-error))
           (setq gemini-companion-link--info result
                 gemini-companion-link--state 'running
                 gemini-companion-link-last-error nil)
           (when (plist-get result :policy)
             (setq gemini-companion-link--policy (plist-get result :policy)))
           (when gemini-companion-link--restarting
             (setq gemini-companion-link--restarting nil)
             (gemini-companion-link-message "info" (gemini-companion-link-text :restarted)))
           (run-hook-with-args 'gemini-companion-link-ready-functions t)
           (gemini-companion-link--finish nil)
           (force-mode-line-update t))))
     15)))

(defun gemini-companion-link-start (&optional callback)
  "Start the sidecar unless it is running.
CALLBACK, if non-nil, gets nil or an error text once it is ready."
  (when callback (push callback gemini-companion-link--waiters))
  (pcase gemini-companion-link--state
    ('running (gemini-companion-link--finish nil))
    ('starting nil)
    (_
     (when (timerp gemini-companion-link--timer) (cancel-timer gemini-companion-link--timer))
     (let ((program (gemini-companion-link-program)))
       (if (not program)
           (progn
             (setq gemini-companion-link-last-error
                   (format "cannot find %s: set `gemini-companion-sidecar-program' or put it on exec-path"
                           gemini-companion-sidecar-program))
             (gemini-companion-link--finish gemini-companion-link-last-error))
         (setq gemini-companion-link--state 'starting)
         (condition-case err
             (gemini-companion-link--spawn program)
           (error
            (setq gemini-companion-link--state 'stopped
                  gemini-companion-link--conn nil
                  gemini-companion-link-last-error
                  (format "cannot run %s: %s" program (error-message-string err)))
            (gemini-companion-link--finish gemini-companion-link-last-error))))))))

(defun gemini-companion-link--reason (proc)
  "Why PROC ended, for the policy messages."
  (let ((err (and proc (process-get proc 'stderr)))) ; read what is left of it
    (when (process-live-p err) (accept-process-output err 0.1) (delete-process err))
    (cond ((car (last gemini-companion-link--stderr)))
          ((not proc) "it stopped")
          ((eq (process-status proc) 'signal) (format "signal %d" (process-exit-status proc)))
          (t (format "exit code %d" (process-exit-status proc))))))

(defun gemini-companion-link--on-exit (conn)
  "The sidecar of CONN exited; restart it per the policy unless asked to stop."
  (when (eq conn gemini-companion-link--conn)
    (let* ((was gemini-companion-link--state)
           (proc gemini-companion-link--proc)
           (reason (gemini-companion-link--reason proc))
           (file (plist-get gemini-companion-link--info :discoveryFile)))
      (setq gemini-companion-link--conn nil
            gemini-companion-link--info nil
            gemini-companion-link--state 'stopped)
      (run-hook-with-args 'gemini-companion-link-ready-functions nil)
      (force-mode-line-update t)
      (unless (eq was 'stopping)
        ;; Its discovery file is named after this Emacs, which lives on.
        (when (and (stringp file) (> (length file) 0))
          (ignore-errors (delete-file file)))
        (if (and (eq was 'starting) (not gemini-companion-link--restarting))
            (progn
              (setq gemini-companion-link-last-error
                    (format "gemini-ide-companion failed to start (%s)" reason))
              (gemini-companion-link-message "error" gemini-companion-link-last-error)
              (gemini-companion-link--finish gemini-companion-link-last-error))
          (gemini-companion-link--schedule-restart reason))))))

(defun gemini-companion-link--schedule-restart (reason)
  "Restart the sidecar that died of REASON after the policy's delay, or give up."
  (let* ((policy (plist-get gemini-companion-link--policy :restart))
         (window (/ (or (plist-get policy :windowMs) 60000) 1000.0))
         (delays (append (or (plist-get policy :delaysMs) [100]) nil))
         (now (float-time)))
    (setq gemini-companion-link--restarts
          (cl-remove-if (lambda (time) (> (- now time) window)) gemini-companion-link--restarts))
    (let ((n (length gemini-companion-link--restarts)))
      (if (>= n (or (plist-get policy :maxRestarts) 5))
          (progn
            (setq gemini-companion-link--restarting nil
                  gemini-companion-link-last-error
                  (gemini-companion-link-text :gaveUp "{count}" (1+ n) "{reason}" reason))
            (gemini-companion-link-message "error" gemini-companion-link-last-error))
        (push now gemini-companion-link--restarts)
        (setq gemini-companion-link--restarting t)
        (gemini-companion-link-message
         "warn" (gemini-companion-link-text :restarting "{reason}" reason))
        (setq gemini-companion-link--timer
              (run-with-timer (/ (nth (min n (1- (length delays))) delays) 1000.0) nil
                              (lambda ()
                                (setq gemini-companion-link--timer nil)
                                (when (eq gemini-companion-link--state 'stopped)
                                  (gemini-companion-link-start)))))))))

(defun gemini-companion-link-stop (&optional wait)
  "Ask the sidecar to shut down; kill it if it does not exit in time.
With WAIT, return only once it has exited (for `kill-emacs-hook')."
  (when (timerp gemini-companion-link--timer) (cancel-timer gemini-companion-link--timer))
  (setq gemini-companion-link--timer nil gemini-companion-link--restarting nil)
  (let ((conn gemini-companion-link--conn))
    (when (and conn (not (eq gemini-companion-link--state 'stopped)))
      (let ((proc gemini-companion-link--proc))
        (when (eq gemini-companion-link--state 'starting)
          (gemini-companion-link--finish "stopped"))
        (setq gemini-companion-link--state 'stopping)
        (gemini-companion-link--send-request
         "shutdown" nil (lambda (&rest _) (when proc (ignore-errors (process-send-eof proc)))) 2)
        (run-with-timer 2 nil (lambda () (when (and proc (process-live-p proc)) (delete-process proc))))
        (unless proc (gemini-companion-link--on-exit conn))
        (when wait
          (let ((deadline (+ (float-time) 2.5)))
            (while (and proc (process-live-p proc) (< (float-time) deadline))
              (accept-process-output proc 0.05)))
          (when (and proc (process-live-p proc)) (delete-process proc))
          ;; Run the exit handling now: Emacs may be about to quit.
          (when (eq conn gemini-companion-link--conn)
            (gemini-companion-link--on-exit conn)))))))

(defun gemini-companion-link-restart (&optional callback)
  "Stop the sidecar, forget earlier restarts, and start it again.
CALLBACK is as for `gemini-companion-link-start'."
  (setq gemini-companion-link--restarts nil)
  (gemini-companion-link-stop t)
  (gemini-companion-link-start callback))

(defun gemini-companion-link-set-folders (folders)
  "Tell the sidecar that the workspace is now FOLDERS (directories)."
  (setq gemini-companion-link-folders folders)
  (gemini-companion-link-notify "workspace/foldersChanged" (list :workspaceFolders (vconcat folders))))

(defun gemini-companion-link-terminal-env (callback)
  "Ask the sidecar for the environment of a terminal opened now.
CALLBACK gets a list of \"NAME=VALUE\" strings (nil when the sidecar
is not running)."
  (let ((env (plist-get gemini-companion-link--info :env)) ; or from envChanged
        (to-list (lambda (env)
                   (cl-loop for (k v) on env by #'cddr
                            collect (format "%s=%s" (substring (symbol-name k) 1) v)))))
    (if (not (plist-get (plist-get gemini-companion-link--info :capabilities) :terminalEnv))
        (funcall callback (funcall to-list env))
      (gemini-companion-link-request
       "terminal/env" nil
       (lambda (err result)
         (funcall callback (funcall to-list (if err env
                                              (plist-get result :env)))))))))

(gemini-companion-link-on
 "workspace/envChanged"
 (lambda (params)
   (when gemini-companion-link--info
     (setq gemini-companion-link--info
           (plist-put (plist-put gemini-companion-link--info :env (plist-get params :env))
                      :discoveryFile (plist-get params :discoveryFile))))))

(provide 'gemini-companion-link)
;;; gemini-companion-link.el ends here

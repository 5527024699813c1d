;;; gemini-companion-tools.el --- What Emacs knows, for the model -*- lexical-binding: t -*-

;; Copyright (C) 2026 The gemini-ide-companion authors

;; This file is not part of GNU Emacs.

;; SPDX-License-Identifier: Apache-2.0

;;; Commentary:

;; The editor tools (docs/editor-tools.md of gemini-ide-companion): the
;; sidecar's editor/* requests, answered from Emacs' own tooling.
;; Diagnostics come from Flymake (and Flycheck when it is on); eglot's
;; language server answers definitions, references, hover, outlines and
;; workspace symbols when it manages the file; without it, xref (with a
;; tags table) answers definitions and references, and imenu outlines.
;; Positions on the link are 1-based lines and 1-based columns in
;; characters, which Emacs counts too; a language server counts UTF-16
;; units, converted here.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'flymake)
(require 'xref)
(require 'imenu)
(require 'gemini-companion-link)

(declare-function eglot-current-server "ext:eglot" ())
(declare-function eglot--server-capable "ext:eglot" (&rest feats))
(declare-function flycheck-error-line "ext:flycheck" (err))
(declare-function flycheck-error-column "ext:flycheck" (err))
(declare-function flycheck-error-end-line "ext:flycheck" (err))
(declare-function flycheck-error-end-column "ext:flycheck" (err))
(declare-function flycheck-error-level "ext:flycheck" (err))
(declare-function flycheck-error-message "ext:flycheck" (err))
(declare-function flycheck-error-checker "ext:flycheck" (err))
(declare-function flycheck-error-id "ext:flycheck" (err))
(defvar flycheck-current-errors)
(defvar flycheck-mode)
(defvar tags-file-name)
(defvar tags-table-list)

(defcustom gemini-companion-tools t
  "Whether Emacs answers the editor tools for the agents that call them.
Diagnostics, definitions, references, hover, outlines, workspace
symbols and the open files, from Flymake or Flycheck, eglot, xref
and imenu.  Takes effect at the next start of the sidecar."
  :type 'boolean
  :group 'gemini-companion)

(defconst gemini-companion-tools--not-available -32010)
(defconst gemini-companion-tools--deadline-passed -32011)

(defconst gemini-companion-tools--kinds
  ["file" "module" "namespace" "package" "class" "method" "property"
   "field" "constructor" "enum" "interface" "function" "variable"
   "constant" "string" "number" "boolean" "array" "object" "key"
   "null" "enumMember" "struct" "event" "operator" "typeParameter"]
  "LSP's symbol kinds by number (1-based), as the link names them.")

(defun gemini-companion-tools--fail (code fmt &rest args)
  "Answer the request with error CODE and the message FMT with ARGS."
  (jsonrpc-error :code code :message (apply #'format fmt args)))

(defun gemini-companion-tools--invalid (fmt &rest args)
  "Answer the request with an invalid-params error (FMT with ARGS)."
  (apply #'gemini-companion-tools--fail -32602 fmt args))

;;; Positions

(defun gemini-companion-tools--utf16 (string)
  "Length of STRING in UTF-16 code units."
  (+ (length string) (cl-count-if (lambda (c) (> c #xFFFF)) string)))

(defun gemini-companion-tools--from-utf16 (line units)
  "The character index in LINE (a string) of UTF-16 index UNITS (clamped)."
  (let ((i 0) (seen 0) (n (length line)))
    (while (and (< i n) (< seen units))
      (setq seen (+ seen (if (> (aref line i) #xFFFF) 2 1))
            i (1+ i)))
    i))

(defun gemini-companion-tools--lines (cache path)
  "The lines of PATH (a buffer's when one visits it), cached in CACHE."
  (or (gethash path cache)
      (puthash path
               (let ((buf (find-buffer-visiting path)))
                 (if buf
                     (with-current-buffer buf
                       (save-restriction
                         (widen)
                         (vconcat (split-string (buffer-substring-no-properties (point-min) (point-max)) "\n"))))
                   (with-temp-buffer
                     (ignore-errors (insert-file-contents path))
                     (vconcat (split-string (buffer-string) "\n")))))
               cache)))

(defun gemini-companion-tools--from-lsp (lines pos)
  "POS, an LSP position (0-based, UTF-16), on the link, in LINES."
  (let* ((row (plist-get pos :line))
         (line (if (< row (length lines)) (aref lines row) "")))
    (list :line (1+ row)
          :character (1+ (gemini-companion-tools--from-utf16 line (plist-get pos :character))))))

(defun gemini-companion-tools--range-from-lsp (lines range)
  "RANGE, an LSP range, on the link, in LINES."
  (list :start (gemini-companion-tools--from-lsp lines (plist-get range :start))
        :end (gemini-companion-tools--from-lsp lines (plist-get range :end))))

(defun gemini-companion-tools--pos (point)
  "POINT of the current buffer on the link."
  (save-excursion
    (goto-char point)
    (list :line (line-number-at-pos point t)
          :character (1+ (- point (line-beginning-position))))))

;;; Files and buffers

(defun gemini-companion-tools--name (path)
  "PATH's file name without its folder."
  (file-name-nondirectory path))

(defun gemini-companion-tools--buffer (path)
  "The buffer visiting PATH, visiting it now (in the background) if none."
  (or (find-buffer-visiting path)
      (if (file-readable-p path)
          (let ((inhibit-message t)) (find-file-noselect path))
        (gemini-companion-tools--invalid "%s does not exist" path))))

(defun gemini-companion-tools--point (path params)
  "The point of PARAMS' line and character in the current buffer (PATH)."
  (let ((line (plist-get params :line))
        (char (plist-get params :character)))
    (unless (and (integerp line) (>= line 1)) (gemini-companion-tools--invalid "line must be 1 or more"))
    (unless (and (integerp char) (>= char 1)) (gemini-companion-tools--invalid "character must be 1 or more"))
    (save-restriction
      (widen)
      (let ((count (count-lines (point-min) (point-max))))
        (when (and (> (point-max) (point-min)) (/= (char-before (point-max)) ?\n))
          (setq count count))
        (when (> line (max count 1))
          (gemini-companion-tools--invalid "line %d is past the end of %s (%d lines)"
                                           line (gemini-companion-tools--name path) count)))
      (save-excursion
        (goto-char (point-min))
        (forward-line (1- line))
        (let ((len (- (line-end-position) (line-beginning-position))))
          (when (> char (1+ len))
            (gemini-companion-tools--invalid "character %d is past the end of line %d of %s (%d characters)"
                                             char line (gemini-companion-tools--name path) len))
          (+ (line-beginning-position) (1- char)))))))

(defun gemini-companion-tools--max (params)
  "The most items to answer with for PARAMS."
  (let ((n (plist-get params :maxResults)))
    (if (and (integerp n) (> n 0)) n (or (gemini-companion-link-limit :maxToolResults) 200))))

(defun gemini-companion-tools--budget ()
  "Seconds a language server gets, leaving the sidecar a margin."
  (/ (max (- (or (gemini-companion-link-limit :editorRequestTimeoutMs) 10000) 1500) 100) 1000.0))

(defun gemini-companion-tools--cut (items max)
  "ITEMS (a list) cut to MAX: (VECTOR . TRUNCATED)."
  (if (> (length items) max)
      (cons (vconcat (cl-subseq items 0 max)) t)
    (cons (vconcat items) nil)))

(defun gemini-companion-tools--result (key items max)
  "The result plist with KEY holding ITEMS cut to MAX, and truncated."
  (let ((cut (gemini-companion-tools--cut items max)))
    (if (cdr cut) (list key (car cut) :truncated t) (list key (car cut)))))

;;; eglot

(defun gemini-companion-tools--server ()
  "The eglot server managing the current buffer, or nil."
  (and (fboundp 'eglot-current-server) (eglot-current-server)))

(defvar eglot-advertise-cancellation)
(defvar eglot--managed-mode)
(declare-function eglot--signal-textDocument/didChange "ext:eglot" ())

(defun gemini-companion-tools--error (err)
  "The link error (a plist) of ERR, a condition caught while answering."
  (if (eq (car err) 'jsonrpc-error)
      (list :code (or (alist-get 'jsonrpc-error-code (cdr err)) -32603)
            :message (or (alist-get 'jsonrpc-error-message (cdr err)) "Internal error"))
    (list :code -32603 :message (error-message-string err))))

(defun gemini-companion-tools--ask (server method params reply convert)
  "Send METHOD with PARAMS to SERVER; REPLY gets CONVERT's value of its answer.
Return at once: Emacs goes on running the user's commands while the
language server works.  REPLY is called once, with (nil RESULT) or
\(ERROR nil): the server's error, its death, or the budget's end (then
the request is cancelled as eglot cancels those it gives up on)."
  (let* ((name (jsonrpc-name server))
         (method-name (if (keywordp method) (substring (symbol-name method) 1) method))
         (done nil)
         (id nil)
         (finish (lambda (err result)
                   (unless done
                     (setq done t)
                     (funcall reply err result)))))
    ;; What the user typed since eglot last told the server goes first,
    ;; as before eglot's own requests: the position is in today's text.
    (when (and (fboundp 'eglot--signal-textDocument/didChange)
               (bound-and-true-p eglot--managed-mode)
               (eq (gemini-companion-tools--server) server))
      (ignore-errors (eglot--signal-textDocument/didChange)))
    (condition-case err
        (setq id
              (car-safe
               (jsonrpc-async-request
                server method params
                :success-fn
                (lambda (result)
                  (unless done
                    (apply finish
                           (condition-case err
                               (list nil (funcall convert result))
                             (error (list (gemini-companion-tools--error err) nil))))))
                :error-fn
                (lambda (err)
                  (funcall finish
                           (list :code -32603
                                 :message (if (eql (plist-get err :code) -1)
                                              (format "%s exited before it answered %s" name method-name)
                                            (format "%s: %s" name (or (plist-get err :message) err))))
                           nil))
                :timeout-fn
                (lambda ()
                  ;; jsonrpc 1.0.25 and later say which request it was;
                  ;; eglot tells the server of the requests it gives up on.
                  (when (and (integerp id) (bound-and-true-p eglot-advertise-cancellation))
                    (ignore-errors (jsonrpc-notify server '$/cancelRequest (list :id id))))
                  (funcall finish
                           (list :code gemini-companion-tools--deadline-passed
                                 :message (format "%s did not answer %s in time; it may still be loading the workspace: try again"
                                                  name method-name))
                           nil))
                :timeout (gemini-companion-tools--budget))))
      (error (funcall finish (list :code -32603 :message (format "%s: %s" name (error-message-string err))) nil)))
    nil))

(defvar url-path-allowed-chars)
(declare-function url-filename "url-parse" (cl-x))

(defun gemini-companion-tools--uri (path)
  "PATH as a file:// URI, as eglot writes them."
  (require 'url-util)
  (concat "file://" (url-hexify-string (file-truename path) url-path-allowed-chars)))

(defun gemini-companion-tools--path (uri)
  "The absolute path of file URI."
  (file-truename (url-unhex-string (url-filename (url-generic-parse-url uri)))))

(defun gemini-companion-tools--lsp-position (point)
  "POINT of the current buffer as an LSP position."
  (save-excursion
    (goto-char point)
    (list :line (1- (line-number-at-pos point t))
          :character (gemini-companion-tools--utf16 (buffer-substring-no-properties (line-beginning-position) point)))))

(defun gemini-companion-tools--no-server (path what)
  "Answer that Emacs has no language server for PATH that answers WHAT."
  (gemini-companion-tools--fail
   gemini-companion-tools--not-available
   "Emacs has no language server for %s that answers %s: %s"
   (gemini-companion-tools--name path)
   (if (keywordp what) (substring (symbol-name what) 1) what)
   (if (or (fboundp 'eglot-current-server) (locate-library "eglot"))
       "start eglot in its buffer (M-x eglot, or eglot-ensure in its mode hook)"
     "install eglot (Debian: elpa-eglot) and start it in its buffer")))

;;; Diagnostics

(defun gemini-companion-tools--flymake-severity (type)
  "The link's severity of Flymake diagnostic TYPE."
  (pcase (or (get type 'flymake-category) type)
    ((or 'flymake-error :error) "error")
    ((or 'flymake-warning :warning) "warning")
    (_ "info")))

(defun gemini-companion-tools--buffer-diagnostics (path)
  "The diagnostics of the current buffer (visiting PATH) as link plists."
  (save-restriction
    (widen)
    (append
     (when (bound-and-true-p flymake-mode)
       (mapcar
        (lambda (d)
          (let* ((lsp (alist-get 'eglot-lsp-diag (flymake-diagnostic-data d)))
                 (sev (if lsp
                          (pcase (plist-get lsp :severity) (1 "error") (2 "warning") (3 "info") (4 "hint") (_ "error"))
                        (gemini-companion-tools--flymake-severity (flymake-diagnostic-type d))))
                 (code (plist-get lsp :code))
                 (source (or (plist-get lsp :source)
                             (let ((b (flymake-diagnostic-backend d))) (and b (symbol-name b))))))
            (append (list :path path
                          :range (list :start (gemini-companion-tools--pos (flymake-diagnostic-beg d))
                                       :end (gemini-companion-tools--pos (flymake-diagnostic-end d)))
                          :severity sev
                          :message (or (plist-get lsp :message) (flymake-diagnostic-text d)))
                    (and source (list :source (format "%s" source)))
                    (and code (list :code (format "%s" code))))))
        (flymake-diagnostics)))
     (when (and (bound-and-true-p flycheck-mode) (boundp 'flycheck-current-errors))
       (mapcar
        (lambda (e)
          (let* ((line (or (flycheck-error-line e) 1))
                 (col (or (flycheck-error-column e) 1))
                 (eline (or (flycheck-error-end-line e) line))
                 (ecol (or (flycheck-error-end-column e) col))
                 (id (flycheck-error-id e)))
            (append (list :path path
                          :range (list :start (list :line line :character col)
                                       :end (list :line eline :character ecol))
                          :severity (pcase (flycheck-error-level e)
                                      ('error "error") ('warning "warning") (_ "info"))
                          :message (or (flycheck-error-message e) "")
                          :source (format "%s" (flycheck-error-checker e)))
                    (and id (list :code (format "%s" id))))))
        flycheck-current-errors)))))

(defconst gemini-companion-tools--rank '(("error" . 1) ("warning" . 2) ("info" . 3) ("hint" . 4)))

(defun gemini-companion-tools-get-diagnostics (params)
  "Answer editor/getDiagnostics for PARAMS."
  (let* ((want (plist-get params :path))
         (min-rank (or (cdr (assoc (plist-get params :severity) gemini-companion-tools--rank)) 4))
         (sources 0)
         (out nil))
    (dolist (buf (buffer-list))
      (let ((file (buffer-file-name buf)))
        (when file
          (with-current-buffer buf
            (when (or (bound-and-true-p flymake-mode) (bound-and-true-p flycheck-mode))
              (setq sources (1+ sources))
              (let ((path (file-truename file)))
                (when (or (null want) (equal want path))
                  (setq out (append out (gemini-companion-tools--buffer-diagnostics path))))))))))
    (when (zerop sources)
      (gemini-companion-tools--fail
       gemini-companion-tools--not-available
       "Emacs has no diagnostics%s: turn on flymake-mode (eglot does), or flycheck-mode"
       (if want (concat " for " (gemini-companion-tools--name want)) "")))
    (setq out (cl-remove-if (lambda (d) (> (cdr (assoc (plist-get d :severity) gemini-companion-tools--rank)) min-rank)) out))
    (setq out (sort out (lambda (a b)
                          (let ((ra (cdr (assoc (plist-get a :severity) gemini-companion-tools--rank)))
                                (rb (cdr (assoc (plist-get b :severity) gemini-companion-tools--rank)))
                                (sa (plist-get (plist-get a :range) :start))
                                (sb (plist-get (plist-get b :range) :start)))
                            (cond ((/= ra rb) (< ra rb))
                                  ((not (equal (plist-get a :path) (plist-get b :path)))
                                   (string< (plist-get a :path) (plist-get b :path)))
                                  ((/= (plist-get sa :line) (plist-get sb :line)) (< (plist-get sa :line) (plist-get sb :line)))
                                  (t (< (plist-get sa :character) (plist-get sb :character))))))))
    (gemini-companion-tools--result :diagnostics out (gemini-companion-tools--max params))))

;;; Definitions, references, hover

(defun gemini-companion-tools--locations (result max)
  "LSP locations RESULT on the link, at most MAX.
RESULT is a Location, a vector of Location or of LocationLink."
  (let ((list (cond ((vectorp result) (append result nil))
                    ((and result (listp result) (or (plist-get result :uri) (plist-get result :targetUri))) (list result))
                    (t nil)))
        (cache (make-hash-table :test #'equal))
        (out nil))
    (dolist (loc list)
      (let ((uri (or (plist-get loc :uri) (plist-get loc :targetUri)))
            (range (or (plist-get loc :range) (plist-get loc :targetSelectionRange))))
        (when (and uri range)
          (let* ((path (gemini-companion-tools--path uri))
                 (lines (gemini-companion-tools--lines cache path))
                 (r (gemini-companion-tools--range-from-lsp lines range))
                 (row (1- (plist-get (plist-get r :start) :line))))
            (push (list :path path :range r :text (if (< row (length lines)) (aref lines row) "")) out)))))
    (gemini-companion-tools--result :locations (nreverse out) max)))

(defun gemini-companion-tools--xref-locations (items max)
  "Xref ITEMS on the link, at most MAX."
  (gemini-companion-tools--result
   :locations
   (delq nil
         (mapcar
          (lambda (item)
            (let ((marker (ignore-errors (xref-location-marker (xref-item-location item)))))
              (when marker
                (with-current-buffer (marker-buffer marker)
                  (when buffer-file-name
                    (let ((pos (gemini-companion-tools--pos marker)))
                      (list :path (file-truename buffer-file-name)
                            :range (list :start pos :end pos)
                            :text (save-excursion (goto-char marker)
                                                  (buffer-substring-no-properties (line-beginning-position) (line-end-position))))))))))
          items))
   max))

(defun gemini-companion-tools--xref-usable-p ()
  "Non-nil when xref has a backend here that will not ask the user for a tags file."
  (let ((backend (xref-find-backend)))
    (and backend (or (not (eq backend 'etags)) tags-file-name tags-table-list))))

(defun gemini-companion-tools--at-position (params reply method extra fallback convert)
  "Ask METHOD (with EXTRA params) at PARAMS' position; REPLY gets CONVERT's answer.
Without a language server, FALLBACK (a function of the point, or nil)
answers at once."
  (let* ((path (plist-get params :path))
         (buf (gemini-companion-tools--buffer path)))
    (with-current-buffer buf
      (let ((point (gemini-companion-tools--point path params))
            (server (gemini-companion-tools--server)))
        (cond
         (server
          (gemini-companion-tools--ask
           server method
           (append (list :textDocument (list :uri (gemini-companion-tools--uri path))
                         :position (gemini-companion-tools--lsp-position point))
                   extra)
           reply convert))
         ((and fallback (gemini-companion-tools--xref-usable-p))
          (funcall reply nil (funcall fallback point)))
         (t (gemini-companion-tools--no-server path method)))))))

(defun gemini-companion-tools-get-definition (params reply)
  "Answer editor/getDefinition for PARAMS: call REPLY with (ERROR RESULT)."
  (let ((max (gemini-companion-tools--max params)))
    (gemini-companion-tools--at-position
     params reply :textDocument/definition nil
     (lambda (point)
       (let* ((backend (xref-find-backend))
              (id (save-excursion (goto-char point) (xref-backend-identifier-at-point backend))))
         (gemini-companion-tools--xref-locations (and id (xref-backend-definitions backend id)) max)))
     (lambda (result) (gemini-companion-tools--locations result max)))))

(defun gemini-companion-tools-get-references (params reply)
  "Answer editor/getReferences for PARAMS: call REPLY with (ERROR RESULT)."
  (let ((max (gemini-companion-tools--max params)))
    (gemini-companion-tools--at-position
     params reply :textDocument/references (list :context (list :includeDeclaration t))
     (lambda (point)
       (let* ((backend (xref-find-backend))
              (id (save-excursion (goto-char point) (xref-backend-identifier-at-point backend))))
         (gemini-companion-tools--xref-locations (and id (xref-backend-references backend id)) max)))
     (lambda (result) (gemini-companion-tools--locations result max)))))

(defun gemini-companion-tools--hover-text (contents)
  "LSP hover CONTENTS as text."
  (cond ((stringp contents) contents)
        ((vectorp contents)
         (mapconcat #'identity (delete "" (mapcar #'gemini-companion-tools--hover-text contents)) "\n\n"))
        ((and (listp contents) (plist-get contents :language))
         (format "```%s\n%s\n```" (plist-get contents :language) (plist-get contents :value)))
        ((listp contents) (or (plist-get contents :value) ""))
        (t "")))

(defun gemini-companion-tools-get-hover (params reply)
  "Answer editor/getHover for PARAMS: call REPLY with (ERROR RESULT)."
  (gemini-companion-tools--at-position
   params reply :textDocument/hover nil nil
   (lambda (result)
     (if (not result)
         (list :contents "")
       (append (list :contents (gemini-companion-tools--hover-text (plist-get result :contents)))
               (when (plist-get result :range)
                 (list :range (gemini-companion-tools--range-from-lsp
                               (gemini-companion-tools--lines (make-hash-table :test #'equal) (plist-get params :path))
                               (plist-get result :range)))))))))

;;; Outlines and workspace symbols

(defun gemini-companion-tools--kind (n)
  "The link's name of LSP symbol kind N."
  (if (and (integerp n) (<= 1 n (length gemini-companion-tools--kinds)))
      (aref gemini-companion-tools--kinds (1- n))
    "other"))

(defun gemini-companion-tools--imenu (index max)
  "Imenu INDEX (an alist) as outline symbols, at most MAX in all."
  (let ((count 0) (truncated nil))
    (cl-labels
        ((walk (alist kind)
               (let (out)
                 (dolist (entry alist)
                   (cond
                    ((>= count max) (setq truncated t))
                    ((imenu--subalist-p entry)
                     (let ((children (walk (cdr entry) (car entry))))
                       ;; Groups ("Functions", "Types"): their entries.
                       (setq out (append out children))))
                    ((and (consp entry) (or (markerp (cdr entry)) (integerp (cdr entry))
                                            (overlayp (cdr entry))))
                     (setq count (1+ count))
                     (let* ((pos (if (overlayp (cdr entry)) (overlay-start (cdr entry)) (cdr entry)))
                            (p (gemini-companion-tools--pos pos)))
                       (setq out (append out (list (list :name (car entry)
                                                         :kind (gemini-companion-tools--imenu-kind kind)
                                                         :range (list :start p :end p)))))))))
                 out)))
      (cons (walk index nil) truncated))))

(defun gemini-companion-tools--imenu-kind (group)
  "The link's symbol kind of an imenu GROUP name."
  (let ((g (downcase (or group ""))))
    (cond ((string-match-p "func\\|defun\\|procedure" g) "function")
          ((string-match-p "method" g) "method")
          ((string-match-p "class" g) "class")
          ((string-match-p "struct" g) "struct")
          ((string-match-p "interface" g) "interface")
          ((string-match-p "type" g) "class")
          ((string-match-p "var\\|field" g) "variable")
          ((string-match-p "const" g) "constant")
          ((string-match-p "package\\|module\\|import" g) "module")
          (t "other"))))

(defun gemini-companion-tools--outline (result lines max)
  "LSP document symbols RESULT, in a file of LINES, as the link's, at most MAX."
  (let ((count 0) (truncated nil))
    (cl-labels
        ((convert (list)
                  (let (out)
                    (dolist (s (append list nil))
                      (if (>= count max)
                          (setq truncated t)
                        (let ((range (or (plist-get s :range) (plist-get (plist-get s :location) :range))))
                          (when range
                            (setq count (1+ count))
                            (let ((children (convert (plist-get s :children)))
                                  (detail (plist-get s :detail)))
                              (push (append (list :name (plist-get s :name)
                                                  :kind (gemini-companion-tools--kind (plist-get s :kind))
                                                  :range (gemini-companion-tools--range-from-lsp lines range))
                                            (and (stringp detail) (not (string-empty-p detail)) (list :detail detail))
                                            (and children (list :children (vconcat children))))
                                    out))))))
                    (nreverse out))))
      (let ((syms (convert result)))
        (if truncated
            (list :symbols (vconcat syms) :truncated t)
          (list :symbols (vconcat syms)))))))

(defun gemini-companion-tools-get-document-symbols (params reply)
  "Answer editor/getDocumentSymbols for PARAMS: call REPLY with (ERROR RESULT)."
  (let* ((path (plist-get params :path))
         (max (gemini-companion-tools--max params))
         (buf (gemini-companion-tools--buffer path)))
    (with-current-buffer buf
      (let ((server (gemini-companion-tools--server)))
        (if (not server)
            (let ((index (condition-case nil
                             (save-excursion (let ((imenu-auto-rescan t)) (imenu--make-index-alist t)))
                           (error nil))))
              (unless index
                (gemini-companion-tools--fail gemini-companion-tools--not-available
                                              "Emacs has no outline of %s: start eglot in its buffer, or use a major mode with imenu support"
                                              (gemini-companion-tools--name path)))
              (let ((res (gemini-companion-tools--imenu
                          (cl-remove-if (lambda (e) (equal (car e) imenu--rescan-item)) index) max)))
                (funcall reply nil
                         (if (cdr res)
                             (list :symbols (vconcat (car res)) :truncated t)
                           (list :symbols (vconcat (car res)))))))
          (gemini-companion-tools--ask
           server :textDocument/documentSymbol
           (list :textDocument (list :uri (gemini-companion-tools--uri path)))
           reply
           (lambda (result)
             (gemini-companion-tools--outline
              result (gemini-companion-tools--lines (make-hash-table :test #'equal) path) max))))))))

(defun gemini-companion-tools--workspace-symbols (result max)
  "LSP workspace symbols RESULT as the link's, at most MAX."
  (let ((cache (make-hash-table :test #'equal))
        (out nil))
    (dolist (s (append result nil))
      (let* ((loc (plist-get s :location))
             (uri (plist-get loc :uri)))
        (when uri
          (let* ((path (gemini-companion-tools--path uri))
                 (range (or (plist-get loc :range) '(:start (:line 0 :character 0) :end (:line 0 :character 0))))
                 (container (plist-get s :containerName)))
            (push (append (list :name (plist-get s :name)
                                :kind (gemini-companion-tools--kind (plist-get s :kind))
                                :path path
                                :range (gemini-companion-tools--range-from-lsp
                                        (gemini-companion-tools--lines cache path) range))
                          (and (stringp container) (not (string-empty-p container))
                               (list :containerName container)))
                  out)))))
    (gemini-companion-tools--result :symbols (nreverse out) max)))

(defun gemini-companion-tools-search-workspace-symbols (params reply)
  "Answer editor/searchWorkspaceSymbols for PARAMS: call REPLY with (ERROR RESULT)."
  (let* ((query (or (plist-get params :query) ""))
         (max (gemini-companion-tools--max params))
         (server (cl-some (lambda (b) (with-current-buffer b (gemini-companion-tools--server)))
                          (cons (current-buffer) (buffer-list)))))
    (unless server
      (gemini-companion-tools--fail gemini-companion-tools--not-available
                                    "Emacs has no language server running to search workspace symbols: start eglot in a buffer of the project"))
    (gemini-companion-tools--ask server :workspace/symbol (list :query query) reply
                                 (lambda (result) (gemini-companion-tools--workspace-symbols result max)))))

;;; Open files

(defun gemini-companion-tools--file-window-buffer ()
  "The file buffer the user is in, or nil.
The selected window's buffer if it visits a file, else that of the
first window that does (the user may be in a terminal)."
  (let ((buf (window-buffer (selected-window))))
    (if (buffer-file-name buf)
        buf
      (cl-find-if #'buffer-file-name (mapcar #'window-buffer (window-list nil 'no-minibuf))))))

(defun gemini-companion-tools-get-open-editors (params)
  "Answer editor/getOpenEditors for PARAMS."
  (let* ((active (gemini-companion-tools--file-window-buffer))
         (bufs (cl-remove-if-not #'buffer-file-name (buffer-list)))
         (bufs (if active (cons active (delq active bufs)) bufs))
         (out nil))
    (dolist (buf bufs)
      (with-current-buffer buf
        (let* ((win (get-buffer-window buf t))
               (point (if win (window-point win) (point)))
               (ed (list :path (file-truename buffer-file-name)
                         :cursor (gemini-companion-tools--pos point))))
          (when (eq buf active)
            (setq ed (append ed (list :active t)))
            (when (region-active-p)
              (setq ed (append ed (list :selection (list :start (gemini-companion-tools--pos (region-beginning))
                                                         :end (gemini-companion-tools--pos (region-end)))
                                        :selectedText (buffer-substring-no-properties (region-beginning) (region-end)))))))
          (when (buffer-modified-p)
            (setq ed (append ed (list :dirty t))))
          (push ed out))))
    (gemini-companion-tools--result :editors (nreverse out) (gemini-companion-tools--max params))))

(defvar gemini-companion-tools--highlight nil
  "The overlay of the lines `editor/openFile' marked, and its window.")

(defun gemini-companion-tools--unhighlight ()
  "Remove openFile's highlight once the user moved in its window."
  (pcase gemini-companion-tools--highlight
    (`(,ov ,win ,pos)
     (when (or (not (overlay-buffer ov))
               (and (eq (selected-window) win) (/= (point) pos)))
       (delete-overlay ov)
       (setq gemini-companion-tools--highlight nil)
       (remove-hook 'post-command-hook #'gemini-companion-tools--unhighlight)))))

(defun gemini-companion-tools-open-file (params)
  "Answer editor/openFile for PARAMS: show the file, at the line asked."
  (let* ((path (plist-get params :path))
         (line (plist-get params :line))
         (buf (gemini-companion-tools--buffer path))
         ;; A window of the frame that is not a terminal's, else a new one.
         (win (display-buffer buf '((display-buffer-reuse-window display-buffer-use-some-window)
                                    (inhibit-same-window . nil)))))
    (when (integerp line)
      (with-current-buffer buf
        (let ((count (save-restriction (widen) (count-lines (point-min) (point-max)))))
          (when (> line (max count 1))
            (gemini-companion-tools--invalid "line %d is past the end of %s (%d lines)"
                                             line (gemini-companion-tools--name path) count))
          (let* ((last (min (max (or (plist-get params :endLine) line) line) count))
                 (beg (save-excursion (goto-char (point-min)) (forward-line (1- line)) (point)))
                 (end (save-excursion (goto-char (point-min)) (forward-line (1- last)) (line-end-position))))
            (when win
              (set-window-point win beg)
              (with-selected-window win (recenter)))
            (pcase gemini-companion-tools--highlight (`(,ov . ,_) (delete-overlay ov)))
            (let ((ov (make-overlay beg end)))
              (overlay-put ov 'face 'region)
              (overlay-put ov 'gemini-companion-open t)
              (setq gemini-companion-tools--highlight (list ov win beg))
              (add-hook 'post-command-hook #'gemini-companion-tools--unhighlight))))))
    (make-hash-table :size 1)))

;;; Wiring

(defconst gemini-companion-tools--handlers
  '(("editor/getDiagnostics" :diagnostics gemini-companion-tools-get-diagnostics)
    ("editor/getDefinition" :definition gemini-companion-tools-get-definition later)
    ("editor/getReferences" :references gemini-companion-tools-get-references later)
    ("editor/getHover" :hover gemini-companion-tools-get-hover later)
    ("editor/getDocumentSymbols" :documentSymbols gemini-companion-tools-get-document-symbols later)
    ("editor/searchWorkspaceSymbols" :workspaceSymbols gemini-companion-tools-search-workspace-symbols later)
    ("editor/getOpenEditors" :openEditors gemini-companion-tools-get-open-editors)
    ("editor/openFile" :openFile gemini-companion-tools-open-file))
  "The editor/* methods: their capability and handler.
Those marked `later' may ask a language server: they answer when it
has, through `gemini-companion-link-on-later', so that Emacs does not
wait for it; the others answer at once.")

(defun gemini-companion-tools-capabilities ()
  "The editor tools' capabilities for `initialize', as a plist."
  (cl-loop for (_method cap) in gemini-companion-tools--handlers
           append (list cap (if gemini-companion-tools t :json-false))))

(setq gemini-companion-link-capabilities-function #'gemini-companion-tools-capabilities)

(defun gemini-companion-tools--check-on ()
  "Answer that the tools are off unless `gemini-companion-tools' is on."
  (unless gemini-companion-tools
    (gemini-companion-tools--fail gemini-companion-tools--not-available
                                  "the editor tools are off in Emacs (gemini-companion-tools)")))

(dolist (h gemini-companion-tools--handlers)
  (let ((fn (nth 2 h)))
    (if (eq (nth 3 h) 'later)
        (gemini-companion-link-on-later
         (car h)
         (lambda (params reply)
           (gemini-companion-tools--check-on)
           (funcall fn params reply)))
      (gemini-companion-link-on
       (car h)
       (lambda (params)
         (gemini-companion-tools--check-on)
         (funcall fn params))))))

(provide 'gemini-companion-tools)
;;; gemini-companion-tools.el ends here

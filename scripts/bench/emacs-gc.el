;;; emacs-gc.el --- What the Emacs package adds to a garbage collection -*- lexical-binding: t -*-

;; Run from the repository root, without -Q so that Debian's site files
;; put the installed ELPA packages (eglot) on the load path:
;;
;;   emacs --batch -l scripts/bench/emacs-gc.el
;;
;; Times a full collection (the mean of 30) in a bare Emacs, then with
;; eglot and the libraries the package uses (jsonrpc, flymake, xref,
;; project, diff-mode, smerge-mode, compile, imenu) loaded, as they are in
;; the Emacs of a user with a language server, then with the package
;; loaded too.  A collection marks everything loaded, so a heavier heap
;; makes every collection longer; the three figures say how much of that
;; is the package's own.  See docs/performance.md.

;;; Code:

(defun emacs-gc--mean-ms (n)
  "The mean time of N full garbage collections, in ms."
  (garbage-collect)
  (let ((t0 (float-time)))
    (dotimes (_ n) (garbage-collect))
    (/ (* 1000 (- (float-time) t0)) n)))

(let ((bare (emacs-gc--mean-ms 30)))
  (dolist (f '(eglot jsonrpc flymake xref project diff-mode smerge-mode compile imenu))
    (require f))
  (let ((libraries (emacs-gc--mean-ms 30)))
    (add-to-list 'load-path (expand-file-name "plugins/emacs"))
    (require 'gemini-companion)
    (let ((package (emacs-gc--mean-ms 30)))
      (message "ms per full collection: bare %.2f; with eglot and the libraries %.2f; and the package %.2f"
               bare libraries package))))

;;; emacs-gc.el ends here

;;; emacs-report.el --- What one cursor report costs the Emacs package -*- lexical-binding: t -*-

;; Run from the repository root (PLUGINS: another checkout's plugins/emacs
;; to compare):
;;
;;   emacs --batch -Q -l scripts/bench/emacs-report.el
;;   PLUGINS=/path/to/plugins/emacs emacs --batch -Q -l scripts/bench/emacs-report.el
;;
;; Times `gemini-companion-context-flush' for 300 reports of a selection
;; of 1, 100, 500 and 1,000 lines of about 60 characters (two sizes that
;; differ by a line, alternated, so every report is sent), and 3,000
;; reports of the cursor alone, and prints the time, the bytes the
;; package allocated and the garbage collections per report.  The
;; sidecar is `cat > /dev/null' on a pipe: the writes are real, the
;; reading side is not the sidecar.  See docs/performance.md.

;;; Code:

(add-to-list 'load-path (or (getenv "PLUGINS") (expand-file-name "plugins/emacs")))
(require 'gemini-companion)
(require 'gemini-companion-context)
(setq gemini-companion-link--state 'running
      gemini-companion-link--conn 'bench
      gemini-companion-link--proc
      (make-process :name "sink" :command '("sh" "-c" "cat > /dev/null")
                    :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t))
(let ((file (make-temp-file "gic-report" nil ".txt")))
  (with-temp-file file
    (dotimes (i 2000)
      (insert (format "line %4d: the quick brown fox jumps over the lazy dog, twice.\n" (1+ i)))))
  (find-file file))
(transient-mark-mode 1)

(load (expand-file-name "emacs-allocated.el" (file-name-directory load-file-name)) nil t)

(defun emacs-report--run (label n select lines)
  "Send N reports (a selection of LINES lines if SELECT) and print LABEL's figures."
  (garbage-collect)
  (let ((a0 (bench-allocated)) (g0 gcs-done) (e0 gc-elapsed) (t0 (current-time)))
    (dotimes (i n)
      (deactivate-mark)
      (goto-char (point-min))
      (when select (set-mark (point)) (activate-mark))
      (forward-line (+ lines (% i 2)))
      (gemini-companion-context-flush))
    (message "%-28s %9.1f µs/report %9.0f B/report %4d collections (%.0f ms)"
             label (/ (* 1e6 (float-time (time-subtract (current-time) t0))) n)
             (/ (- (bench-allocated) a0) (float n))
             (- gcs-done g0) (* 1000 (- gc-elapsed e0)))))

(message "%s, package from %s" (car (split-string (emacs-version) "\n"))
         (file-name-directory (locate-library "gemini-companion")))
(dolist (lines '(1 100 500 1000))
  (emacs-report--run (format "selection of %d lines" lines) 300 t lines))
(emacs-report--run "cursor only" 3000 nil 10)
(delete-file (buffer-file-name))
(set-buffer-modified-p nil)
(kill-emacs 0)

;;; emacs-report.el ends here

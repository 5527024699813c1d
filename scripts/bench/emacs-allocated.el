;;; emacs-allocated.el --- Bytes Emacs has allocated, for the benchmarks -*- lexical-binding: t -*-

;; Loaded by scripts/bench/emacs-report.el and scripts/bench-emacs-toggle.sh.

;;; Code:

(defun bench-allocated ()
  "Bytes allocated so far, from `memory-use-counts'.
Conses and floats 16 bytes each, vector slots 8, symbols 48, string
bytes 1, intervals 56, strings 32 (Emacs 28 on a 64-bit machine)."
  (let ((m (memory-use-counts)))
    (+ (* 16 (nth 0 m)) (* 16 (nth 1 m)) (* 8 (nth 2 m)) (* 48 (nth 3 m))
       (nth 4 m) (* 56 (nth 5 m)) (* 32 (nth 6 m)))))

(provide 'emacs-allocated)
;;; emacs-allocated.el ends here

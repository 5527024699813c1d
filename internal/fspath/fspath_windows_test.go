package fspath

import "testing"

// TestWindowsPathsCompareAsWindowsDoes: case, separators and the drive
// letter's case do not matter; a name that only starts like the folder is
// not inside it.
func TestWindowsPathsCompareAsWindowsDoes(t *testing.T) {
	for _, c := range []struct {
		dir, p string
		within bool
	}{
		{`C:\Work\proj`, `c:\work\PROJ\app.py`, true},
		{`c:\work\proj`, `C:/Work/Proj/sub/x.txt`, true},
		{`C:\Work\proj\`, `C:\Work\proj`, true},
		{`C:\Users\Zoë\My Project`, `c:\users\ZOË\my project\a b.txt`, true},
		{`C:\Work\proj`, `C:\Work\proj2\app.py`, false},
		{`C:\Work\proj`, `D:\Work\proj\app.py`, false},
		{`C:\`, `c:\anything\at\all`, true},
	} {
		if got := Within(c.dir, c.p); got != c.within {
			t.Errorf("Within(%q, %q) = %v, want %v", c.dir, c.p, got, c.within)
		}
	}
	if !Equal(`c:\Work\App.py`, `C:/work/app.PY`) {
		t.Error("two names of one file differ")
	}
	if Equal(`C:\straße`, `C:\STRASSE`) {
		t.Error("ß folded into SS: Windows compares one character at a time")
	}
}

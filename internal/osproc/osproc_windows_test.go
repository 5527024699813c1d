package osproc

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

func grantEveryone(t *testing.T, path string, rights windows.ACCESS_MASK) {
	t.Helper()
	everyone, err := windows.CreateWellKnownSid(windows.WinWorldSid)
	if err != nil {
		t.Fatal(err)
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: rights,
		AccessMode:        windows.GRANT_ACCESS,
		Inheritance:       windows.NO_INHERITANCE,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_WELL_KNOWN_GROUP,
			TrusteeValue: windows.TrusteeValueFromSID(everyone),
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
		t.Fatal(err)
	}
}

// TestOthersCanWriteReadsTheACL: a folder whose ACL lets Everyone write is
// seen as open to others (mode bits say nothing on Windows); the same
// folder made private is not.
func TestOthersCanWriteReadsTheACL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	grantEveryone(t, dir, windows.GENERIC_ALL)
	fi, _ := os.Lstat(dir)
	if !OthersCanWrite(dir, fi) {
		t.Fatal("a folder that grants Everyone full control is not seen as writable by others")
	}
	if err := MakePrivate(dir, true); err != nil {
		t.Fatal(err)
	}
	if OthersCanWrite(dir, fi) {
		t.Fatal("a private folder is seen as writable by others")
	}
}

// TestMakePrivateLeavesOnlyTheOwner: the ACL MakePrivate sets grants the
// current user alone, and is kept.
func TestMakePrivateLeavesOnlyTheOwner(t *testing.T) {
	if testproc.UnderWine() {
		t.Skip("Wine does not keep ACLs: it rebuilds them from the Unix mode bits (Everyone gets read back), so the owner-only ACL can only be checked on real Windows")
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := MakePrivate(path, false); err != nil {
		t.Fatal(err)
	}
	me, err := currentUser()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		t.Fatalf("no DACL: %v", err)
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			t.Fatal(err)
		}
		if sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)); !sid.Equals(me) {
			t.Errorf("the ACL grants %s too: %s", sid, sd)
		}
	}
}

// TestParentsIsTheProcessTable: the snapshot holds this process under its
// parent.
func TestParentsIsTheProcessTable(t *testing.T) {
	parents, err := Parents()
	if err != nil {
		t.Fatal(err)
	}
	if ppid, ok := parents[os.Getpid()]; !ok || ppid != os.Getppid() {
		t.Fatalf("this process (%d, parent %d) in the snapshot: parent %d, present %v", os.Getpid(), os.Getppid(), ppid, ok)
	}
}

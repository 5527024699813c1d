package discovery

import (
	"testing"

	"golang.org/x/sys/windows"
)

// makeWorldWritable opens dir to every user: its ACL grants Everyone full
// control (as a folder shared carelessly, or one made under C:\ by an
// installer, may have).
func makeWorldWritable(t *testing.T, dir string) {
	t.Helper()
	everyone, err := windows.CreateWellKnownSid(windows.WinWorldSid)
	if err != nil {
		t.Fatal(err)
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_ALL,
		AccessMode:        windows.GRANT_ACCESS,
		Inheritance:       windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_WELL_KNOWN_GROUP,
			TrusteeValue: windows.TrusteeValueFromSID(everyone),
		},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION, nil, nil, acl, nil); err != nil {
		t.Fatal(err)
	}
}

// TestFindForWorkspaceComparesAsWindowsDoes: a workspace named c:\… with
// "/" or in another case holds the CLI's C:\… folder, even when the
// folder cannot be resolved on disk (a drive not mounted yet, a folder
// being created).
func TestFindForWorkspaceComparesAsWindowsDoes(t *testing.T) {
	f := sample(1)
	f.WorkspacePath = `c:/no such drive folder/Projet Été`
	got := FindForWorkspace([]Entry{{File: f}}, `C:\No Such Drive Folder\projet été\src`, func(int) bool { return true })
	if len(got) != 1 {
		t.Fatalf("the workspace %q does not hold C:\\No Such Drive Folder\\projet été\\src", f.WorkspacePath)
	}
	if got := FindForWorkspace([]Entry{{File: f}}, `C:\No Such Drive Folder\Projet Été 2`, func(int) bool { return true }); len(got) != 0 {
		t.Fatal("a folder whose name only starts like the workspace matched")
	}
}

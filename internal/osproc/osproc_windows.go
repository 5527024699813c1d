//go:build windows

package osproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"github.com/shirou/gopsutil/v4/process"
	"golang.org/x/sys/windows"
)

// currentUser returns the SID of the user the process runs as.
func currentUser() (*windows.SID, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("current user: %w", err)
	}
	return tu.User.Sid, nil
}

func ownerSID(path string) (*windows.SID, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return nil, err
	}
	owner, _, err := sd.Owner()
	return owner, err
}

// Mine reports whether the current user owns the file at path.
func Mine(path string, fi fs.FileInfo) bool {
	me, err := currentUser()
	if err != nil {
		return false
	}
	owner, err := ownerSID(path)
	return err == nil && owner != nil && owner.Equals(me)
}

// Owner returns a printable name of the file's owner (its SID).
func Owner(path string, fi fs.FileInfo) string {
	if owner, err := ownerSID(path); err == nil && owner != nil {
		return owner.String()
	}
	return "an unknown user"
}

// OthersCanWrite reports whether users other than the owner may replace
// entries in a directory. Windows expresses that in ACLs, not mode bits;
// the companion's own directory gets an owner-only ACL from MakePrivate,
// and the temp directory above it is per user.
func OthersCanWrite(fi fs.FileInfo) bool { return false }

// MakePrivate gives path a protected ACL that grants the current user full
// control and nobody else anything, the Windows counterpart of mode 0600 /
// 0700. A directory's entry is inherited by what is created in it.
func MakePrivate(path string, dir bool) error {
	me, err := currentUser()
	if err != nil {
		return err
	}
	inherit := uint32(windows.NO_INHERITANCE)
	if dir {
		inherit = windows.SUB_CONTAINERS_AND_OBJECTS_INHERIT
	}
	acl, err := windows.ACLFromEntries([]windows.EXPLICIT_ACCESS{{
		AccessPermissions: windows.GENERIC_ALL,
		AccessMode:        windows.GRANT_ACCESS,
		Inheritance:       inherit,
		Trustee: windows.TRUSTEE{
			TrusteeForm:  windows.TRUSTEE_IS_SID,
			TrusteeType:  windows.TRUSTEE_IS_USER,
			TrusteeValue: windows.TrusteeValueFromSID(me),
		},
	}}, nil)
	if err != nil {
		return fmt.Errorf("owner-only ACL: %w", err)
	}
	err = windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, acl, nil)
	if err != nil {
		return fmt.Errorf("set owner-only ACL on %s: %w", path, err)
	}
	return nil
}

// OpenNoFollow opens path for reading, refusing a symbolic link or other
// reparse point at path. Windows keeps pipes out of the file system, so an
// open cannot block the way a FIFO's does elsewhere.
func OpenNoFollow(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a link or reparse point")}
	}
	return os.Open(path)
}

// Alive reports whether pid names a running process.
func Alive(pid int) bool {
	if !validPID(pid) {
		return false
	}
	ok, err := process.PidExists(int32(pid))
	return err == nil && ok
}

// StopSignals are the signals that ask the companion to stop cleanly:
// Ctrl-C, and closing the console, logging off or shutting down (which Go
// reports as SIGTERM).
func StopSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM}
}

// SurviveBrokenPipe does nothing on Windows: a write to a closed pipe
// returns an error and never kills the process.
func SurviveBrokenPipe() {}

// Pollable returns f: Windows console and pipe handles are read as they
// are.
func Pollable(f *os.File) *os.File { return f }

// OwnGroup does nothing on Windows: there are no process groups to signal.
func OwnGroup(*exec.Cmd) {}

// TerminateGroup kills the process of cmd: Windows has no polite stop for
// a console child that is not ours to send Ctrl-Break to.
func TerminateGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

// KillGroup kills the process of cmd.
func KillGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }

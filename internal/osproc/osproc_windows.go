//go:build windows

package osproc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
	"unsafe"

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

// OthersCanWrite reports whether users other than the owner may add,
// remove or replace entries in the directory at path. Windows says so in
// the directory's ACL, not in mode bits: an entry that allows Everyone,
// Users, Authenticated Users, Interactive, Guests or Anonymous to write
// to it (add a file or folder, delete a child, or take over the ACL or
// the ownership), or no ACL at all (everyone may do anything). An ACL that
// cannot be read counts as writable: the caller then refuses the folder.
func OthersCanWrite(path string, fi fs.FileInfo) bool {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return true
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		// ERROR_OBJECT_NOT_FOUND: no DACL at all, which allows everyone
		// everything.
		return true
	}
	if dacl == nil {
		return true
	}
	broad := broadSIDs()
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return true
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE || ace.Header.AceFlags&windows.INHERIT_ONLY_ACE != 0 {
			continue
		}
		if ace.Mask&dirWrite == 0 {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		for _, b := range broad {
			if sid.Equals(b) {
				return true
			}
		}
	}
	return false
}

// dirWrite is every right that lets a user change a directory's entries,
// or give itself that right.
const dirWrite = fileAddFile | fileAddSubdirectory | fileDeleteChild |
	windows.GENERIC_WRITE | windows.GENERIC_ALL | windows.WRITE_DAC | windows.WRITE_OWNER

// The directory rights of winnt.h that x/sys/windows does not name.
const (
	fileAddFile         = 0x0002
	fileAddSubdirectory = 0x0004
	fileDeleteChild     = 0x0040
)

// broadSIDs are the groups that stand for other users.
func broadSIDs() []*windows.SID {
	var out []*windows.SID
	for _, t := range []windows.WELL_KNOWN_SID_TYPE{
		windows.WinWorldSid, windows.WinBuiltinUsersSid, windows.WinAuthenticatedUserSid,
		windows.WinInteractiveSid, windows.WinBuiltinGuestsSid, windows.WinAnonymousSid,
	} {
		if sid, err := windows.CreateWellKnownSid(t); err == nil {
			out = append(out, sid)
		}
	}
	return out
}

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
// reparse point at path (the handle itself is checked, so a name swapped
// after a check cannot slip through). The file is opened with delete
// sharing, as Node opens files: while it is open, its writer may still
// replace it (Replace) or remove it. Windows keeps pipes out of the file
// system, so an open cannot block the way a FIFO's does elsewhere.
func OpenNoFollow(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_FLAG_OPEN_REPARSE_POINT|windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("is a link or reparse point")}
	}
	return os.NewFile(uintptr(h), path), nil
}

// Replace renames oldpath to newpath (both in one directory), replacing
// newpath if it exists, in one step: a reader sees the old file or the new
// one, never a part. It renames with POSIX semantics where the file system
// has them (os.Root's Rename; NTFS on Windows 10 1709 and newer), so a
// reader that opened newpath with delete sharing (OpenNoFollow, Node) does
// not stand in the way. A reader without it (Go's os.Open, an editor, a
// virus scanner), or any reader on a file system without those semantics,
// makes Windows refuse; such a reader is brief, so Replace tries again for
// up to two seconds before it gives up and leaves newpath as it was.
func Replace(oldpath, newpath string) error {
	dir := filepath.Dir(newpath)
	if filepath.Dir(oldpath) != dir {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errors.New("not in one directory")}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	deadline := time.Now().Add(2 * time.Second)
	wait := time.Millisecond
	for {
		err := root.Rename(filepath.Base(oldpath), filepath.Base(newpath))
		if err == nil || !(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) || time.Now().After(deadline) {
			if err != nil {
				return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errors.Unwrap(err)}
			}
			return nil
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// Parents returns a snapshot of the running processes: each PID with its
// parent's PID, as Windows keeps them (a parent's PID stays even after
// the parent has exited).
func Parents() (map[int]int, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, fmt.Errorf("process snapshot: %w", err)
	}
	defer windows.CloseHandle(snap)
	out := map[int]int{}
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		out[int(e.ProcessID)] = int(e.ParentProcessID)
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, fmt.Errorf("process snapshot: %w", err)
	}
	return out, nil
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

// OwnGroup does nothing on Windows: there are no process groups. The
// processes cmd starts are found through their parent PIDs when the group
// is stopped.
func OwnGroup(*exec.Cmd) {}

// TerminateGroup kills the process of cmd and every process it started,
// and theirs (a server started through a .cmd shim is cmd.exe running
// node.exe): Windows has no polite stop for a console child that is not
// ours to send Ctrl-Break to, and no process group to stop at once.
func TerminateGroup(cmd *exec.Cmd) { killTree(cmd) }

// KillGroup kills the process of cmd and every process it started.
func KillGroup(cmd *exec.Cmd) { killTree(cmd) }

// killTree kills cmd's process and its descendants, parents before their
// children (so none starts another meanwhile), from snapshots of the
// process table until none is left (a few rounds at most). A parent PID
// stays recorded after the parent exits, so children of a killed process
// are still found by it.
func killTree(cmd *exec.Cmd) {
	root := cmd.Process.Pid
	killed := map[int]bool{}
	for round := 0; round < 5; round++ {
		parents, err := Parents()
		if err != nil {
			break
		}
		children := map[int][]int{}
		for pid, ppid := range parents {
			if pid != ppid {
				children[ppid] = append(children[ppid], pid)
			}
		}
		var order []int
		queue := []int{root}
		seen := map[int]bool{root: true}
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			order = append(order, pid)
			for _, c := range children[pid] {
				if !seen[c] {
					seen[c] = true
					queue = append(queue, c)
				}
			}
		}
		fresh := 0
		for _, pid := range order {
			if pid == root {
				_ = cmd.Process.Kill()
			} else if _, alive := parents[pid]; alive && !killed[pid] {
				terminate(pid)
				fresh++
			}
			killed[pid] = true
		}
		if fresh == 0 {
			break
		}
	}
}

// terminate ends the process pid, if it may.
func terminate(pid int) {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(h)
	_ = windows.TerminateProcess(h, 1)
}

// KeepFromChildren makes f's handle one that no process started later
// inherits, whatever handle list a process launcher honours (Go's own
// restricts inheritance to the standard handles, Wine's does not): a pipe
// end that must close when this process ends, such as the lifeline of a
// server it started, then does.
func KeepFromChildren(f *os.File) error {
	return windows.SetHandleInformation(windows.Handle(f.Fd()), windows.HANDLE_FLAG_INHERIT, 0)
}

// OnTerminal does nothing on Windows: there are no controlling
// terminals.
func OnTerminal(*exec.Cmd) {}

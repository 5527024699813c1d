// Command editorhost plays the process tree of an editor on Windows for the
// Wine end-to-end tests: like Neovim or Sublime Text, it starts the
// sidecar as its child (the editor link on the child's stdin and stdout)
// and, once the sidecar has answered initialize, opens a "terminal": a
// shell child running the given command (Gemini CLI), on its own console.
// With -terminal-env the terminal gets the initialize result's env, as
// editor plugins give it; without, the CLI must find the sidecar through
// the discovery file alone.
//
// The editor's side of the link is played by the Go test on Linux: this
// program relays it over a TCP connection to -link, byte for byte.
//
//	editorhost -link 127.0.0.1:N -sidecar C:\gic.exe [-sidecar-log F] [-terminal-env] -- cmd.exe /d /c gemini.cmd
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
)

func main() {
	linkAddr := flag.String("link", "", "TCP address of the test playing the editor")
	sidecar := flag.String("sidecar", "", "the sidecar executable")
	sidecarLog := flag.String("sidecar-log", "", "the sidecar's --log-file")
	terminalEnv := flag.Bool("terminal-env", false, "give the terminal the initialize result's env")
	flag.Parse()
	if *linkAddr == "" || *sidecar == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: editorhost -link ADDR -sidecar EXE [-sidecar-log FILE] [-terminal-env] -- COMMAND...")
		os.Exit(2)
	}
	if err := run(*linkAddr, *sidecar, *sidecarLog, *terminalEnv, flag.Args()); err != nil {
		fmt.Fprintf(os.Stderr, "editorhost: %v\n", err)
		os.Exit(1)
	}
}

func run(linkAddr, sidecar, sidecarLog string, terminalEnv bool, terminal []string) error {
	conn, err := net.Dial("tcp", linkAddr)
	if err != nil {
		return fmt.Errorf("dial the test: %w", err)
	}
	defer conn.Close()
	args := []string{"--stdio", "--log-level", "debug"}
	if sidecarLog != "" {
		args = append(args, "--log-file", sidecarLog)
	}
	sc := exec.Command(sidecar, args...)
	sc.Stderr = os.Stderr
	in, err := sc.StdinPipe()
	if err != nil {
		return err
	}
	out, err := sc.StdoutPipe()
	if err != nil {
		return err
	}
	if err := sc.Start(); err != nil {
		return fmt.Errorf("start the sidecar: %w", err)
	}
	fmt.Fprintf(os.Stderr, "editorhost: pid %d, sidecar pid %d\n", os.Getpid(), sc.Process.Pid)

	// The test's messages to the sidecar; the link ends when the test
	// closes its connection.
	go func() {
		io.Copy(in, conn)
		in.Close()
	}()

	var term *exec.Cmd
	var termMu sync.Mutex
	termDone := make(chan error, 1)
	// The sidecar's messages to the test, watched for the answer to
	// initialize.
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := conn.Write(line); werr != nil {
				break
			}
			termMu.Lock()
			started := term != nil
			termMu.Unlock()
			if env, ok := initializeEnv(line); ok && !started {
				cmd := exec.Command(terminal[0], terminal[1:]...)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
				cmd.Env = terminalEnviron(env, terminalEnv)
				if err := cmd.Start(); err != nil {
					return fmt.Errorf("open the terminal: %w", err)
				}
				termMu.Lock()
				term = cmd
				termMu.Unlock()
				go func() { termDone <- cmd.Wait() }()
			}
		}
		if err != nil {
			break
		}
	}
	scErr := sc.Wait()
	conn.Close()
	termMu.Lock()
	started := term != nil
	termMu.Unlock()
	if started {
		<-termDone
	}
	var ee *exec.ExitError
	if scErr != nil && !errors.As(scErr, &ee) {
		return fmt.Errorf("sidecar: %w", scErr)
	}
	return nil
}

// initializeEnv returns the env of an initialize result line.
func initializeEnv(line []byte) (map[string]string, bool) {
	var msg struct {
		Result *struct {
			Port int               `json:"port"`
			Env  map[string]string `json:"env"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Result == nil || msg.Result.Port == 0 || msg.Result.Env == nil {
		return nil, false
	}
	return msg.Result.Env, true
}

// terminalEnviron is this process's environment without any
// GEMINI_CLI_IDE_* variable, plus env when withEnv.
func terminalEnviron(env map[string]string, withEnv bool) []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(strings.ToUpper(kv), "GEMINI_CLI_IDE_") {
			out = append(out, kv)
		}
	}
	if withEnv {
		for k, v := range env {
			out = append(out, k+"="+v)
		}
	}
	return out
}

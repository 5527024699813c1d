// Command rpcgen writes package rpc's generated file from protocol.Methods
// (see package rpcsrc). go generate runs it in link/protocol; with
// -check it compares instead of writing, and fails when the file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol/internal/rpcsrc"
)

func main() {
	out := flag.String("out", "rpc/methods_gen.go", "file to write")
	check := flag.Bool("check", false, "fail if -out differs from what would be written, instead of writing it")
	flag.Parse()
	data, err := rpcsrc.Generate()
	if err != nil {
		fmt.Fprintf(os.Stderr, "rpcgen: %v\n", err)
		os.Exit(1)
	}
	if *check {
		have, err := os.ReadFile(*out)
		if err != nil || !bytes.Equal(have, data) {
			fmt.Fprintf(os.Stderr, "rpcgen: %s is stale; run: go generate ./link/protocol\n", *out)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "rpcgen: %v\n", err)
		os.Exit(1)
	}
}

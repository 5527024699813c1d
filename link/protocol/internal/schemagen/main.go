// Command schemagen writes the JSON Schema of the editor link from the Go
// types of package protocol: every params and result type of protocol.Methods
// becomes a definition, with the types' and fields' doc comments as
// descriptions. go generate runs it in link/protocol; with -check it
// compares instead of writing, and fails when the file is stale.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/gemini-ide-companion/gemini-ide-companion/link/protocol/internal/schema"
)

func main() {
	out := flag.String("out", "editor-link.schema.json", "file to write")
	src := flag.String("src", ".", "folder of package protocol's source (for doc comments)")
	check := flag.Bool("check", false, "fail if -out differs from what would be written, instead of writing it")
	flag.Parse()
	data, err := schema.Generate(*src)
	if err != nil {
		fmt.Fprintf(os.Stderr, "schemagen: %v\n", err)
		os.Exit(1)
	}
	if *check {
		have, err := os.ReadFile(*out)
		if err != nil || !bytes.Equal(have, data) {
			fmt.Fprintf(os.Stderr, "schemagen: %s is stale; run: go generate ./link/protocol\n", *out)
			os.Exit(1)
		}
		return
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "schemagen: %v\n", err)
		os.Exit(1)
	}
}

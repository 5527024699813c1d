package osproc

import (
	"os"
	"testing"

	"github.com/gemini-ide-companion/gemini-ide-companion/internal/testproc"
)

func TestMain(m *testing.M) {
	testproc.Main()
	os.Exit(m.Run())
}

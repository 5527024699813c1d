package companion

import (
	"errors"
	"fmt"
	"os"

	"github.com/rs/zerolog"

	"github.com/gemini-ide-companion/gemini-ide-companion/discovery"
)

// discoveryFile is the companion's discovery file: where Gemini CLI finds
// its port and token.
type discoveryFile struct {
	dir  string
	path string // "" while there is none
}

// write (re)writes the file for f, named after idePID, first removing the
// stale files of companions that are gone, and removes the one written
// before if its name changed. It returns the file's path, or why there is
// none: terminals with the companion's environment still connect.
func (d *discoveryFile) write(f discovery.File, idePID int, log zerolog.Logger) (string, error) {
	if removed, err := discovery.RemoveStale(d.dir, discovery.Alive); err != nil {
		log.Debug().Err(err).Msg("stale discovery files")
	} else if len(removed) > 0 {
		log.Info().Strs("files", removed).Msg("removed stale discovery files")
	}
	path, err := discovery.Write(d.dir, idePID, f)
	if err != nil {
		log.Warn().Err(err).Msg("no discovery file; terminals with the companion's environment still connect")
		path = ""
	}
	if d.path != "" && d.path != path {
		_ = os.Remove(d.path)
	}
	d.path = path
	return path, err
}

// remove deletes the file, if there is one.
func (d *discoveryFile) remove() error {
	path := d.path
	d.path = ""
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove discovery file: %w", err)
	}
	return nil
}

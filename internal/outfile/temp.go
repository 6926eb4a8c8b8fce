package outfile

import (
	"os"
	"sync"
)

// temps are the temporary files and directories this process made and
// has not removed yet (RemoveAtExit).
var temps struct {
	sync.Mutex
	paths map[string]bool
}

// RemoveAtExit registers path, a temporary file or directory this
// process made, and returns the function that removes it; RemoveTemps
// removes it where no deferred call runs.
func RemoveAtExit(path string) (remove func()) {
	temps.Lock()
	if temps.paths == nil {
		temps.paths = map[string]bool{}
	}
	temps.paths[path] = true
	temps.Unlock()
	return func() {
		temps.Lock()
		delete(temps.paths, path)
		temps.Unlock()
		os.RemoveAll(path) // ours: a unique name made by this process
	}
}

// RemoveTemps removes every temporary file and directory still
// registered, for an exit that runs no deferred calls.
func RemoveTemps() {
	temps.Lock()
	defer temps.Unlock()
	for p := range temps.paths {
		os.RemoveAll(p)
		delete(temps.paths, p)
	}
}

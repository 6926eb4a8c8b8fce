//go:build race

package main

// raceEnabled: under the race detector every process the tests start (the
// simulator is this binary) runs several times slower.
const raceEnabled = true

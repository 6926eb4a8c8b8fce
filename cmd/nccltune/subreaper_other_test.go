//go:build !linux

package main

// becomeSubreaper: only Linux lets a process adopt its descendants' orphans.
func becomeSubreaper() {}

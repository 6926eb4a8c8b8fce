// Package stored reads what a study stored, for the commands that review
// studies and for export, which share it: what NCCL chose per size with
// the defaults and with the recommendation (ExplainChoices). It reads
// records handed to it and writes nothing.
package stored

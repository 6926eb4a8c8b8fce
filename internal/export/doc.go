// Package export owns every output format of a recommendation: an env
// file for docker run --env-file, shell export lines, docker -e flags, a
// Kubernetes env list, JSON, and the CSV of NCCL's example tuner plugin,
// plus the table of what NCCL chose per size with its defaults and with
// the recommendation, side by side.
//
// It reads what a study concluded and what NCCL said it chose (the
// study's "explain" launches); it measures nothing and decides nothing.
// Every format says where its numbers came from, and a simulated study is
// labelled SIMULATED in every one of them.
//
// Render makes every file of an export before any is written (one per
// band; one for the tuner's CSV), and WriteFiles writes them to the file
// or directory --out names, through internal/outfile.
package export

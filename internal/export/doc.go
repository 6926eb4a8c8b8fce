// Package export owns every output format of a recommendation (env file,
// shell exports, docker -e flags, a Kubernetes env list, JSON, the CSV of
// NCCL's example tuner plugin) and the table of NCCL's per-size choices
// with its defaults and with the recommendation. It measures and decides
// nothing; every format says where its numbers came from and labels a
// simulated study SIMULATED. Render makes every file before any is
// written; WriteFiles writes them through internal/outfile.
package export

// Package record defines the small records the search makes and the store
// keeps, once: search and store name them through type aliases, so the
// store keeps the search's result without converting it. It imports
// neither.
package record

import "github.com/nccltune/nccltune/internal/nccl"

// PlanSummary is what a search did with NCCL's own plan.
type PlanSummary struct {
	// Read: NCCL's plan was read from a debug launch; Note says why not
	// (then no config was merged).
	Read         bool   `json:"read"`
	Note         string `json:"note,omitempty"`
	SpaceConfigs int    `json:"space_configs"` // configs of the search space
	// ConfigsExplored counts the configs launched while exploring;
	// PlansExplored the distinct plans they ran.
	ConfigsExplored int `json:"configs_explored"`
	PlansExplored   int `json:"plans_explored"`
	// Merged counts, per rule, configs NCCL provably runs like one tried;
	// MergedConfigs counts them once.
	Merged        []MergeCount `json:"merged"`
	MergedConfigs int          `json:"merged_configs"`
	// Refused counts configs that switch on what NCCL's defaults disabled.
	Refused int `json:"refused"`
	// WrongResults: per protocol or algorithm that gave wrong results, why
	// no later config allowing it was launched.
	WrongResults []string `json:"wrong_results,omitempty"`
	Checks       int      `json:"plan_checks"` // debug launches settling rules
}

// Site is one op at one size.
type Site struct {
	Op    nccl.Op `json:"op"`
	Bytes int64   `json:"bytes"`
}

// MergeCount is how many configs one rule merged.
type MergeCount struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

package fabric

// What only tests ask of a report.

// Codes returns the warning codes of a report in order, the codes tests compare.
func (r Report) Codes() []string {
	var out []string
	for _, w := range r.Warnings {
		out = append(out, w.Code)
	}
	return out
}

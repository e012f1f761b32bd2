package journal

import (
	"fmt"
	"strings"
)

// FieldError is a value orbit cannot take as given, in the domain's own
// terms: which field (as the JSON of a request names it: "category",
// "next_action"), the value, the values allowed, what is wrong. Each face
// renders it in its own: the CLI as a flag (--next-action), the API as the
// fields of a problem detail, an MCP tool as its argument.
type FieldError struct {
	Field string
	// Value is what was given ("" when the field is missing).
	Value string
	// Allowed are the values the field takes, when it is an enumeration.
	Allowed []string
	// Problem says what is wrong: "is required", "is not allowed", …
	Problem string
	// Suggest is the allowed value closest to Value, when one is close.
	Suggest string
}

func (e *FieldError) Error() string { return e.Render(e.Field) }

// Render phrases the error with the field called name (a flag, a JSON
// field).
func (e *FieldError) Render(name string) string {
	var b strings.Builder
	b.WriteString(name)
	if e.Value != "" {
		fmt.Fprintf(&b, " %q", e.Value)
	}
	b.WriteString(" " + e.Problem)
	if len(e.Allowed) > 0 {
		b.WriteString(" (allowed: " + strings.Join(e.Allowed, ", ") + ")")
	}
	if e.Suggest != "" {
		fmt.Fprintf(&b, "; did you mean %q?", e.Suggest)
	}
	return b.String()
}

// Required is the error of a required field left empty; why says what the
// field is for.
func Required(field, why string) *FieldError {
	p := "is required"
	if why != "" {
		p += ": " + why
	}
	return &FieldError{Field: field, Problem: p}
}

// ParseEnum returns the canonical spelling of v among allowed, whatever its
// case ("approved" is APPROVED, "LOW" is low); a value that is none of them
// is a *FieldError naming the closest one. An empty v is "" and no error
// (the caller decides whether the field is required).
func ParseEnum(field, v string, allowed []string) (string, error) {
	t := strings.TrimSpace(v)
	if t == "" {
		return "", nil
	}
	for _, a := range allowed {
		if strings.EqualFold(t, a) {
			return a, nil
		}
	}
	return "", &FieldError{Field: field, Value: v, Allowed: allowed, Problem: "is not allowed", Suggest: Closest(t, allowed)}
}

// Closest is the candidate nearest to s (edit distance at most 2, or a
// prefix of at least 3 letters either way, ignoring case), else "".
func Closest(s string, candidates []string) string {
	ls := strings.ToLower(s)
	best, bestD := "", 3
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if len(ls) >= 3 && (strings.HasPrefix(lc, ls) || strings.HasPrefix(ls, lc)) {
			return c
		}
		if d := distance(ls, lc); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b, in runes.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

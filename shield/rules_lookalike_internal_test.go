package shield

import "testing"

func TestEditDistance_Cases(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"react", "react", 0}, {"raect", "react", 1}, {"requets", "requests", 1}, {"abc", "xyz", 3}, {"expresss", "express", 1}, {"lodahs", "lodash", 1}, {"kitten", "sitting", 3}} {
		if got := editDistance(c.a, c.b, 2); min(got, 3) != min(c.want, 3) {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

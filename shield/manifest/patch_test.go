package manifest

import "testing"

func TestPatch_Targets(t *testing.T) {
	text := "From 1 Mon Sep 17 00:00:00 2001\nSubject: x\n\ndiff --git a/go.mod b/go.mod\n--- a/go.mod\n+++ b/go.mod\n@@ -1 +1,2 @@\n module x\n+replace a => b v1.0.0\n" +
		"diff --git a/old.md b/new.md\nrename from old.md\nrename to new.md\n" +
		"--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
	got := Patch(text, -1)
	want := []PatchFile{{"go.mod", "replace a => b v1.0.0\n"}, {"new.md", ""}, {"gone.txt", ""}}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := Patch("--- go.mod\n+++ go.mod\n+x\n", 0); len(got) != 1 || got[0].Path != "go.mod" {
		t.Errorf("-p0: %+v", got)
	}
}

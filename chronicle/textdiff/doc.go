// Package textdiff computes line-based diffs with the standard library
// only: the edit script between two versions of a file (Lines) and the
// unified diff GNU "diff -u" prints (Unified). "opx diff SNAPSHOT" uses it
// to show a file's recorded pre-state against its current content, and
// the HTML incident report colours the edit script.
//
// # Lines
//
// A line is a run of bytes ending in '\n', or the run after the last '\n'
// when the content does not end with one. "x" and "x\n" are different
// lines, as they are for diff; a "\r" is part of its line.
//
// # Format
//
// Unified prints what GNU diff 3.8 prints with -U context, except that the
// "---" and "+++" lines carry the names alone, without timestamps: hunks
// "@@ -a,b +c,d @@" with diff's range conventions, hunks merged when their
// contexts overlap or touch, deletions before insertions within a change,
// and "\ No newline at end of file" after a last line that lacks one.
// Content with a NUL byte or invalid UTF-8 on either side is not diffed:
// Unified prints "Binary files a and b differ" instead.
//
// # Invariants
//
//   - Unified returns "" exactly when the contents are equal, and applying
//     its diff to the old content yields the new one.
//   - The Text of Lines' Equal and Delete edits, joined in order, is the
//     old content; that of its Equal and Insert edits is the new content.
//   - The edit script is a shortest one (fewest lines deleted plus
//     inserted) unless a limit below is reached. Among shortest scripts it
//     picks the one GNU diff picks: lines found in one file only are set
//     aside before the search, and each block of changes is slid over
//     equal lines as diff slides it. GNU diff's own heuristics (and its
//     handling of very frequent lines) can still make it print another
//     script of the same length, rarely and only for ambiguous input.
//   - Output depends only on the inputs.
//
// # Cost
//
// The search is Myers' O((N+M)·D) algorithm for N and M lines and D
// changes, with his linear-space refinement (the middle snake, divide and
// conquer): memory is a few words per line, never O(N·M). A common head
// and tail cost one comparison per line, and lines found in one file only
// cost nothing in the search, so a wholly rewritten file is cheap.
//
// Two guards bound the time of pathological input, such as two unrelated
// files drawn from the same few lines, at the price of a script longer
// than the shortest (still correct):
//
//   - As in GNU diff, a search that reaches max(4096, √(N+M)) edits stops
//     and splits its region at the furthest point it reached.
//   - The whole diff may take 2^25 + 16·(N+M) steps (diagonal steps and
//     line comparisons; a few tenths of a second). Once they are spent,
//     every region not yet compared is reported as deleted then inserted
//     whole.
package textdiff

package shield

import (
	"strings"
)

// Data handed to a tracker (rules 13; docs/shield-rules.md
// "exfiltration:written-code"). Experiment trackers and error reporters
// upload what code hands them to their service (MLflow's
// log_artifact, Weights & Biases' save and log_artifact, Neptune's upload,
// Comet's log_asset, ClearML's upload_artifact, a Sentry attachment):
// the destination is configured elsewhere, so no new host shows in the
// change. Added code that hands one of them raw data, secrets or
// files outside the project's outputs (data/raw, data-raw, .env, keys,
// credentials, a path climbing out, a glob of data files) sends them out.

var (
	trackerUpload = mustRx(`(?i)\b(?:mlflow\.log_artifacts?|mlflow\.log_text|wandb\.save|wandb\.log_artifact|\w+\.log_artifact|artifact\.add_(?:file|dir)|neptune\b[^\n]*\.upload(?:_files)?|\w+\.log_asset(?:_folder)?|\w+\.upload_artifact|sentry_sdk\.add_attachment|scope\.add_attachment)\s*\(([^\n]{0,200})`)
	trackedData   = mustRx(`(?i)["'][^"'\n]*(?:data[/_-]?raw|raw[/_-]data|/raw/|\.env\b|secret|credential|\.pem|id_rsa|\.ssh/|\.\./|\*\.(?:csv|parquet|jsonl?|xlsx|db|sqlite))[^"'\n]*["']`)
)

// trackerData returns the call that hands data to a tracker, or "".
func trackerData(added, old string) string {
	plus, _ := diffLines(added, old)
	for _, l := range plus[:min(len(plus), 512)] {
		if !strings.Contains(l, "(") {
			continue
		}
		if m := trackerUpload.FindStringSubmatch(clipRaw(l, 4096)); m != nil && trackedData.MatchString(m[1]) {
			return strings.TrimSpace(m[0])
		}
	}
	return ""
}

// writtenTracker is `exfiltration:written-code` for data handed to a
// tracker.
func (s *Shield) writtenTracker(a *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok || testSource(p) || !writtenCode(p) {
			continue
		}
		added, old := textOf(f, p)
		if m := trackerData(added, old); m != "" {
			j.escalate("exfiltration:written-code", "%s writes code to %s that hands data to a tracker's service (%s): it uploads what it is given", toolName(a), s.relPath(p), clipText(m, 100))
			return
		}
	}
}

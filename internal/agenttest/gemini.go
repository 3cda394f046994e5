package agenttest

import "path/filepath"

// geminiSetup writes ~/.gemini/settings.json (API-key auth, no
// telemetry, no update check, hooks) and returns the environment and
// arguments of a headless run: gemini -p PROMPT --yolo --output-format json.
func geminiSetup(home string, srv *Server, o Options, env []string) ([]string, []string, error) {
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
	}
	if len(o.Hooks) > 0 {
		settings["hooksConfig"] = map[string]any{"enabled": true}
		settings["hooks"] = hooksJSON(o.Hooks, true)
	}
	if err := writeJSON(filepath.Join(home, ".gemini", "settings.json"), settings); err != nil {
		return nil, nil, err
	}
	env = append(env,
		"GEMINI_API_KEY=opx-test-key",
		"GOOGLE_GEMINI_BASE_URL="+srv.URL,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	)
	return env, []string{"-p", o.Prompt, "--yolo", "--output-format", "json"}, nil
}

package llm

import (
	"fmt"
	"path/filepath"

	"github.com/opx-dev/opx/engine/config"
	"github.com/opx-dev/opx/fixtures"
	"github.com/opx-dev/opx/internal/regularfile"
)

// maxTranscriptBytes bounds a scripted transcript file read from the
// workspace's configuration.
const maxTranscriptBytes = 16 << 20

// FromConfig builds the model provider a workspace's configuration names.
// The scripted provider is the default: it follows the configured
// transcript (relative to the workspace) or the built-in default one, so
// everything works offline.
func FromConfig(c config.Provider, workspace string) (Provider, error) {
	switch c.Kind {
	case config.ProviderScripted, "":
		b := fixtures.DefaultTranscript
		if c.Transcript != "" {
			path := c.Transcript
			if !filepath.IsAbs(path) {
				path = filepath.Join(workspace, path)
			}
			var err error
			if b, err = regularfile.Read(path, maxTranscriptBytes); err != nil {
				return nil, fmt.Errorf("provider.transcript: %w", err)
			}
		}
		t, err := ParseTranscript(b)
		if err != nil {
			return nil, fmt.Errorf("provider.transcript: %w", err)
		}
		return NewScripted(t), nil
	case config.ProviderOpenAI:
		key, err := c.APIKey()
		if err != nil {
			return nil, err
		}
		return NewOpenAI(OpenAIConfig{BaseURL: c.BaseURL, APIKey: key, Model: c.Model})
	case config.ProviderAnthropic:
		key, err := c.APIKey()
		if err != nil {
			return nil, err
		}
		return NewAnthropic(AnthropicConfig{BaseURL: c.BaseURL, APIKey: key, Model: c.Model, MaxTokens: c.MaxTokens})
	default:
		return nil, fmt.Errorf("provider kind %q: want scripted, openai or anthropic", c.Kind)
	}
}

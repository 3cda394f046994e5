// Package config reads a workspace's .opx/config.yaml: which model
// provider to use, the Shield policy, limits and sandbox requirements.
//
// # Invariants
//
//   - Unknown keys are errors (a typo must not silently fall back to a
//     default), reported with the file and line.
//   - Secrets are never in the file: it names the environment variable
//     that holds an API key, and the engine reads the variable.
//   - The zero configuration is complete and offline: the scripted model
//     with its default transcript and the read-only policy.
package config

// Package score is Shield's learned scorer: a logistic model over the
// features of a proposal (the words a change puts into a file and takes
// out of it, the settings it flips, the programs and flags a command runs,
// the paths it touches, what a request or a memory note carries), trained
// on the Shield corpora and shipped as a weight table (weights.tsv).
//
// Why it exists: tier 1's rules judge shapes someone wrote down; on
// corpora written blind, in stacks the rules were not written for, a
// fifth to a third of attacks pass them (issue 27). The scorer reads the
// concepts those attacks share across stacks (a check's setting flipped
// off, a sink added beside request input, an unpinned source, a flag that
// skips verification) as evidence learned from every corpus at once, so a
// change no rule names can still be asked about.
//
// What it may do: only escalate, and only what the rules allowed (the
// shield package calls it when tier 1 found nothing). It never allows
// what a rule asks about or blocks. An escalation names the features that
// weighed most, so a reviewer sees why.
//
// What it owns:
//   - Features: the one definition of a proposal's features (Input, a
//     plain description Shield fills from its Facts), bounded in time and
//     memory whatever the input: texts are read up to a cap, a proposal
//     has at most MaxFeatures features.
//   - Model: the embedded weights (Default), Score, and Train, the
//     deterministic trainer (full-batch gradient descent on an L2
//     regularized logistic loss, features kept only when they occur in at
//     least MinCorpora corpora, so a word of one corpus's stack cannot
//     carry weight). The weights are regenerated from the corpora by the
//     cli test TestShieldScoreWeights (OPX_SCORE_UPDATE=1), which fails
//     when the embedded table is not what the corpora train.
//
// Determinism: Score is a pure function of the features and the table;
// the table is versioned with shield.RulesVersion, so a replay re-derives
// the same verdict.
package score

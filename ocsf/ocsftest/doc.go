// Package ocsftest validates OCSF events against the OCSF schema's own
// JSON definitions (ocsf/testdata/schema, copied from
// github.com/ocsf/ocsf-schema with its licence), for the tests of every
// package that writes OCSF: it resolves a class as the schema does (its
// parents up to base_event, the profiles it $includes, each object with
// the objects it extends, types, array-ness and enums from the
// dictionary) and checks each event against the result.
//
// # Invariants
//
//   - It reads only the schema files it is given; a file missing there is
//     an error, never a pass.
//   - Validate reports every problem it finds in an event, never only the
//     first.
package ocsftest

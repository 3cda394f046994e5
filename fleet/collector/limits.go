package collector

import "time"

// Bounds (invariant 9). The reorder buffer takes the resends of a
// shipper after a failed publish (fleet/ship's window: 256 messages,
// 16 MiB), four times over.
const (
	// ReorderEntries and ReorderBytes bound the entries held per source
	// while an earlier one is missing; beyond them the source has a gap.
	ReorderEntries = 1024
	ReorderBytes   = 64 << 20
	// TotalHeldBytes bounds what every source holds at once (reorder
	// buffers and parts being assembled); a source that would pass it
	// has a gap (entries) or a bad blob (blobs).
	TotalHeldBytes = 512 << 20
	// TotalHeldEntries bounds the entries every reorder buffer holds at
	// once, unacknowledged: a quarter of the consumer's maxAckPending
	// (with the messages deferred for fairness, at most half of it,
	// fair.go), so that JetStream always has room to deliver the entry
	// they wait for.
	TotalHeldEntries = maxAckPending / 4
	// MaxCollectedBlob bounds the stored frame of a blob the collector
	// assembles from parts (a source holds at most that much while one
	// arrives; a larger one is a bad-blob alert, and the mirror lacks
	// it, which its verify then reports). Joining the parts holds it
	// twice for a moment.
	MaxCollectedBlob = TotalHeldBytes / 2
	// MaxPendingBytes bounds the records verified and journaled that
	// wait, in memory, to be written to their mirrors: beyond it the
	// collector takes no more messages until the mirrors caught up.
	MaxPendingBytes = 256 << 20
	// DefaultMaxOpenMirrors is Config.MaxOpenMirrors's least default:
	// with the collector's own files and connections, well within the
	// 1024 descriptors of a default soft limit. Under a higher limit the
	// default is a quarter of it, at most MaxDefaultOpenMirrors
	// (defaultMaxOpenMirrors): a mirror closed and opened again costs a
	// bbolt open and the rehash of its tree's edge (up to 255 entries),
	// which 1,000 busy sources over 256 open mirrors paid on every write.
	DefaultMaxOpenMirrors = 256
	MaxDefaultOpenMirrors = 4096
	// DefaultMaxSources is Config.MaxSources's default; tooManyEvery
	// bounds its alerts.
	DefaultMaxSources = 10000
	tooManyEvery      = 10 * time.Minute
	// DefaultResendAfter is Config.ResendAfter's default.
	DefaultResendAfter = 5 * time.Second
	// DefaultWitnessAheadAfter is Config.WitnessAheadAfter's default: as
	// long as an entry may wait for an earlier one.
	DefaultWitnessAheadAfter = GapAfter
	// GapAfter is how long an entry may wait for an earlier one before
	// the source has a gap.
	GapAfter = 2 * time.Minute
	// MaxAlertsPerKind bounds the alerts recorded per source and kind;
	// later ones are counted in the status, not recorded.
	MaxAlertsPerKind = 100
	// StatusAlerts is how many of the latest alerts the status file
	// holds (the collector ledger holds them all).
	StatusAlerts = 1000
	// maxBatch and maxBatchBytes bound the messages handled between two
	// commits.
	maxBatch      = 2048
	maxBatchBytes = 32 << 20
	// maxAckPending is the consumer's bound on unacknowledged messages:
	// far above what the reorder buffers and the messages deferred for
	// fairness may hold, so that the entry that fills a gap is always
	// delivered.
	maxAckPending = 256 << 10
	// ackWait is how long JetStream waits for an ack before it delivers
	// a message again. It is also how long a delivery lost on the way
	// (a collector killed with messages in hand, a consumer leader that
	// died in a cluster) goes unnoticed when nothing comes after it to
	// ask for a resend: short enough to be recovery rather than an
	// outage, long enough that a batch is acknowledged well within it
	// (acks follow the journal's fsync; messages waiting behind the
	// back-pressure may come twice, and the copy is dropped).
	ackWait = 30 * time.Second
	// pullExpires is how long one pull request waits on the server
	// (nats.go's default; heartbeats every half of it).
	pullExpires = 30 * time.Second
	// statusEvery bounds how often the status file is rewritten.
	statusEvery = 250 * time.Millisecond
	// sweepEvery is how often the run loop goes over every source for
	// what waits on time (stalls, gaps, resends, messages held kept
	// alive; bounds of seconds to minutes): with 10,000 sources, every
	// statusEvery cost it more than the entries it took.
	sweepEvery = time.Second
	// statusCostShare: the status is rewritten at most once per this many
	// times what its last write took (10,000 sources: a status of some
	// MB, ~100 ms to write), so it costs the run loop at most 1/50 of its
	// time whatever the number of sources.
	statusCostShare = 50
)
